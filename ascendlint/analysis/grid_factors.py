"""What a grid factor is: its kind (literal, core count, tile count, total size, extent), its marks (capped, chunked,
fixed by the model, counting tokens), and how factors fold together in sums, maxima and minima.

Pure data and arithmetic over it, with no host-code reading: the classifier (``grid_classify``) builds factors, the
grid rules (ASC105, ASC110, ASC408) and the launch-size analyses read them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

import libcst as cst

from . import magnitudes as mag
from .module_facts import Launch


class Kind(str, enum.Enum):
    LITERAL = "literal"
    CONSTANT = "compile-time constant"  # e.g. ``meta["BLOCK"]``: fixed per launch, value unknown here
    CUBE_CORES = "cube"
    VECTOR_CORES = "vector"
    CORES = "cores"
    TILE_COUNT = "tile count"
    TOTAL_SIZE = "total size"
    EXTENT = "extent"
    UNKNOWN = "unknown"


CORE_KINDS = frozenset({Kind.CUBE_CORES, Kind.VECTOR_CORES, Kind.CORES})


RUNTIME_KINDS = frozenset({Kind.TILE_COUNT, Kind.TOTAL_SIZE, Kind.EXTENT})


# How fast a kind can grow with the data, used when two kinds meet in a sum or a max.
_GROWTH = {
    Kind.LITERAL: 0, Kind.CONSTANT: 1, Kind.CUBE_CORES: 2, Kind.VECTOR_CORES: 2, Kind.CORES: 2,
    Kind.UNKNOWN: 3, Kind.EXTENT: 4, Kind.TILE_COUNT: 5, Kind.TOTAL_SIZE: 6,
}


DIVIDE_UP = {"cdiv", "ceil_div", "ceildiv", "div_up", "cdiv_int"}


@dataclass(frozen=True)
class Factor:
    """One factor of a grid product, as the host code defines it."""

    kind: Kind
    expr: cst.CSTNode
    value: int | None = None
    capped: bool = False  # under ``min(..., cap)``
    chunked: bool = False  # depends on a variable of an enclosing chunking host loop
    weight: int = 1  # runtime factors folded into this one (``B * T * D`` under a cdiv counts 3)
    names: frozenset[str] = frozenset()  # host names followed to define it
    # ``x / k`` for a core count or a literal ``k``: dividing (a part of) ``x`` by it again counts about ``k``
    # (``BLOCK = ceil(n / CORES)`` makes ``cdiv(n, BLOCK)`` a core count). (kind of k, its value, names of x).
    share: tuple[Kind, int | None, frozenset[str]] | None = None
    model_bounded: bool = False  # a tile count of a model dimension (head dim, hidden size): fixed by the model
    rows: bool = False  # the rows of a flattened tensor (``x.view(-1, D).shape[0]``): a count of tokens
    # ``sqrt(n)`` (through ``ceil``, ``next_power_of_2``, ``min(..., cap)``): the names of ``n``. Dividing ``n`` by it
    # again (``cdiv(n, next_power_of_2(ceil(sqrt(n))))``) counts about ``sqrt(n)``, not ``n`` over a tile.
    root: frozenset[str] = frozenset()
    # counts tokens or rows (``n_rows``, ``num_tokens``, ``x.shape[0]`` of an activation, ``cdiv(T, BT)``): an axis
    # that grows with the tokens of a launch; ``evidence`` is the host text that says so
    tokens: bool = False
    evidence: str = ""
    # the leading dimension of an activation read into a host name that says batch (``batch = x.shape[0]``): not
    # counted as tokens on its own (one program per sequence), but rows once the host tiles it or multiplies it by a
    # sequence length (``cdiv(batch, BLOCK_BATCH)``, ``batch * seq_len``)
    batch_rows: bool = False
    # a tile count of a weight's leading dimension (channels, features: up to 2**14) over a literal tile of at most
    # 16: about a thousand programs per row of whatever multiplies it
    wide: bool = False
    # the batch of a batched tensor (``B`` of ``B, T, H, K = k.shape``, ``batch = x.shape[0]``): multiplied with a
    # tile count of that tensor's tokens it counts token tiles of the whole batch, not a further runtime size
    batch_axis: bool = False
    # the largest literal tile a tile count or total size is divided by (``cdiv(n, 1024)``, ``block = 1024``, a
    # launch passing ``BLOCK=1024`` for ``meta["BLOCK"]``, ``BD = 8 if ... else 16``); None when not a literal
    tile: int | None = None
    # ``tokens`` read from the host tensors themselves (the leading dimension of an activation, its flattened rows,
    # ``batch * seq_len``, the sequence axis of ``B, T, H, K = k.shape``), not from how a host name is spelled
    host_tokens: bool = False
    # counts tiles over every token of the launch, whatever its batch (the M-tiles of routed MoE tokens,
    # ``num_m_tiles = tile_row_start.shape[0]``): multiplied by a model dimension's tile count it passes the limit
    launch_wide: bool = False

    @property
    def is_core_count(self) -> bool:
        return self.kind in CORE_KINDS

    @property
    def grows(self) -> bool:
        """Grows with the data and nothing bounds it at this launch."""
        return self.kind in RUNTIME_KINDS and not self.capped and not self.chunked

    @property
    def grows_with_data(self) -> bool:
        """Grows with the input data, not only with the model's fixed sizes (``cdiv(head_dim, BD)`` does not)."""
        return self.grows and not self.model_bounded


