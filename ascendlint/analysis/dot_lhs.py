"""The left operands of ``tl.dot`` that are read again after the dot (ASC301, ASC306), computed once per kernel.

On Ascend the cube unit may overwrite a dot's left operand in UB. Each dot whose left operand is a name gets the
later reads that see the tile the dot may have clobbered: later statements, later loop iterations (the dot's own
operand read again on the next iteration included), later in the dot's own statement. Reads inside the same
``tl.dot`` call, metadata reads (``.dtype``, ``.shape``) and reads in the other arm of a compile-time ``if`` (only
one arm is compiled, so a loop around the ``if`` never takes both) do not count.

``loop_carried_only`` marks the one uncertain case (RULES.md ASC301): the tile is read again only as the left
operand of dots on later loop iterations: this same dot on the next iteration of a loop around it (a query tile
loaded once before a KV loop and passed as the left operand of one dot per iteration, and nothing else), or dots
in later loops that do not hold this one (the second, on-band pass of a two-stage attention). triton-ascend's own
fused-attention tutorial is written both ways and passes its accuracy test on the NPU, so that case is reported
apart (ASC306, opt-in). A second dot later in the same iteration, or in straight-line code, stays certain.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .syntax import argument

_METADATA_ATTRIBUTES = {"dtype", "shape", "type", "ndim", "numel"}


@dataclass(frozen=True)
class LhsReuse:
    call: cst.Call  # the tl.dot
    lhs: cst.Name  # its left operand
    reads: tuple[cst.Name, ...]  # the later reads that see what the dot may have left in the tile
    loop_carried_only: bool  # every such read is a dot's left operand on a later loop iteration
    certain: tuple[cst.Name, ...] = ()  # the reads that are not: the ones a report names first


def lhs_reuses(context, kernel) -> list[LhsReuse]:
    """Every dot of ``kernel`` whose left operand is read again, in kernel order (memoised per file)."""
    return context.memo(("dot-lhs-reuses", id(kernel.node)), lambda: _find(context, kernel))


def _find(context, kernel) -> list[LhsReuse]:
    facts = context.facts
    analysis = context.analysis(kernel)
    dots = []
    for call in analysis.nodes:
        if facts.is_call_to(call, "tl.dot"):
            lhs = argument(call, 0, "input")
            if type(lhs) is cst.Name:
                dots.append((call, lhs))
    if not dots:
        return []
    later = analysis.later_reads([lhs for _, lhs in dots])
    found = []
    for call, lhs in dots:
        reads = [r for r in later[id(lhs)] if r is lhs or _counts(analysis, call, r)]
        reads += [r for r in _same_statement_reads(analysis, call, lhs) if _counts(analysis, call, r)]
        # a read in the other arm of a compile-time `if` never follows the dot: only one arm is compiled
        reads = [r for r in reads if not analysis.compile_time_exclusive(call, r)]
        if reads:
            certain = tuple(r for r in reads
                            if r is not lhs and not _left_operand_in_another_loop(analysis, facts, call, r))
            found.append(LhsReuse(call, lhs, tuple(reads), not certain, certain))
    return found


def _left_operand_in_another_loop(analysis, facts, dot: cst.Call, read: cst.Name) -> bool:
    """``read`` is the left operand of a ``tl.dot`` inside a loop that does not hold ``dot``: each of that loop's
    iterations passes the tile to one dot, as a loop around ``dot`` does on its next iteration."""
    arg = analysis.index.parent(read)
    call = analysis.index.parent(arg) if type(arg) is cst.Arg else None
    if type(call) is not cst.Call or not facts.is_call_to(call, "tl.dot") or argument(call, 0, "input") is not read:
        return False
    holds_dot = {id(a) for a in analysis.index.ancestors(dot) if type(a) in (cst.For, cst.While)}
    loops = [a for a in analysis.index.ancestors(read) if type(a) in (cst.For, cst.While)]
    return bool(loops) and id(loops[0]) not in holds_dot


def _counts(analysis, dot: cst.Call, read: cst.Name) -> bool:
    """A read that sees the clobbered tile: not metadata, not another operand of the same dot (the dot's own
    left operand read again on the next loop iteration does count)."""
    parent = analysis.index.parent(read)
    if type(parent) is cst.Attribute and parent.value is read and parent.attr.value in _METADATA_ATTRIBUTES:
        return False
    return not any(a is dot for a in analysis.index.ancestors(read))


def _same_statement_reads(analysis, dot: cst.Call, lhs: cst.Name) -> list[cst.Name]:
    """Reads of the name later in the statement holding the dot (evaluated after it)."""
    statement = analysis.statement_of(dot)
    after = analysis.index.order(dot)
    return [
        r
        for r in analysis.reads.get(lhs.value, ())
        if analysis.index.order(r) > after and analysis.statement_of(r) is statement
    ]
