"""The size at which a grid passes 65535 programs, in the host's own names, for the grid-size findings.

A reviewer decides a grid finding from its threshold: "passes 65535 programs once `T` > 1,048,560 (`cdiv(T, 16)` x
`B * H`, with `B * H` >= 1)". The growing factor the finding blames is solved for the smallest size that passes the
limit, the literal factors of the grid taken at their value and every other factor at 1 (the threshold holds for
any value of those; larger ones only bring it closer).
"""

from __future__ import annotations

import libcst as cst

from .grid_factors import Factor, Kind, LaunchGrid, division_parts

LIMIT = 65535


def literal_int(node) -> int | None:
    if type(node) is cst.Integer:
        return int(node.value, 0)
    return None


def grid_threshold(grid: LaunchGrid, primary: Factor, text) -> str | None:
    """``it passes 65535 programs once <extent> > <size> (<product>, with <others> >= 1)``, or None when the literal
    factors alone already pass the limit. ``text`` renders a node as the message shows it; an axis that is the
    blamed factor alone keeps the host name it is written with (`rows`, not what `rows` was assigned)."""
    literal = 1
    others: list[Factor] = []
    for factor in grid.factors:
        if factor is primary:
            continue
        if factor.kind is Kind.LITERAL and factor.value is not None:
            literal *= factor.value
        else:
            others.append(factor)
    room = LIMIT // literal  # the most programs the blamed factor may count
    if room < 1:
        return None
    written = _written(grid, primary, text)
    condition = _condition(primary, room, text, written)
    named = {id(f): _written(grid, f, text) or text(f.expr) for f in others}
    product = " x ".join([f"`{written or text(primary.expr)}`", *(f"`{named[id(f)]}`" for f in others),
                          *([str(literal)] if literal > 1 else [])])
    at_one = [f"`{named[id(f)]}`" for f in others]
    tail = f", with {', '.join(at_one)} >= 1" if at_one else ""
    if not others and literal == 1:
        return f"it passes 65535 programs once {condition}"
    return f"it passes 65535 programs once {condition} ({product}{tail})"


def _written(grid: LaunchGrid, primary: Factor, text) -> str | None:
    """The launch's own spelling of the axis that is ``primary`` alone, when it is a plain host name."""
    if grid.axes is None or grid.expr is None:
        return None
    elements = grid.expr.elements if type(grid.expr) in (cst.Tuple, cst.List) else [grid.expr]
    for axis, element in zip(grid.axes, elements):
        node = element.value if isinstance(element, cst.BaseElement) else element
        if len(axis) == 1 and axis[0] is primary and type(node) is cst.Name:
            return text(node)
        leaves = _product_leaves(node)  # `B * H`: one host name per factor, in order
        if len(leaves) == len(axis) > 1 and all(type(leaf) is cst.Name for leaf in leaves):
            for factor, leaf in zip(axis, leaves):
                if factor is primary:
                    return text(leaf)
    return None


def _product_leaves(node) -> list:
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply:
        return _product_leaves(node.left) + _product_leaves(node.right)
    return [node]


def _condition(primary: Factor, room: int, text, written: str | None = None) -> str:
    """``cdiv(n, t) > room`` exactly when ``n > room * t``; a plain extent passes at ``room + 1``. A conditional
    expression (``len(idx) if varlen else cdiv(T, 16)``) passes on either side: both thresholds."""
    if type(primary.expr) is cst.IfExp:
        sides = [_side(primary, side) for side in (primary.expr.body, primary.expr.orelse)]
        return " or ".join(_condition(side, room, text) for side in sides)
    parts = division_parts(primary.expr) if primary.kind in (Kind.TILE_COUNT, Kind.TOTAL_SIZE) else None
    if parts is None:
        return f"`{written or text(primary.expr)}` > {room:,}"
    dividend, divisor = parts
    tile = literal_int(divisor)
    if tile is None and primary.tile is not None:
        return f"`{text(dividend)}` > {room * primary.tile:,} (`{text(divisor)}` = {primary.tile:,})"
    if tile is None:
        return f"`{text(dividend)}` > {room:,} x `{text(divisor)}`"
    if _floors(primary.expr):  # `n // t` passes `room` only at n >= (room + 1) * t
        return f"`{text(dividend)}` > {(room + 1) * tile - 1:,}"
    return f"`{text(dividend)}` > {room * tile:,}"


def _side(primary: Factor, side: cst.BaseExpression) -> Factor:
    """One side of a conditional grid factor, read as a factor of its own (a tile count when it divides)."""
    kind = Kind.TILE_COUNT if division_parts(side) is not None else Kind.EXTENT
    return Factor(kind=kind, expr=side, tile=primary.tile if kind is Kind.TILE_COUNT else None)


def _floors(expr) -> bool:
    """A plain floor division ``n // t`` (not the ceiling idiom ``(n + t - 1) // t``)."""
    return (type(expr) is cst.BinaryOperation and type(expr.operator) is cst.FloorDivide
            and not (type(expr.left) is cst.BinaryOperation and type(expr.left.operator) in (cst.Add, cst.Subtract)))