@dataclass
class LaunchGrid:
    """The resolved grid of one launch; ``axes`` is None when its shape is not visible in the module."""

    launch: Launch
    axes: tuple[tuple[Factor, ...], ...] | None
    expr: cst.BaseExpression | None = None  # the tuple (or single expression) the axes come from

    @property
    def factors(self) -> list[Factor]:
        return [factor for axis in self.axes or () for factor in axis]

    @property
    def literal_size(self) -> int:
        """The product of the grid's literal factors (1 when it has none)."""
        size = 1
        for factor in self.factors:
            if factor.kind is Kind.LITERAL and factor.value is not None:
                size *= factor.value
        return size

    @property
    def static_size(self) -> int | None:
        """The grid product when every factor is a literal."""
        if self.axes is None:
            return None
        size = 1
        for factor in self.factors:
            if factor.kind is not Kind.LITERAL or factor.value is None:
                return None
            size *= factor.value
        return size


def division_parts(expr: cst.BaseExpression) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(numerator, denominator) of ``cdiv(a, b)``, ``a // b`` or ``(a + b - 1) // b``."""
    if type(expr) is cst.Call and len(expr.args) == 2:
        return expr.args[0].value, expr.args[1].value
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.FloorDivide, cst.Divide):
        numerator = expr.left
        if type(numerator) is cst.BinaryOperation and type(numerator.operator) is cst.Subtract:
            numerator = numerator.left
        if type(numerator) is cst.BinaryOperation and type(numerator.operator) is cst.Add:
            numerator = numerator.left
        return numerator, expr.right
    return None


def fold(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
    """A product of factors as one factor: literals multiply, otherwise the fastest-growing kind wins."""
    if len(factors) == 1:
        return factors[0]
    names = frozenset().union(*(f.names for f in factors))
    if all(f.kind is Kind.LITERAL and f.value is not None for f in factors):
        value = 1
        for f in factors:
            value *= f.value
        return Factor(Kind.LITERAL, expr, value=value)
    fastest = max(factors, key=lambda f: _GROWTH[f.kind])
    runtime = [f for f in factors if f.kind in RUNTIME_KINDS or f.kind is Kind.UNKNOWN]
    return Factor(
        fastest.kind,
        expr,
        capped=all(f.capped for f in runtime) and bool(runtime),
        chunked=fastest.chunked,
        weight=max(1, sum(f.weight for f in runtime)),
        names=names,
        rows=fastest.rows and len(runtime) == 1,  # rows times a feature size counts elements, not rows
        tokens=any(f.tokens for f in runtime),
        host_tokens=any(f.tokens and f.host_tokens for f in runtime),
        evidence=next((f.evidence for f in runtime if f.tokens), ""),
        batch_rows=fastest.batch_rows and len(runtime) == 1,
        tile=fastest.tile if len(runtime) == 1 else None,
    )


def root_split_bounded(divisor: Factor) -> bool:
    """``n`` divided by a divisor that grows like ``sqrt(n)`` stays below 65536 programs up to 2**32 elements; when
    the divisor is capped (``min(sqrt(n), cap)``) the quotient reaches ``n / cap``, below 65536 for tensors up to
    2**31 elements only when the cap is at least 32768."""
    if divisor.kind is Kind.LITERAL:
        return divisor.value is not None and mag.quotient(mag.INT32_BITS, divisor.value) <= mag.GRID_AXIS_BITS
    return divisor.kind in RUNTIME_KINDS and not divisor.capped


def add_factors(left: Factor, right: Factor, expr: cst.BaseExpression) -> Factor:
    if left.kind is Kind.LITERAL and right.kind is Kind.LITERAL and None not in (left.value, right.value):
        op = expr.operator if type(expr) is cst.BinaryOperation else None
        value = left.value - right.value if type(op) is cst.Subtract else left.value + right.value
        return Factor(Kind.LITERAL, expr, value=value)
    return fold_max([left, right], expr)


def fold_max(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
    fastest = max(factors, key=lambda f: _GROWTH[f.kind])
    if fastest.kind is Kind.LITERAL:
        values = [f.value for f in factors if f.value is not None]
        return Factor(Kind.LITERAL, expr, value=max(values) if len(values) == len(factors) else None)
    return replace(
        fastest,
        expr=expr,
        weight=max(f.weight for f in factors),
        names=frozenset().union(*(f.names for f in factors)),
    )


def fold_min(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
    """``min(...)``: bounded by its smallest-growing argument."""
    slowest = min(factors, key=lambda f: _GROWTH[f.kind])
    names = frozenset().union(*(f.names for f in factors))
    if slowest.kind is Kind.LITERAL:
        values = [f.value for f in factors if f.kind is Kind.LITERAL and f.value is not None]
        root = frozenset().union(*(f.root for f in factors))  # min(sqrt(n), 32768): a root split with a cap
        return Factor(Kind.LITERAL, expr, value=min(values) if values else None, capped=True, names=names, root=root)
    if slowest.is_core_count:
        return Factor(slowest.kind, expr, capped=True, names=names)
    fastest = max(factors, key=lambda f: _GROWTH[f.kind])
    return replace(fastest, expr=expr, capped=True, names=names)


def divides_rounding_up(expr: cst.BaseExpression) -> bool:
    """``(n + B - 1) // B``: a division rounded up by hand."""
    return (
        type(expr) is cst.BinaryOperation
        and type(expr.operator) is cst.FloorDivide
        and type(expr.left) is cst.BinaryOperation
        and type(expr.left.operator) in (cst.Add, cst.Subtract)
    )
