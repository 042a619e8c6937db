"""Ranks and ring loops in distributed kernels: which values name the calling rank or count ranks, which loop
names advance each iteration, and which values differ from program to program.

Serves the distributed rules that ask whether a peer index walks the ring (``(rank + i) % world_size``) or whether
a value is the same on every program (ASC402, ASC406, ASC409, ASC417, ASC419).
"""

from __future__ import annotations

import re

import libcst as cst

from ..text.lazy_regex import lazy
from .distributed_calls import MAPPING_CALLS, RANK_COUNTS, RANK_IDS, UDMA_CALLS, udma_remote_operand
from .distributed_values import DistAnalysis


# Kernel parameters whose names say they hold the calling rank (`rank`, `my_pe`, `local_rank`...).
# Either case: constexpr spellings (`LOCAL_RANK`, `WORLD_SIZE: tl.constexpr`) say the same.
_RANK_PARAM = lazy(r"^(rank|my_rank|my_pe|pe_id|rank_id|local_rank|cur_rank|this_rank)$", re.IGNORECASE)


_RANK_COUNT_PARAM = lazy(
    r"^(n_?ranks|num_ranks|world_size|world|rank_size|n_?pes|npes|num_pes|nranks)$", re.IGNORECASE)


def iteration_names(dist: DistAnalysis, loops: list) -> set[str]:
    """Names that change from one iteration to the next: `for` targets and names assigned in `while` bodies."""
    names: set[str] = set()
    for loop in loops:
        if type(loop) is cst.For:
            names.update(n.value for n in (loop.target, *dist.below(loop.target)) if type(n) is cst.Name)
        else:
            for node in dist.below(loop.body):
                if type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign):
                    targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
                    names.update(t.value for t in targets if type(t) is cst.Name)
    return names


def loop_counters(dist: DistAnalysis, loop: cst.CSTNode) -> set[str]:
    """Names a loop's body steps with an augmented assignment (``msg += 1``): counters that advance with it."""
    return {node.target.value for node in dist.below(loop.body)
            if type(node) is cst.AugAssign and type(node.target) is cst.Name}


def advancing_names(dist: DistAnalysis, loop: cst.CSTNode) -> set[str]:
    """What changes from one iteration of ``loop`` to the next: its iteration names and its counters."""
    return iteration_names(dist, [loop]) | loop_counters(dist, loop)


def ring_loop(dist: DistAnalysis, node: cst.CSTNode, slot: cst.BaseExpression) -> cst.CSTNode | None:
    """The innermost loop around ``node`` that a ring index of ``slot`` advances with (``i % buffer_num``, or a
    counter stepped in the loop, ``msg % buffer_num`` with ``msg += 1``).

    A modulo by the rank count picks a peer, not a buffer, and does not count. None: ``slot`` is no ring slot.
    """
    rings = [index for index, size in dist.modulo_operands(slot) if not dist.derives_from_call(size, RANK_COUNTS)]
    if not rings:
        return None
    for loop in dist.enclosing_loops(node):
        advancing = advancing_names(dist, loop)
        if any(dist.depends_on(index, advancing) for index in rings):
            return loop
    return None


def is_rank_identity(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """``expr`` is the calling rank: ``dl.rank()``, ``my_pe()``, a name bound only to those, or a kernel
    parameter named like ``rank``/``my_pe``."""
    if type(expr) is cst.Call:
        return dist.qualname_of(expr) in RANK_IDS
    if type(expr) is cst.Name:
        values = dist.assigned_values(expr)
        if values is None:
            return bool(_RANK_PARAM.match(expr.value)) and expr.value in dist.kernel.params
        return bool(values) and all(is_rank_identity(dist, value) for value in values)
    return False


def counts_ranks(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """``expr`` is (derived from) the number of ranks: ``dl.num_ranks()``, ``n_pes()`` or a parameter named so."""
    if dist.derives_from_call(expr, RANK_COUNTS):
        return True
    return any(
        d.kind == "param" and _RANK_COUNT_PARAM.match(d.name)
        for d in dist.definitions_reaching(expr)
    ) or (type(expr) is cst.Name and bool(_RANK_COUNT_PARAM.match(expr.value)))


def depends_on_rank(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """Derived from the calling rank (``dl.rank()``, ``my_pe()`` or a rank-named kernel parameter)."""
    if dist.derives_from_call(expr, RANK_IDS):
        return True
    return any(d.kind == "param" and _RANK_PARAM.match(d.name) for d in dist.definitions_reaching(expr)) or (
        type(expr) is cst.Name and expr.value in dist.kernel.params and bool(_RANK_PARAM.match(expr.value)))


def varies_per_program(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """Different programs or ranks compute different values: derived from the program id, the rank, or a loop
    whose iterable is partitioned by program id."""
    if dist.depends_on_program_id(expr) or depends_on_rank(dist, expr):
        return True
    for definition in dist.definitions_reaching(expr):
        if definition.kind == "loop" and definition.value is not None and dist.depends_on_program_id(definition.value):
            return True
    return False


def symmetric_params(dist: DistAnalysis) -> set[str]:
    """Kernel parameters used as symmetric memory: mapped by ``symm_at``/``remote_ptr`` or moved by UDMA."""
    found: set[str] = set()
    for call in dist.calls_to(*MAPPING_CALLS, *UDMA_CALLS):
        name = dist.qualname_of(call)
        operand = call.args[0].value if name in MAPPING_CALLS and call.args else None
        if name in UDMA_CALLS:
            operand = udma_remote_operand(call, name)
        root = dist.pointer_root(operand) if operand is not None else None
        if root is not None:
            found.add(root)
    return found
