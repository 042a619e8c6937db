"""Facts about Triton-distributed kernels that the ASC4xx rules share.

The per-file entry points: the analysis of one kernel (``for_kernel``, built once on the first request of any
ASC4xx rule, see ``distributed_values``), the distributed kernels of a module with the program-id parameters
linked between kernels and their helpers, whether the module targets a GPU backend, and the kernels that wait on
memory another program writes (read by the engine). The call vocabulary is ``distributed_calls``; the
producer/consumer facts ``signal_protocol``; ranks and ring loops ``rank_loops``.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from .context import FileContext
from .module_facts import Kernel, ModuleFacts
from .syntax import is_integer
from ..text.lazy_regex import lazy
from .distributed_calls import PROGRAM_WAITS, call_argument
from .distributed_values import DistAnalysis


def for_kernel(context: FileContext, kernel: Kernel) -> DistAnalysis:
    """The shared ``DistAnalysis`` of ``kernel`` in this file (built on first request)."""
    return context.memo(
        ("dist", id(kernel.node)),
        lambda: DistAnalysis(kernel, context.facts, context.index, context.analysis(kernel),
                             context.memo(("dist-gpu-backend",), lambda: targets_other_backend(context))),
    )


def distributed_kernels(context: FileContext) -> list[DistAnalysis]:
    """Analyses of the kernels that call Triton-distributed or libshmem_device functions (others are skipped)."""
    facts = context.facts
    if not imports_distributed(facts):
        return []
    found = [for_kernel(context, kernel) for kernel in facts.kernels.values()]
    context.memo(("dist-program-params",), lambda: _link_program_params(context, found))
    return [d for d in found if any(n.startswith(("dl.", "shmem.")) for n in d.calls)]


_PROGRAM_ID_NAME = lazy(r"^(pid|program_id|\w+_pid)$")


def _link_program_params(context: FileContext, analyses: list[DistAnalysis]) -> bool:
    """Mark the helper parameters that receive a program id from some call in this module.

    `helper(pid, ...)` with `pid = tl.program_id(0)` makes `pid` a program id inside `helper` too, so a helper
    looping `for task in range(pid, n, n_programs)` is as partitioned as the kernel that calls it. A helper that
    this module neither calls nor launches is assumed to take a program id in a parameter named `pid` (or `*_pid`).
    """
    by_name = {d.kernel.name: d for d in analyses}
    called = {launch.kernel.name for launch in context.facts.launches if launch.kernel is not None}
    for dist in analyses:
        called.update(name[len("local."):] for name in dist.calls if name.startswith("local."))
    for name, dist in by_name.items():
        if name not in called:
            dist.program_params.update(p for p in dist.kernel.params if _PROGRAM_ID_NAME.match(p))
    changed = True
    while changed:
        changed = False
        for caller in analyses:
            for name, calls in caller.calls.items():
                helper = by_name.get(name[len("local."):]) if name.startswith("local.") else None
                if helper is None or helper is caller:
                    continue
                for call in calls:
                    for param, value in _bound_arguments(helper.kernel, call):
                        if param not in helper.program_params and caller.depends_on_program_id(value):
                            helper.program_params.add(param)
                            changed = True
    _link_single_program_helpers(context, analyses, by_name)
    return True


def _link_single_program_helpers(context: FileContext, analyses: list, by_name: dict) -> None:
    """Mark the helpers that only ever run on one program: every call of them in this module sits under a guard
    that selects single programs (``if (sub_vec_id() == 0) & (pid == 0):``) or in a function that does.
    A launched kernel runs on one program when every launch of it does (``kernels_launched_on_one_program``)."""
    launched = {launch.kernel.name for launch in context.facts.launches if launch.kernel is not None}
    for name in kernels_launched_on_one_program(context.facts):
        if name in by_name:
            by_name[name].single_program = True
    sites: dict[str, list[tuple[DistAnalysis, cst.Call]]] = {}
    for caller in analyses:
        for name, calls in caller.calls.items():
            if name.startswith("local.") and name[len("local."):] in by_name:
                sites.setdefault(name[len("local."):], []).extend((caller, call) for call in calls)
    changed = True
    while changed:
        changed = False
        for name, calls in sites.items():
            helper = by_name[name]
            if helper.single_program or name in launched:
                continue
            if all(caller is not helper and (caller.single_program or any(
                    caller.selects_single_programs(g.test) for g in caller.guards(call))) for caller, call in calls):
                helper.single_program = True
                changed = True


def bound_arguments(kernel: Kernel, call: cst.Call) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of a call of the jit function ``kernel``, positional and keyword."""
    return _bound_arguments(kernel, call)


