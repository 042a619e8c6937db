"""Core-grid task loops: ``for task in range(core_id, n_tasks, n_cores)`` (or ``tl.range``) in a kernel.

With a fixed grid of one program per AI core, each program walks its share of the tasks in such a loop: the start
follows ``tl.program_id`` and the step is not the literal 1. Rules about values carried from one task to the next
(ASC204's pointers, ASC205's scalars) share this one definition. A contiguous share,
``for task in range(start, start + per_core)`` with both bounds following the program id, is the other way a
program walks its tasks (``is_core_share_loop``).
"""

from __future__ import annotations

import libcst as cst

from .module_facts import ModuleFacts

TASK_LOOP_CALLS = frozenset({"range", "tl.range"})


def range_arguments(facts: ModuleFacts, loop: cst.For) -> list[cst.BaseExpression] | None:
    """The positional arguments of the ``range`` / ``tl.range`` a ``for`` iterates, or None for other loops."""
    call = loop.iter
    if type(call) is not cst.Call:
        return None
    name = facts.qualname(call.func) or (call.func.value if type(call.func) is cst.Name else "")
    if name not in TASK_LOOP_CALLS:
        return None
    return [a.value for a in call.args if a.keyword is None]


def is_task_loop(facts: ModuleFacts, analysis, loop: cst.For) -> bool:
    """``loop`` is a core-grid task loop of the kernel ``analysis`` describes (a ``values.KernelAnalysis``)."""
    positional = range_arguments(facts, loop)
    if positional is None or len(positional) != 3:
        return False
    start, _, step = positional
    return analysis.derives_from_program_id(start) and not (type(step) is cst.Integer and step.value == "1")


def is_core_share_loop(facts: ModuleFacts, analysis, loop: cst.For) -> bool:
    """``loop`` walks a contiguous share of the tasks: ``range(start, stop)`` (step 1 if given) with both bounds
    following ``tl.program_id`` (``start = core * per_core``, ``stop = start + per_core``)."""
    positional = range_arguments(facts, loop)
    if positional is None or len(positional) not in (2, 3):
        return False
    if len(positional) == 3 and not (type(positional[2]) is cst.Integer and positional[2].value == "1"):
        return False
    return analysis.derives_from_program_id(positional[0]) and analysis.derives_from_program_id(positional[1])


def walks_tasks(facts: ModuleFacts, analysis, loop: cst.For) -> bool:
    """``loop`` is how a program of a core grid walks its tasks: strided (``is_task_loop``) or a contiguous share."""
    return is_task_loop(facts, analysis, loop) or is_core_share_loop(facts, analysis, loop)
