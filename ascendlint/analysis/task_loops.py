"""Core-grid task loops: ``for task in range(core_id, n_tasks, n_cores)`` (or ``tl.range``) in a kernel.

With a fixed grid of one program per AI core, each program walks its share of the tasks in such a loop: the start
follows ``tl.program_id`` and the step is not the literal 1. Rules about values carried from one task to the next
(ASC204's pointers, ASC205's scalars) share this one definition.
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