def _bound_arguments(kernel: Kernel, call: cst.Call) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of a call of `kernel`, positional and keyword."""
    position = 0
    for arg in call.args:
        if arg.star:
            return
        if arg.keyword is not None:
            if arg.keyword.value in kernel.params:
                yield arg.keyword.value, arg.value
        elif position < len(kernel.params):
            yield kernel.params[position], arg.value
            position += 1


def imports_distributed(facts: ModuleFacts) -> bool:
    """The module imports Triton-distributed or libshmem_device under some name."""
    return any(full.startswith("triton_dist") or "libshmem_device" in full for full in facts.aliases.values())


def kernels_launched_on_one_program(facts: ModuleFacts) -> set[str]:
    """Kernels that this module launches, always on a grid of one program (`(1,)`, `[1]`, `1`, or a name the
    launching function refuses to hold anything else: `if n != 1: raise ...` before `kernel[(n, 1, 1)]`)."""
    grids: dict[str, list[bool]] = {}
    for launch in facts.launches:
        if launch.kernel is not None:
            grids.setdefault(launch.kernel.name, []).append(_one_program(facts, launch))
    return {name for name, ones in grids.items() if all(ones)}


def _one_program(facts: ModuleFacts, launch) -> bool:
    grid = launch.grid
    axes = [element.value for element in grid.elements] if type(grid) in (cst.Tuple, cst.List) else [grid]
    return all(is_integer(axis, 1) or _pinned_to_one(facts, launch.call, axis) for axis in axes)


def _pinned_to_one(facts: ModuleFacts, call: cst.Call, axis: cst.BaseExpression) -> bool:
    """``axis`` is a name the host function holding the launch raises on unless it is 1 (`if n != 1: raise`,
    earlier in the function's own body)."""
    if type(axis) is not cst.Name:
        return False
    function = next((a for a in facts.index.ancestors(call) if type(a) is cst.FunctionDef), None)
    if function is None or type(function.body) is not cst.IndentedBlock:
        return False
    for statement in function.body.body:
        if facts.index.order(statement) > facts.index.order(call):
            break
        if type(statement) is not cst.If or statement.orelse is not None:
            continue
        test = statement.test
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            continue
        if type(test.comparisons[0].operator) is not cst.NotEqual:
            continue
        sides = (test.left, test.comparisons[0].comparator)
        names = [side for side in sides if type(side) is cst.Name and side.value == axis.value]
        if len(names) != 1 or not any(is_integer(side, 1) for side in sides):
            continue
        body = statement.body.body if type(statement.body) is cst.IndentedBlock else [statement.body]
        if any(type(small) is cst.Raise for line in body if type(line) is cst.SimpleStatementLine
               for small in line.body):
            return True
    return False


_OTHER_BACKEND = lazy(
    r"(^|[._/\\])(cuda|nvidia|nvshmem|hip|amd|rocshmem|pyrocshmem|maca|metax|mxshmem)([._/\\]|$)")


def targets_other_backend(context: FileContext) -> bool:
    """The module is written for a GPU backend of Triton-distributed (CUDA/NVSHMEM, HIP/ROCSHMEM, MACA), by its
    imports or its path: rules about Ascend hardware facts do not apply to it."""
    if any(_OTHER_BACKEND.search(full) for full in context.facts.aliases.values()):
        return True
    return bool(_OTHER_BACKEND.search(context.filename.replace("\\", "/")))


_SPIN_ATOMICS = frozenset({"tl.atomic_cas", "tl.atomic_xchg", "tl.atomic_add"})


def waiting_kernels(context: FileContext) -> set[str]:
    """Kernels that wait on other programs themselves or through the `triton.jit` helpers they call."""
    kernels = context.facts.kernels
    if not kernels or not imports_distributed(context.facts) and not context.index.of_type(cst.While):
        return set()
    analyses = {name: for_kernel(context, kernel) for name, kernel in kernels.items()}
    waiting = {name for name, dist in analyses.items() if dist.has_call(*PROGRAM_WAITS) or _spins_on_memory(dist)}
    changed = True
    while changed:
        changed = False
        for name, dist in analyses.items():
            if name not in waiting and any(f"local.{helper}" in dist.calls for helper in waiting):
                waiting.add(name)
                changed = True
    return waiting


def _spins_on_memory(dist: DistAnalysis) -> bool:
    """A `while` loop that polls memory other programs write (volatile load or atomic in its test or body)."""
    for loop in dist.nodes:
        if type(loop) is not cst.While:
            continue
        for node in dist.below(loop):
            if type(node) is not cst.Call:
                continue
            name = dist.qualname_of(node)
            if name in _SPIN_ATOMICS:
                return True
            volatile = call_argument(node, 99, "volatile")
            if name == "tl.load" and type(volatile) is cst.Name and volatile.value == "True":
                return True
    return False
