"""Launch-site analysis: what a ``kernel[grid](...)`` grid is made of, resolved through host code.

A grid is a tuple of axes, each axis a product of factors. Each factor is classified by how it grows with the
data: a literal, a core count (cube or vector cores), a tile count of a runtime extent (``triton.cdiv(M, BM)``,
``(n + B - 1) // B``), a total size (``x.numel()``, ``cdiv(B * T * D, BLOCK)``) or a plain extent (``B``,
``x.shape[0]``). Names are followed through the assignments of the host function that launches (and the module),
``lambda meta: (...)`` and local ``def grid(meta)`` functions are opened. Core counts are device properties
(``num_aicore``, ``num_vectorcore``) and core-count functions (``get_aicore_num()``, ``vector_core_count(dev)``),
also behind an optional override (``n_cores or cube_core_count(dev)``). A factor under ``min(..., cap)`` is
capped; one that depends on the variable or step of an enclosing host ``range(a, b, step)`` / ``while`` loop is
chunked. A host name that the conditions guarding the launch bound by a literal (``if N <= 128:``) is that bound;
a conditional expression keeps the sides that can be taken, each bounded by its test where the test compares it
(``g if g < 65536 else 2048``); ``cdiv(n, next_power_of_2(ceil(sqrt(n))))`` counts about ``sqrt(n)``.

Everything is computed once per launch and cached on the module facts, so rules can ask freely.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, NamedTuple

import libcst as cst

from . import host_facts as hf
from . import magnitudes as mag
from . import shape_evidence as se
from .literal_helpers import helper_item_literals, helper_literals
from .module_facts import Kernel, Launch, ModuleFacts, dotted_name
from ..text.lazy_regex import lazy
from .literals import integer_value

_MAX_DEPTH = 12  # name-resolution depth; host code that deep is not worth following


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
# get_aicore_num(), get_aivector_core_num(), vector_core_count(dev), cube_core_count(dev), get_num_cores()
_CORE_FUNCTION = lazy(r"^(get_\w*core_num|\w*core_count|(get_)?num_\w*cores)$")
_CORE_PROPERTIES = {"num_aicore": Kind.CUBE_CORES, "num_vectorcore": Kind.VECTOR_CORES,
                    "multiprocessor_count": Kind.CORES, "multi_processor_count": Kind.CORES}
_DIVIDE_UP = {"cdiv", "ceil_div", "ceildiv", "div_up", "cdiv_int"}
_TRANSPARENT_CALLS = {"int", "abs", "next_power_of_2", "triton.next_power_of_2", "ceil", "floor"}
_ROOTS = {"sqrt", "isqrt"}
# Host names of a core count: num_vectorcore, CORE_NUM, n_cores, aicore_num, vector_core_count, num_cores.
_CORE_NAME = lazy(r"(?:(?:num|n|total|max)_?)?(?:(ai|aiv|vector|cube)_?)?cores?(?:_?(?:num|count|cnt))?", re.I)
# Model dimensions (per-head and hidden sizes): fixed by the model, whatever the batch or the sequence length.
_MODEL_DIM = lazy(
    r"k|v|d|dk|dv|dh|dim|head_?dim|head_?size|head_?[kv]_?dim|[kv]_?head_?dim|d_?model|hidden|hidden_?(size|dim)"
    r"|\w+_dim|\w+_hidden_size|(n_?|num_?)?channels?|embed_?dim|inter(mediate)?_?size",
    re.I,
)
# Tile sizes: BLOCK_SIZE, BLOCK_M, KV_BLOCK_SIZE, b_tile, chunk_size, BT, BK.
_TILE_NAME = lazy(r"(^|_)(block|blk|tile|chunk)(_(size|len|[a-z])|size)?$|^(block|blk|tile|chunk)|^b[tkvdmnhce]$",
                        re.I)
_RESHAPES = {"view", "reshape"}
_PASS_METHODS = {"contiguous", "to", "float", "half", "bfloat16", "int", "long", "clone", "detach"}


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


# -- public API ----------------------------------------------------------------------------------------------------
class LaunchFactor(NamedTuple):
    """What one launch passes for one kernel parameter, classified like a grid factor."""

    launch: Launch
    param: str
    factor: Factor
    argument: cst.BaseExpression  # the expression written at the launch


def launch_factors(
    facts: ModuleFacts, params: Callable[[Kernel], Iterable[str]] | None = None
) -> Iterator[LaunchFactor]:
    """Each launch of a kernel of this module with each parameter ``params(kernel)`` selects (its constexpr
    parameters by default, in order) that the launch passes, the value classified through the host code: whether
    it grows with the data, is capped, chunked or fixed by the model. Lazily, so a caller that stops early or
    selects few parameters classifies only those."""
    resolver = _analysis(facts)
    for launch in facts.launches:
        kernel = launch.kernel
        if kernel is None:
            continue
        selected = params(kernel) if params is not None else [p for p in kernel.params if kernel.is_constexpr_param(p)]
        for param in selected:
            argument = launch_argument(launch, param)
            if argument is None:
                continue
            factor = _Classifier(resolver, launch.call, launch)._one(argument, 0, frozenset())
            yield LaunchFactor(launch, param, factor, argument)


def host_resolver(facts: ModuleFacts) -> "_GridAnalysis":
    """The module's host-name resolver (``lookup``, ``literal_value``, ``literal_choices``, ``shape_items``), shared
    by every analysis that reads launch sites; cached on the module facts."""
    return _analysis(facts)


def launch_grid(facts: ModuleFacts, launch: Launch) -> LaunchGrid:
    """The classified grid of ``launch`` (cached per launch)."""
    return _analysis(facts).grid(launch)


def grid_core_source(facts: ModuleFacts, launch: Launch) -> str | None:
    """``"cube"``, ``"vector"`` or ``"cores"`` when the launch grid is sized by a core count, else None.

    Derived from the core count means the grid product is one core-count factor (``get_aicore_num()``,
    ``get_aivector_core_num()``, ``props["num_aicore"]``, ``props.num_vectorcore``, any ``get_*core_num()``,
    possibly under ``min(x, core_count)`` or divided by a literal), reached directly or through host assignments,
    times nothing but literal 1s. A literal grid or a data-sized grid is not derived from the core count.
    """
    grid = launch_grid(facts, launch)
    if grid.axes is None:
        return None
    cores = [f for f in grid.factors if f.is_core_count]
    others = [f for f in grid.factors if not f.is_core_count]
    if len(cores) != 1 or any(f.kind is not Kind.LITERAL or f.value != 1 for f in others):
        return None
    return cores[0].kind.value


def literal_arguments(facts: ModuleFacts, launch: Launch) -> dict[str, int]:
    """Kernel parameters that this launch passes as integer literals (directly or through a host name)."""
    kernel = launch.kernel
    found: dict[str, int] = {}
    resolver = _analysis(facts)
    positional = [a for a in launch.call.args if a.keyword is None and not a.star]
    if kernel is not None:
        for name, arg in zip(kernel.params, positional):
            value = resolver.literal_value(arg.value, launch.call)
            if value is not None:
                found[name] = value
    for name, arg in launch.keywords.items():
        value = resolver.literal_value(arg.value, launch.call)
        if value is not None:
            found[name] = value
    if kernel is not None:  # a tile size a helper picks from a few literals: the largest it can be
        passed = {**dict(zip(kernel.params, (a.value for a in positional))),
                  **{n: a.value for n, a in launch.keywords.items()}}
        for name, expr in passed.items():
            if name not in found:
                choices = resolver.literal_choices(expr, launch.call, 0)
                if choices:
                    found[name] = max(choices)
    return found


def launch_argument(launch: Launch, param: str) -> cst.BaseExpression | None:
    """The expression ``launch`` passes for ``param`` (by position or keyword), or None."""
    kernel = launch.kernel
    if param in launch.keywords:
        return launch.keywords[param].value
    if kernel is None or param not in kernel.params:
        return None
    positional = [a for a in launch.call.args if a.keyword is None]
    position = kernel.params.index(param)
    if any(a.star for a in positional[: position + 1]):
        return None
    return positional[position].value if position < len(positional) else None


def may_pass_one(facts: ModuleFacts, launch: Launch, param: str) -> bool:
    """Whether ``launch`` can plausibly pass 1 for ``param``: the literal 1, a size of a tensor (``x.shape[0]``,
    ``x.size(1)``, ``len(x)``, names unpacked from ``x.shape``) or the stride of its last dimension
    (``x.stride(-1)``), directly, through host names or on either side of a conditional expression. A batch of one, a single head and a contiguous last
    dimension are common; other strides are row lengths."""
    expr = launch_argument(launch, param)
    if expr is None:
        default = launch.kernel.defaults.get(param) if launch.kernel is not None else None
        return type(default) is cst.Integer and default.evaluated_value == 1
    resolver = _analysis(facts)
    pending = [(expr, 0)]
    while pending:  # both sides of `x.shape[0] if x.dim() == 3 else 1` can be passed
        expr, depth = pending.pop()
        if depth >= _MAX_DEPTH:
            continue
        if resolver.literal_value(expr, launch.call) == 1 or _is_size_or_stride(expr):
            return True
        if type(expr) is cst.IfExp:
            pending += [(expr.body, depth + 1), (expr.orelse, depth + 1)]
            continue
        if type(expr) is not cst.Name:
            continue
        status, value = resolver.lookup(expr.value, launch.call)
        if status == "value" and isinstance(value, cst.BaseExpression):
            pending.append((value, depth + 1))
    return False


def may_pass_none(facts: ModuleFacts, launch: Launch, param: str) -> bool:
    """Whether ``launch`` can pass None for ``param``: the literal None (also as the kernel's default when the
    launch leaves it out), a conditional with a None branch, or a host name bound to one of those, or a parameter of
    the host function that defaults to None or is annotated Optional, unless the host code uses it as a tensor
    (``g.transpose``, ``weight.shape``) before the launch."""
    expr = launch_argument(launch, param)
    if expr is None:
        default = launch.kernel.defaults.get(param) if launch.kernel is not None else None
        return _is_none(default)
    return _nullable(_analysis(facts), expr, launch.call, 0)


def _nullable(resolver: "_GridAnalysis", expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return True
    if _is_none(expr):
        return True
    if type(expr) is cst.IfExp:
        return _nullable(resolver, expr.body, site, depth + 1) or _nullable(resolver, expr.orelse, site, depth + 1)
    if type(expr) is cst.BooleanOperation:
        return _nullable(resolver, expr.right, site, depth + 1)
    if type(expr) is not cst.Name:
        return False  # a call, an attribute, a subscript or arithmetic yields a tensor (or fails on the host)
    if resolver.used_as_tensor_before(expr.value, site):
        return False
    status, value = resolver.lookup(expr.value, site)
    if status == "value" and isinstance(value, cst.BaseExpression):
        return _nullable(resolver, value, site, depth + 1)
    if status == "param":
        return resolver.optional_param(expr.value, site)
    return False


def _is_none(expr) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def _is_size_or_stride(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Subscript:
        base = expr.value
        return type(base) is cst.Attribute and base.attr.value == "shape"
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value == "size":
            return True
        if type(func) is cst.Attribute and func.attr.value == "stride" and expr.args:
            last = expr.args[0].value
            return type(last) is cst.UnaryOperation and type(last.operator) is cst.Minus and isinstance(
                last.expression, cst.Integer) and last.expression.evaluated_value == 1
        return type(func) is cst.Name and func.value == "len"
    return False


def launches_of(facts: ModuleFacts, kernel: Kernel) -> list[Launch]:
    """The launches in this module whose target is ``kernel``."""
    return facts.memo("launches_by_kernel", lambda: _launches_by_kernel(facts)).get(id(kernel.node), [])


def _launches_by_kernel(facts: ModuleFacts) -> dict[int, list[Launch]]:
    by_kernel: dict[int, list[Launch]] = {}
    for launch in facts.launches:
        if launch.kernel is not None:
            by_kernel.setdefault(id(launch.kernel.node), []).append(launch)
    return by_kernel


def constexpr_values(facts: ModuleFacts, kernel: Kernel) -> dict[str, list[int]]:
    """Integer values this module gives each constexpr parameter of ``kernel``: launch arguments (literals, or host
    names bound to literals), ``triton.Config`` entries of its autotune configs, and literal defaults."""
    found: dict[str, list[int]] = {}
    constexprs = kernel.constexpr
    for launch in launches_of(facts, kernel):
        for name, value in literal_arguments(facts, launch).items():
            if name in constexprs:
                found.setdefault(name, []).append(value)
    for name, value in autotune_values(facts, kernel):
        if name in constexprs:
            found.setdefault(name, []).append(value)
    for name, default in kernel.defaults.items():
        if name in constexprs and type(default) is cst.Integer:
            found.setdefault(name, []).append(default.evaluated_value)
    return found


def chosen_values(facts: ModuleFacts, kernel: Kernel) -> dict[str, list[int]]:
    """Integer values the module chooses for each constexpr parameter of ``kernel`` where it launches it or in its
    autotune configs (not the parameter's default): the tunable choices."""
    found: dict[str, list[int]] = {}
    resolver = _analysis(facts)
    for launch in launches_of(facts, kernel):
        for name in (p for p in kernel.params if p in kernel.constexpr):  # in signature order, not a set's
            passed = launch_argument(launch, name)
            if passed is not None:
                found.setdefault(name, []).extend(resolver.literal_choices(passed, launch.call, 0))
    for name, value in autotune_values(facts, kernel):
        if name in kernel.constexpr:
            found.setdefault(name, []).append(value)
    return {name: values for name, values in found.items() if values}


def is_tile_size_name(name: str) -> bool:
    """A name spelled like a tile size: ``BLOCK_SIZE``, ``BLOCK_M``, ``KV_BLOCK_SIZE``, ``BLK_HEADS``, ``BT``."""
    return _TILE_NAME.search(name) is not None


def autotune_values(facts: ModuleFacts, kernel: Kernel) -> list[tuple[str, int]]:
    """The (name, integer) entries of the ``triton.Config`` dicts of ``kernel``'s autotune configs, through a config
    list bound to a host name and list comprehensions over literal lists."""
    autotune = kernel.autotune
    if autotune is None:
        return []
    configs = next((a.value for a in autotune.args if a.keyword is not None and a.keyword.value == "configs"), None)
    if configs is None and autotune.args and autotune.args[0].keyword is None:
        configs = autotune.args[0].value
    resolver = _analysis(facts)
    if type(configs) is cst.Name:
        status, value = resolver.lookup(configs.value, autotune)
        configs = value if status == "value" else None
    found: list[tuple[str, int]] = []
    if type(configs) in (cst.List, cst.Tuple):
        calls = [element.value for element in configs.elements]
        loops: dict[str, list[int]] = {}
    elif type(configs) is cst.ListComp:
        calls = [configs.elt]
        loops = _comprehension_values(configs)
    else:
        return found
    for call in calls:
        if type(call) is not cst.Call or not call.args or type(call.args[0].value) is not cst.Dict:
            continue
        for element in call.args[0].value.elements:
            if type(element) is not cst.DictElement or type(element.key) is not cst.SimpleString:
                continue
            key = element.key.evaluated_value
            if type(element.value) is cst.Integer:
                found.append((key, element.value.evaluated_value))
            elif type(element.value) is cst.Name:
                found += [(key, value) for value in loops.get(element.value.value, ())]
    return found


def _comprehension_values(comprehension: cst.ListComp) -> dict[str, list[int]]:
    """``for bt in [16, 32, 64]`` clauses: the literal values each comprehension variable takes."""
    found: dict[str, list[int]] = {}
    clause = comprehension.for_in
    while clause is not None:
        if type(clause.target) is cst.Name and type(clause.iter) in (cst.List, cst.Tuple, cst.Set):
            values = [e.value.evaluated_value for e in clause.iter.elements if type(e.value) is cst.Integer]
            found[clause.target.value] = values
        clause = clause.inner_for_in
    return found


def program_id_magnitudes(
    facts: ModuleFacts, kernel: Kernel, core_grid: bool
) -> dict[int, tuple[int, frozenset[str]]]:
    """(magnitude, divisors) of ``tl.program_id(axis)`` for each axis, from every launch of ``kernel`` in this
    module: one program per core on a core grid; a tile count ``cdiv(T, BT)`` counts tiles of the constexpr
    ``BT``; an extent by the name of its host variable (``magnitudes.name_bits``). Empty when nothing is known."""
    from . import magnitudes as mag

    launches = launches_of(facts, kernel)
    if core_grid or any(grid_core_source(facts, launch) is not None for launch in launches):
        return {axis: (mag.CORE_PROGRAM_BITS, frozenset()) for axis in range(3)}
    found: dict[int, tuple[int, frozenset[str]]] = {}
    for launch in launches:
        grid = launch_grid(facts, launch)
        if grid.axes is None:
            return {}  # one launch whose grid is not visible: nothing is known for sure
        for axis, factors in enumerate(grid.axes):
            size, divisors = 0, frozenset()
            for factor in factors:
                bits, divided = _factor_magnitude(factor, kernel)
                size, divisors = size + bits, divisors | divided
            if not divisors:
                size = min(size, mag.GRID_AXIS_BITS)
            if axis in found:
                old = found[axis]
                size, divisors = max(old[0], size), old[1] & divisors
            found[axis] = (size, divisors)
    return found


def token_axes(facts: ModuleFacts, kernel: Kernel) -> set[int]:
    """Grid axes that count token rows at every launch of ``kernel`` in this module: an extent or tile count of a
    host size named for tokens (``cdiv(n_rows, BLOCK)``, ``(T,)``, ``(num_tokens, H)``)."""
    from . import magnitudes as mag

    launches = launches_of(facts, kernel)
    found: set[int] | None = None
    for launch in launches:
        grid = launch_grid(facts, launch)
        if grid.axes is None:
            return set()
        axes = set()
        for axis, factors in enumerate(grid.axes):
            for factor in factors:
                numerator = division_parts(factor.expr)
                spelled = numerator[0] if numerator is not None else factor.expr
                names = [spelled.value] if type(spelled) is cst.Name else sorted(factor.names)
                if factor.rows or factor.kind in (Kind.EXTENT, Kind.TILE_COUNT) and (
                        factor.tokens and not factor.capped and not factor.chunked
                        or any(mag.counts_tokens(n) for n in names)):
                    axes.add(axis)
        found = axes if found is None else found & axes
    return found or set()


def host_argument_bits(facts: ModuleFacts, kernel: Kernel, param: str) -> tuple[int, bool, bool] | None:
    """(magnitude, counts tokens, definite) of what this module's launches pass for the integer parameter ``param``:
    read from the host expression (``x.stride(-1)`` is 1, ``logits.stride(0)`` a vocabulary, ``x.shape[0]`` of an
    activation its rows, ``x.numel()`` a total size, ``min(n, cap)`` at most the cap, literals and names assigned
    from them) or else from the host name it is spelled with. *Definite* when every launch's value was read from
    what the host tensors are, not from a name. None when no launch is visible or the host says nothing."""
    found = host_argument_bounds(facts, kernel, param)
    if found is None:
        return None
    return found.bits, found.tokens, found.evidence.startswith(_DEFINITE)


_DEFINITE = "="  # evidence read from the host tensors themselves starts with this mark


def host_argument_bounds(facts: ModuleFacts, kernel: Kernel, param: str):
    """The largest ``HostBound`` (magnitude, counts tokens, evidence) over this module's launches of ``kernel``
    for the integer parameter ``param``; None when a launch does not show it. Cached per kernel and parameter."""
    cache = facts.memo("host_argument_bounds", dict)
    key = (id(kernel.node), param)
    if key in cache:
        return cache[key]
    from .host_facts import HostBound

    launches = launches_of(facts, kernel)
    resolver = _analysis(facts)
    largest = None
    for launch in launches:
        expr = launch_argument(launch, param)
        found = _host_argument(resolver, expr, launch.call, 0) if expr is not None else None
        if found is None:
            largest = None
            break
        if largest is None or found.bits > largest.bits:
            definite = found.evidence.startswith(_DEFINITE) and (
                largest is None or largest.evidence.startswith(_DEFINITE))
            evidence = found.evidence if definite else found.evidence.lstrip(_DEFINITE)
            largest = HostBound(found.bits, found.tokens or bool(largest and largest.tokens), evidence)
        elif found.tokens and not largest.tokens:
            largest = HostBound(largest.bits, True, largest.evidence)
        if largest is not None and not found.evidence.startswith(_DEFINITE):
            largest = HostBound(largest.bits, largest.tokens, largest.evidence.lstrip(_DEFINITE))
    cache[key] = largest
    return largest


def _host_argument(resolver, expr, site, depth):
    """What one launch passes: a ``HostBound`` whose evidence starts with ``_DEFINITE`` when it was read from the
    host tensors (a stride, a shape, a literal), or None."""
    from . import host_facts as hf
    from .host_facts import HostBound

    if depth >= _MAX_DEPTH:
        return None
    if type(expr) is cst.Integer:
        value = integer_value(expr)
        return HostBound(mag.of_int(value), False, f"{_DEFINITE}{value}")
    if type(expr) is cst.Call:
        func = expr.func
        short = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        args = [a.value for a in expr.args if a.keyword is None and not a.star]
        if type(func) is cst.Attribute and short == "stride":
            tensor = hf.receiver(func.value)
            dim = hf.literal_dim(args[0]) if args else None
            bound = hf.row_stride_bound(tensor, dim) if tensor is not None else None
            if bound is not None:
                return HostBound(bound.bits, False, _DEFINITE + bound.evidence)
            return HostBound(mag.FEATURE_BITS, False, f"{tensor}.stride(...)")
        if type(func) is cst.Attribute and short == "numel":
            return HostBound(mag.SIZE_BITS, False, f"{_DEFINITE}{hf.receiver(func.value)}.numel()")
        if type(func) is cst.Attribute and short == "size" and args:
            return _shape_argument(hf.receiver(func.value), hf.literal_dim(args[0]), None)
        if short == "len" and len(args) == 1 and type(func) is cst.Name:
            return _shape_argument(hf.receiver(args[0]), 0, None)
        if short == "min" and type(func) is cst.Name and len(args) >= 2:
            bounds = [_host_argument(resolver, a, site, depth + 1) for a in args]
            known = [b for b in bounds if b is not None]
            if known:
                smallest = min(known, key=lambda b: b.bits)
                return HostBound(smallest.bits, smallest.tokens and len(known) == len(bounds), smallest.evidence)
            return None
        if short in ("next_power_of_2", "int", "abs") and len(args) == 1:
            inner = _host_argument(resolver, args[0], site, depth + 1)
            return None if inner is None else HostBound(inner.bits + (short == "next_power_of_2"), inner.tokens,
                                                         inner.evidence)
        if short in _DIVIDE_UP and len(args) == 2:
            top, bottom = _host_argument(resolver, args[0], site, depth + 1), resolver.literal_value(args[1], site)
            if top is not None and bottom:
                return HostBound(mag.quotient(top.bits, bottom), top.tokens, top.evidence)
        return None
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        base = expr.value
        if type(base) is cst.Attribute and base.attr.value == "shape":
            item = resolver.shape_items.get(id(expr))
            if item is not None:
                return _shape_argument(item[0], item[1], item[2])
            return _shape_argument(hf.receiver(base.value), hf.literal_dim(expr.slice[0].slice.value), None)
        return None
    if type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            found = _host_argument(resolver, value, site, depth + 1)
            if found is not None:
                return found
        bits = mag.name_bits(expr.value)
        if bits != mag.EXTENT_BITS:
            return HostBound(bits, mag.counts_tokens(expr.value), expr.value)
    return None


def _shape_argument(tensor: str | None, dim: int | None, rank: int | None):
    from .host_facts import HostBound, shape_bound

    if tensor is None:
        return None
    bound = shape_bound(tensor, dim, rank)
    if bound is None:
        return None
    return HostBound(bound.bits, bound.tokens, _DEFINITE + bound.evidence)


def indexes_small_tensor(facts: ModuleFacts, kernel: Kernel, pointer: str) -> bool:
    """The pointer parameter ``pointer`` points into a tensor that stays small (a weight, a state or statistic per
    sequence or head, a table): by the host tensors every launch passes for it, or by its own name when no launch
    is visible. Such a tensor holds far fewer than 2**31 elements, so an in-bounds int32 offset into it cannot
    wrap."""
    cache = facts.memo("indexes_small_tensor", dict)
    key = (id(kernel.node), pointer)
    if key not in cache:
        names = []
        for launch in launches_of(facts, kernel):
            passed = launch_argument(launch, pointer)
            tensor = hf.receiver(passed) if passed is not None else None
            if tensor is None:
                names = []
                break
            names.append(tensor)
        if not names:
            names = [pointer.removesuffix("_ptr")]
        cache[key] = all(hf.tensor_is_small(name) for name in names) and not allocated_per_head_matrices(facts, kernel, pointer)
    return cache[key]


def allocated_per_head_matrices(facts: ModuleFacts, kernel: Kernel, pointer: str) -> bool:
    """A launch passes for ``pointer`` a tensor its host function allocates as a matrix per (sequence, head):
    ``new_empty(N, HV, K, V)``, whose name says state but whose size is batch x heads x two per-token sizes."""
    resolver = _analysis(facts)
    for launch in launches_of(facts, kernel):
        passed = launch_argument(launch, pointer)
        if type(passed) is not cst.Name:
            continue
        for value in resolver.assignments_before(passed.value, launch.call):
            dims = hf.allocation_dims(value)
            if dims is not None and hf.per_head_matrices(
                    [_host_argument(resolver, d, launch.call, 0) for d in dims]):
                return True
    return False


@dataclass(frozen=True)
class HostGuards:
    """Facts the host code establishes wherever it launches (or hands on) a kernel: ``T % BT == 0`` gives
    ``("T", "BT")`` in ``divides``, ``K == BK`` gives ``("K", "BK")`` in ``equal``. Names are the kernel's
    parameter names (a launch passing ``T=seq_len`` maps the host name ``seq_len`` to ``T``)."""

    divides: frozenset[tuple[str, str]] = frozenset()
    equal: frozenset[tuple[str, str]] = frozenset()

    def is_multiple(self, extent: str, block: str) -> bool:
        return (extent, block) in self.divides or self.is_equal(extent, block)

    def is_equal(self, extent: str, block: str) -> bool:
        return extent == block or (extent, block) in self.equal or (block, extent) in self.equal


def host_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    """What every use of ``kernel`` in this module's host code is guarded by: the enclosing ``if`` conditions (through
    host names such as ``aligned = T % BT == 0 and K == BK``) and the asserts before it. A use is a launch or the
    kernel's name passed on (``launch_on_cores(kernel, ...)``); no use, no facts."""
    cache = facts.memo("host_guards", dict)
    found = cache.get(id(kernel.node))
    if found is None:
        found = cache[id(kernel.node)] = _host_guards(facts, kernel)
    return found


def _host_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    resolver = _analysis(facts)
    kernel_nodes = {id(k.node) for k in facts.kernels.values()}
    uses = [
        node for node in facts.index.names(kernel.name)
        if not _inside(facts, node, kernel_nodes) and not _is_definition(facts, node)
    ]
    if not uses:
        return HostGuards()
    common: tuple[set, set] | None = None
    for use in uses:
        divides: set[tuple[str, str]] = set()
        equal: set[tuple[str, str]] = set()
        choices: dict[str, tuple[int, ...]] = {}
        for condition in _guarding_conditions(facts, use):
            _collect_facts(resolver, condition, use, divides, equal, 0, choices)
        function = _host_function(facts, use)
        if function is not None:
            inherited = _caller_guards(resolver, facts, function)
            divides |= inherited[0]
            equal |= inherited[1]
            for key, values in inherited[2].items():
                choices.setdefault(key, values)
        divides |= _dividing_blocks(facts, resolver, use, kernel, choices)
        renames = _launch_renames(facts, use, kernel)
        divides = {(renames.get(a, a), renames.get(b, b)) for a, b in divides}
        equal = {(renames.get(a, a), renames.get(b, b)) for a, b in equal}
        common = (divides, equal) if common is None else (common[0] & divides, common[1] & equal)
    return HostGuards(frozenset(common[0]), frozenset(common[1]))


def _inside(facts: ModuleFacts, node: cst.CSTNode, functions: set[int]) -> bool:
    """Is ``node`` inside one of the functions (given by their ids)?"""
    return any(id(ancestor) in functions for ancestor in facts.index.ancestors(node))


def _is_definition(facts: ModuleFacts, node: cst.Name) -> bool:
    parent = facts.index.parent(node)
    return type(parent) in (cst.FunctionDef, cst.ImportAlias, cst.AsName) or (
        type(parent) is cst.Attribute and parent.attr is node
    )


def _guarding_conditions(facts: ModuleFacts, use: cst.CSTNode) -> list[cst.BaseExpression]:
    """Conditions that hold where ``use`` runs: ``if`` tests of the branches it sits in (the true side), and the
    tests of ``assert`` statements that precede it in the same host function, and the negated tests of early exits
    before it (``if S % BT != 0: raise ValueError(...)`` holds ``S % BT == 0`` afterwards), and the membership that
    a lookup in a literal table keyed by shape implies (``cfg = _CONFIGS[(M, N)]``: see ``shape_evidence``)."""
    found: list[cst.BaseExpression] = se.lookups_before(facts, use, lambda name: _literal_table(facts, name))
    child: cst.CSTNode = use
    function = None
    for ancestor in facts.index.ancestors(use):
        if type(ancestor) is cst.If and child is ancestor.body:
            found.append(ancestor.test)
        elif type(ancestor) is cst.IfExp and child is ancestor.body:
            found.append(ancestor.test)
        elif type(ancestor) is cst.FunctionDef:
            function = ancestor
            break
        child = ancestor
    if function is not None:
        position = facts.index.order(use)
        for node in facts.index.subtree(function):
            if facts.index.order(node) >= position:
                break
            if type(node) is cst.Assert and not _conditional_in(facts, node, function):
                found.append(node.test)
            elif type(node) is cst.If and _exits(node) and not _conditional_in(facts, node, function):
                negated = _negated(node.test)
                if negated is not None:
                    found.append(negated)
    return found


def _exits(branch: cst.If) -> bool:
    """An ``if`` without ``else`` whose body always raises or returns."""
    if branch.orelse is not None or type(branch.body) is not cst.IndentedBlock or not branch.body.body:
        return False
    last = branch.body.body[-1]
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) in (cst.Raise, cst.Return)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``not test`` as a conjunction of the forms ``_collect_facts`` reads, or None when it is not one."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return test.expression
    if type(test) is cst.BinaryOperation and type(test.operator) is cst.Modulo:  # `if M % BM:` -> M % BM == 0
        return cst.Comparison(test, [cst.ComparisonTarget(cst.Equal(), cst.Integer("0"))])
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        left, right = _negated(test.left), _negated(test.right)
        if left is None or right is None:
            return left or right  # not (a or b) holds both; keeping the one understood is still true
        return cst.BooleanOperation(left, cst.And(), right)
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        opposite = _OPPOSITE.get(type(target.operator))
        if opposite is not None:  # if n > 65535: raise  holds  n <= 65535  afterwards
            return test.with_changes(comparisons=[target.with_changes(operator=opposite())])
    return None


_OPPOSITE = {cst.NotEqual: cst.Equal, cst.GreaterThan: cst.LessThanEqual, cst.GreaterThanEqual: cst.LessThan,
             cst.LessThan: cst.GreaterThanEqual, cst.LessThanEqual: cst.GreaterThan, cst.NotIn: cst.In}


def _conditional_in(facts: ModuleFacts, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    for ancestor in facts.index.ancestors(node):
        if ancestor is function:
            return False
        if type(ancestor) in (cst.If, cst.For, cst.While, cst.Try, cst.FunctionDef):
            return True
    return False


def _collect_facts(resolver, test, site, divides: set, equal: set, depth: int,
                   choices: dict[str, tuple[int, ...]] | None = None) -> None:
    """Divisibility and equality facts a condition states (``T % BT == 0``, ``K == BK``), each side spelled the
    same way wherever the host writes it (``shape_evidence.canonical``), and in ``choices`` the literal values a
    membership test allows (``(M, N) in _SHAPES``); a call to a shape predicate of the module states what its
    ``True`` states, in the caller's terms."""
    if depth > _MAX_DEPTH:
        return
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        _collect_facts(resolver, test.left, site, divides, equal, depth + 1, choices)
        _collect_facts(resolver, test.right, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        negated = _negated(test.expression)
        if negated is not None and type(negated) is not cst.UnaryOperation:
            _collect_facts(resolver, negated, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.Name:
        status, value = resolver.lookup(test.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            _collect_facts(resolver, value, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.Call:
        _predicate_facts(resolver, test, site, divides, equal, depth, choices)
    elif type(test) is cst.Comparison and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if type(operator) is cst.In:
            if choices is not None:
                for part, values in se.membership(test, lambda c: _literal_collection(resolver, c, site)):
                    key = se.canonical(resolver, part, site)
                    if key is not None:
                        kept = set(values) & set(choices[key]) if key in choices else set(values)
                        choices[key] = tuple(sorted(kept))
            return
        if type(operator) is not cst.Equal:
            return
        for one, other in ((left, right), (right, left)):
            if (type(one) is cst.BinaryOperation and type(one.operator) is cst.Modulo
                    and _is_integer(other, 0)):
                divides.update(_spelled_pairs(resolver, one.left, one.right, site))
                return
        equal.update(_spelled_pairs(resolver, left, right, site))


def _spelled_pairs(resolver, left, right, site) -> set[tuple[str, str]]:
    """The pairs of spellings of two sizes: as written (``T``) and canonical (``k.shape[1]``), so that a fact
    matches a launch that passes either."""
    lefts = {_spelled(left), se.canonical(resolver, left, site)} - {None}
    rights = {_spelled(right), se.canonical(resolver, right, site)} - {None}
    return {(a, b) for a in lefts for b in rights}


def _predicate_facts(resolver, call: cst.Call, site, divides: set, equal: set, depth: int, choices) -> None:
    """The facts of a shape predicate's conditions (read in its own scope), rebased on what the call passes."""
    found = se.shape_predicate(resolver.facts, call)
    if found is None:
        return
    function, _ = found
    mapping = _argument_names(resolver, function, call, site)
    inner = function.body.body[-1]
    own_divides: set = set()
    own_equal: set = set()
    own_choices: dict = {}
    for condition in se.predicate_conditions(resolver.facts, function):
        _collect_facts(resolver, condition, inner, own_divides, own_equal, depth + 1, own_choices)
    for pairs, into in ((own_divides, divides), (own_equal, equal)):
        for a, b in pairs:
            pair = (se.rebased(a, mapping), se.rebased(b, mapping))
            if None not in pair:
                into.add(pair)
    if choices is not None:
        for key, values in own_choices.items():
            key = se.rebased(key, mapping)
            if key is not None:
                choices[key] = tuple(sorted(set(values) & set(choices[key]))) if key in choices else values


def _argument_names(resolver, function: cst.FunctionDef, call: cst.Call, site) -> dict[str, str]:
    """Parameter of ``function`` -> the caller's spelling of what ``call`` passes for it (a plain name, bound the
    same way at the call and at ``site``)."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    keywords = {p.name.value for p in function.params.kwonly_params} | set(params)
    mapping: dict[str, str] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return mapping
        name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
        if name is None or name not in keywords:
            continue
        value = arg.value
        if type(value) is cst.Name and _same_binding(resolver, value, site):
            mapping[name] = se.canonical(resolver, value, site) or value.value
    return mapping


def _literal_collection(resolver, expr: cst.BaseExpression, site) -> list | None:
    """The items of a literal collection spelled at the test or bound to a name (``_TUNED_SHAPES``)."""
    items = se.literal_items(expr)
    if items is None and type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            items = se.literal_items(value)
    if items is None and type(expr) is cst.Call and type(expr.func) is cst.Attribute \
            and expr.func.attr.value == "keys" and not expr.args:
        return _literal_collection(resolver, expr.func.value, site)
    return items


def _literal_table(facts: ModuleFacts, name: cst.Name) -> bool:
    """A name bound once, at module level, to a literal dict keyed by sizes (``_CONFIGS = {(4096, 128): ...}``)."""
    status, value = _analysis(facts).lookup(name.value, name)
    return status == "value" and type(value) is cst.Dict and se.literal_items(value) is not None


def _dividing_blocks(facts: ModuleFacts, resolver, use: cst.Name, kernel: Kernel,
                     choices: dict[str, tuple[int, ...]]) -> set[tuple[str, str]]:
    """``(extent, block parameter)`` for every size whose allowed values all divide by the literal block sizes a
    launch at ``use`` passes (``(M, N) in {(4096, 1024), (8192, 2048)}`` with ``BM=64``)."""
    if not choices:
        return set()
    launch = next((l for l in facts.launches if l.kernel is kernel and l.target is use), None)
    if launch is None:
        return set()
    found = set()
    for param in kernel.params:
        passed = launch_argument(launch, param)
        blocks = resolver.literal_choices(passed, launch.call, 0) if passed is not None else []
        if not blocks or 0 in blocks:
            continue
        for key, values in choices.items():
            if values and all(value % block == 0 for value in values for block in blocks):
                found.add((key, param))
    return found


@dataclass
class _SiteFacts:
    """What the host conditions guarding one launch say about its host names: upper bounds by a literal
    (``if N <= 128:``, through host names such as ``use_split = (N <= 128) and ...``) and names known not to be None
    (``if max_programs is not None:``). Only names bound the same way at the condition and at the launch."""

    bounds: dict[str, int] = field(default_factory=dict)
    not_none: set[str] = field(default_factory=set)
    # `assert x.shape == (4096, 1024)`, `assert x.shape[0] <= 512`, `x.size(1) == 64`: (tensor, dim) -> bound; a
    # dimension asserted through a shape of known rank is kept under its negative index too
    dims: dict[tuple[str, int], int] = field(default_factory=dict)
    numels: dict[str, int] = field(default_factory=dict)  # `assert x.numel() == 4096 * 1024`

    def dim_bound(self, tensor: str | None, dim: int | None) -> int | None:
        return None if tensor is None or dim is None else self.dims.get((tensor, dim))


def _site_facts(resolver, facts: ModuleFacts, site: cst.CSTNode) -> _SiteFacts:
    found = _SiteFacts()
    for condition in _guarding_conditions(facts, site):
        _collect_bounds(resolver, condition, site, found, 0)
    function = _host_function(facts, site)
    if function is not None:
        inherited = _caller_bounds(resolver, facts, function)
        for (tensor, dim), bound in inherited.dims.items():
            if resolver.lookup(tensor, site)[0] == "param":
                found.dims[(tensor, dim)] = min(bound, found.dims.get((tensor, dim), bound))
        for name, bound in inherited.bounds.items():
            if resolver.lookup(name, site)[0] == "param":
                found.bounds[name] = min(bound, found.bounds.get(name, bound))
        for tensor, bound in inherited.numels.items():
            if resolver.lookup(tensor, site)[0] == "param":
                found.numels[tensor] = min(bound, found.numels.get(tensor, bound))
    return found


def _host_function(facts: ModuleFacts, site: cst.CSTNode) -> cst.FunctionDef | None:
    return next((a for a in facts.index.ancestors(site) if type(a) is cst.FunctionDef), None)


def _private_calls(facts: ModuleFacts, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a private module-level host function (``_launch``) from the rest of the module, when those are
    its only uses (a function passed around as a value, or a public one, can be called from anywhere)."""
    name = function.name.value
    if not name.startswith("_") or name.startswith("__") or facts.index.parent(function) is not facts.module:
        return []
    calls = []
    for node in facts.index.names(name):
        parent = facts.index.parent(node)
        if parent is function:
            continue
        if type(parent) is not cst.Call or parent.func is not node:
            return []
        if any(a is function for a in facts.index.ancestors(parent)):
            return []  # a recursive call
        calls.append(parent)
    return calls


def _call_mapping(resolver, function: cst.FunctionDef, call: cst.Call) -> dict[str, str]:
    """The caller's canonical spelling of each plain-name argument -> the callee's parameter it binds."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    keywords = {p.name.value for p in function.params.kwonly_params} | set(params)
    mapping: dict[str, str] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
        if name is None or name not in keywords or type(arg.value) is not cst.Name:
            continue
        mapping[arg.value.value] = name
        key = se.canonical(resolver, arg.value, call)
        if key is not None:
            mapping.setdefault(key, name)
    return mapping


def _caller_bounds(resolver, facts: ModuleFacts, function: cst.FunctionDef) -> _SiteFacts:
    """Bounds that hold wherever a private host function runs because every call of it in the module is guarded
    (``if (M, N) not in _SHAPES: return ...`` before ``_launch(x, y)``), in the callee's parameter names; a key
    counts only when every call states it (the loosest bound is kept)."""
    key = ("caller-bounds", id(function))
    cache = facts.memo("caller-facts", dict)
    if key in cache:
        return cache[key] or _SiteFacts()
    cache[key] = None  # a cycle of calls reads nothing
    merged: _SiteFacts | None = None
    for call in _private_calls(facts, function):
        here = _site_facts(resolver, facts, call)
        mapping = _call_mapping(resolver, function, call)
        translated = _SiteFacts()
        for (tensor, dim), bound in here.dims.items():
            if tensor in mapping:
                translated.dims[(mapping[tensor], dim)] = bound
        for name, bound in here.bounds.items():
            if name in mapping:
                translated.bounds[mapping[name]] = bound
        for tensor, bound in here.numels.items():
            if tensor in mapping:
                translated.numels[mapping[tensor]] = bound
        merged = translated if merged is None else _SiteFacts(
            bounds={k: max(v, translated.bounds[k]) for k, v in merged.bounds.items() if k in translated.bounds},
            dims={k: max(v, translated.dims[k]) for k, v in merged.dims.items() if k in translated.dims},
            numels={k: max(v, translated.numels[k]) for k, v in merged.numels.items() if k in translated.numels},
        )
    cache[key] = merged or _SiteFacts()
    return cache[key]


def _caller_guards(resolver, facts: ModuleFacts, function: cst.FunctionDef):
    """Divisibility, equality and membership facts that every call of a private host function in the module is
    guarded by (an ``assert M % 64 == 0`` in the caller before ``_launch(a, c)``), rebased on the callee's
    parameters (``a.shape[0]`` in the caller is ``x.shape[0]`` when ``a`` is passed as ``x``)."""
    key = ("caller-guards", id(function))
    cache = facts.memo("caller-facts", dict)
    if key in cache:
        return cache[key] or (set(), set(), {})
    cache[key] = None
    merged = None
    for call in _private_calls(facts, function):
        divides: set = set()
        equal: set = set()
        choices: dict = {}
        for condition in _guarding_conditions(facts, call):
            _collect_facts(resolver, condition, call, divides, equal, 0, choices)
        caller = _host_function(facts, call)
        if caller is not None:
            above = _caller_guards(resolver, facts, caller)
            divides |= above[0]
            equal |= above[1]
            for k, v in above[2].items():
                choices.setdefault(k, v)
        mapping = _call_mapping(resolver, function, call)
        rebase = lambda k: mapping.get(k) or se.rebased(k, {c: p for c, p in mapping.items() if "." not in c})
        found = ({(rebase(a), rebase(b)) for a, b in divides if None not in (rebase(a), rebase(b))},
                 {(rebase(a), rebase(b)) for a, b in equal if None not in (rebase(a), rebase(b))},
                 {rebase(k): v for k, v in choices.items() if rebase(k) is not None})
        merged = found if merged is None else (merged[0] & found[0], merged[1] & found[1],
                                               {k: tuple(sorted(set(v) | set(found[2][k])))
                                                for k, v in merged[2].items() if k in found[2]})
    cache[key] = merged or (set(), set(), {})
    return cache[key]


def _collect_bounds(resolver, test, site, found: _SiteFacts, depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        _collect_bounds(resolver, test.left, site, found, depth + 1)
        _collect_bounds(resolver, test.right, site, found, depth + 1)
    elif type(test) is cst.Name:
        status, value = resolver.lookup(test.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            _collect_bounds(resolver, value, site, found, depth + 1)
    elif type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        negated = _negated(test.expression)
        if negated is not None and type(negated) is not cst.UnaryOperation:
            _collect_bounds(resolver, negated, site, found, depth + 1)
    elif type(test) is cst.Call:
        _predicate_bounds(resolver, test, site, found, depth)
    elif type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.In:
        for part, values in se.membership(test, lambda c: _literal_collection(resolver, c, site)):
            _bound_by(resolver, part, max(values), site, found)
    elif type(test) is cst.Comparison:
        left = test.left
        for target in test.comparisons:  # 0 < n <= 128 reads as 0 < n and n <= 128
            _compared(resolver, left, target.operator, target.comparator, site, found)
            left = target.comparator


def _bound_by(resolver, part: cst.BaseExpression, bound: int, site, found: _SiteFacts) -> None:
    """``part`` (a host name or a shape entry) is at most ``bound`` where ``site`` runs."""
    if bound < 0:
        return
    if type(part) is cst.Name:
        if bound < 2 ** mag.GRID_AXIS_BITS and _same_binding(resolver, part, site):
            found.bounds[part.value] = min(bound, found.bounds.get(part.value, bound))
        return
    tensor, dim, numel = _shape_part(part)
    if tensor is not None and _same_binding(resolver, tensor, site):
        if numel:
            found.numels[tensor.value] = min(bound, found.numels.get(tensor.value, bound))
        else:
            found.dims[(tensor.value, dim)] = min(bound, found.dims.get((tensor.value, dim), bound))


def _predicate_bounds(resolver, call: cst.Call, site, found: _SiteFacts, depth: int) -> None:
    """The bounds a shape predicate's ``True`` states (read in its own scope), on what the call passes: a bound on
    a parameter's shape entry bounds the argument's, and a bound on a name the predicate binds to a parameter's
    shape entry (``M, N = x.shape`` there) too."""
    predicate = se.shape_predicate(resolver.facts, call)
    if predicate is None:
        return
    function, _ = predicate
    mapping = _argument_names(resolver, function, call, site)
    inner = function.body.body[-1]
    own = _SiteFacts()
    for condition in se.predicate_conditions(resolver.facts, function):
        _collect_bounds(resolver, condition, inner, own, depth + 1)
    entries = {(tensor, dim): bound for (tensor, dim), bound in own.dims.items()}
    for name, bound in own.bounds.items():
        key = se.canonical(resolver, cst.Name(name), inner)
        if key is not None and ".shape[" in key:
            tensor, _, rest = key.partition(".shape[")
            entries[(tensor, int(rest.rstrip("]")))] = min(bound, entries.get((tensor, int(rest.rstrip("]"))), bound))
    for (tensor, dim), bound in entries.items():
        target = mapping.get(tensor)
        if target is not None and "." not in target:
            found.dims[(target, dim)] = min(bound, found.dims.get((target, dim), bound))
    for tensor, bound in own.numels.items():
        target = mapping.get(tensor)
        if target is not None and "." not in target:
            found.numels[target] = min(bound, found.numels.get(target, bound))


def _compared(resolver, left, operator, right, site, found: _SiteFacts) -> None:
    if _compared_shape(resolver, left, operator, right, site, found):
        return
    if type(left) is cst.Name and _is_none(right) and type(operator) is cst.IsNot:
        if _same_binding(resolver, left, site):
            found.not_none.add(left.value)
        return
    # name < 128, name <= 128, name == 128, 128 > name, 128 >= name
    if type(left) is cst.Name:
        name, literal, strict = left, right, type(operator) is cst.LessThan
        upper = type(operator) in (cst.LessThan, cst.LessThanEqual, cst.Equal)
    elif type(right) is cst.Name:
        name, literal, strict = right, left, type(operator) is cst.GreaterThan
        upper = type(operator) in (cst.GreaterThan, cst.GreaterThanEqual, cst.Equal)
    else:
        return
    value = resolver.literal_value(literal, site) if upper else None
    if value is None:
        return
    bound = value - 1 if strict else value
    if 0 <= bound < 2 ** mag.GRID_AXIS_BITS and _same_binding(resolver, name, site):
        found.bounds[name.value] = min(bound, found.bounds.get(name.value, bound))


_LITERAL_ARITHMETIC = {
    cst.Multiply: lambda a, b: a * b, cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
    cst.FloorDivide: lambda a, b: a // b, cst.LeftShift: lambda a, b: a << b, cst.Power: lambda a, b: a ** b,
}


def _compared_shape(resolver, left, operator, right, site, found: _SiteFacts) -> bool:
    """Bounds from a comparison of a tensor's shape with literals (``x.shape == (M0, 1024)`` keeps the literal
    entries, ``x.shape[0] <= 512``, ``x.size(-1) == 64``, ``x.numel() == 4096 * 1024``); True when the comparison
    was about a shape. Only a tensor bound the same way at the comparison and at the launch counts."""
    kind = type(operator)
    for one, other, upper in ((left, right, kind in (cst.Equal, cst.LessThan, cst.LessThanEqual)),
                              (right, left, kind in (cst.Equal, cst.GreaterThan, cst.GreaterThanEqual))):
        strict = kind in (cst.LessThan, cst.GreaterThan)
        whole = _whole_shape(one)
        if whole is not None:
            entries = _shape_entries(other)
            if kind is cst.Equal and entries is not None and _same_binding(resolver, whole, site):
                for i, entry in enumerate(entries):
                    value = resolver.literal_value(entry, site)
                    if value is not None and value >= 0:
                        found.dims[(whole.value, i)] = found.dims[(whole.value, i - len(entries))] = value
            return True
        tensor, dim, numel = _shape_part(one)
        if tensor is None:
            continue
        value = resolver.literal_value(other, site) if upper else None
        if value is not None and _same_binding(resolver, tensor, site):
            bound = value - 1 if strict else value
            if bound >= 0 and numel:
                found.numels[tensor.value] = min(bound, found.numels.get(tensor.value, bound))
            elif bound >= 0:
                found.dims[(tensor.value, dim)] = min(bound, found.dims.get((tensor.value, dim), bound))
        return True
    return False


def _whole_shape(expr: cst.BaseExpression) -> cst.Name | None:
    """``x`` of ``x.shape``, ``x.size()``, ``tuple(x.shape)``, ``list(x.shape)``."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("tuple", "list") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" \
            and not expr.args:
        expr = expr.func
    if type(expr) is cst.Attribute and expr.attr.value in ("shape", "size") and type(expr.value) is cst.Name:
        return expr.value
    return None


def _shape_entries(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The entries of ``(4096, 1024)``, ``[4096, 1024]``, ``torch.Size([4096, 1024])``."""
    if type(expr) is cst.Call and len(expr.args) == 1 and (
            type(expr.func) is cst.Attribute and expr.func.attr.value == "Size"
            or type(expr.func) is cst.Name and expr.func.value in ("Size", "tuple", "list")):
        expr = expr.args[0].value
    if type(expr) in (cst.Tuple, cst.List) and all(type(e) is cst.Element for e in expr.elements):
        return [e.value for e in expr.elements]
    return None


def _shape_part(expr: cst.BaseExpression) -> tuple[cst.Name | None, int | None, bool]:
    """(``x``, dim, False) for ``x.shape[dim]`` and ``x.size(dim)``; (``x``, None, True) for ``x.numel()``."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        shape, dim = expr.value, hf.literal_dim(expr.slice[0].slice.value)
        if dim is not None and type(shape) is cst.Attribute and shape.attr.value == "shape" \
                and type(shape.value) is cst.Name:
            return shape.value, dim, False
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Name:
        if expr.func.attr.value == "numel" and not expr.args:
            return expr.func.value, None, True
        if expr.func.attr.value == "size" and len(expr.args) == 1:
            dim = hf.literal_dim(expr.args[0].value)
            if dim is not None:
                return expr.func.value, dim, False
    return None, None, False


def _same_binding(resolver, name: cst.Name, site: cst.CSTNode) -> bool:
    """The name read in a condition holds the same value there as at ``site`` (the launch). The name node is the
    source's own (a negated early-exit test is rebuilt around it), so its position is known."""
    first, second = resolver.lookup(name.value, name), resolver.lookup(name.value, site)
    return first[0] == second[0] != "unknown" and first[1] is second[1]


def _spelled(expr: cst.BaseExpression) -> str | None:
    if type(expr) is cst.Integer:
        return str(expr.evaluated_value)
    return expr.value if type(expr) is cst.Name else None


def _launch_renames(facts: ModuleFacts, use: cst.Name, kernel: Kernel) -> dict[str, str]:
    """Host name (or literal) -> kernel parameter for what a direct launch passes (``T=seq_len``, ``BT=128``);
    a size is also known by its canonical spelling (``x.shape[0]`` for ``M`` of ``M, N = x.shape``)."""
    launch = next((l for l in facts.launches if l.kernel is kernel and l.target is use), None)
    if launch is None:
        return {}
    resolver = _analysis(facts)
    renames: dict[str, str] = {}
    for param in kernel.params:
        argument = launch_argument(launch, param)
        passed = _spelled(argument or cst.Name("None"))
        if passed is not None and passed != param and passed != "None":
            renames.setdefault(passed, param)
        key = se.canonical(resolver, argument, launch.call) if argument is not None else None
        if key is not None and key != param and key != "None":
            renames.setdefault(key, param)
    return renames


def _factor_magnitude(factor: Factor, kernel: Kernel) -> tuple[int, frozenset[str]]:
    from . import magnitudes as mag

    kind = factor.kind
    if kind is Kind.LITERAL:
        return (mag.of_int(factor.value) if factor.value is not None else mag.GRID_AXIS_BITS), frozenset()
    if kind is Kind.CONSTANT:
        return mag.CONSTEXPR_BITS, frozenset()
    if factor.is_core_count:
        return mag.CORE_PROGRAM_BITS, frozenset()
    if kind is Kind.TILE_COUNT:
        parts = division_parts(factor.expr)
        if parts is not None:
            numerator, denominator = parts
            top = _host_bits(numerator)
            symbol = _constexpr_symbol(denominator, kernel)
            if symbol is not None:
                return top, frozenset((symbol,))
            if type(denominator) is cst.Integer:
                return mag.quotient(top, denominator.evaluated_value), frozenset()
        return mag.GRID_AXIS_BITS, frozenset()
    if kind is Kind.EXTENT:
        return _host_bits(factor.expr), frozenset()
    return mag.GRID_AXIS_BITS, frozenset()


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


def _host_bits(expr: cst.BaseExpression) -> int:
    """The magnitude of a host-side size: by the name it is spelled with, products adding up."""
    from . import magnitudes as mag

    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
        return mag.product(_host_bits(expr.left), _host_bits(expr.right))
    if type(expr) is cst.Name:
        return mag.name_bits(expr.value)
    if type(expr) is cst.Integer:
        return mag.of_int(expr.evaluated_value)
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "numel":
        return mag.SIZE_BITS
    return mag.EXTENT_BITS


def _constexpr_symbol(expr: cst.BaseExpression, kernel: Kernel) -> str | None:
    """``meta["BT"]`` or a host name ``BT`` spelled like a constexpr parameter of the launched kernel."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        key = expr.slice[0].slice
        if type(key) is cst.Index and type(key.value) is cst.SimpleString:
            name = key.value.evaluated_value
            return name if name in kernel.constexpr else None
    if type(expr) is cst.Name and expr.value in kernel.constexpr:
        return expr.value
    return None


# -- resolution ----------------------------------------------------------------------------------------------------
@dataclass
class _Scope:
    """Assignments of one host scope (a non-kernel function or the module), in source order."""

    node: cst.CSTNode
    bindings: dict[str, list[tuple[int, cst.CSTNode]]] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)


def _analysis(facts: ModuleFacts) -> _GridAnalysis:
    """The grid analysis lives on the module facts it belongs to, and dies with them."""
    return facts.memo("grid_analysis", lambda: _GridAnalysis(facts))


class _GridAnalysis:
    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.index = facts.index
        self._scopes: dict[int, _Scope] = {}
        self._grids: dict[int, LaunchGrid] = {}
        self._chunked_params: dict[int, frozenset[str]] = {}
        # ``b, s, _ = x.shape`` binds each name to a synthetic ``x.shape[i]``: id -> (tensor name, i, rank)
        self.shape_items: dict[int, tuple[str, int, int]] = {}

    # -- scopes ---------------------------------------------------------------------------------------------------
    def _scope_node(self, node: cst.CSTNode) -> cst.CSTNode:
        for ancestor in self.index.ancestors(node):
            if type(ancestor) is cst.FunctionDef:
                return ancestor
        return self.facts.module

    def _scope(self, node: cst.CSTNode) -> _Scope:
        found = self._scopes.get(id(node))
        if found is None:
            found = self._scopes[id(node)] = self._build_scope(node)
        return found

    def _build_scope(self, scope_node: cst.CSTNode) -> _Scope:
        scope = _Scope(scope_node)
        if type(scope_node) is cst.FunctionDef:
            params = scope_node.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                scope.params.add(param.name.value)
            nodes = self.index.subtree(scope_node)[1:]
        else:
            nodes = self.index.of_type(cst.Assign, cst.AnnAssign, cst.FunctionDef)
        order = self.index.order
        for node in nodes:
            if self._is_loop_product(node, scope_node):  # M = 1; for i in range(dim): M *= x.shape[i]
                scope.bindings.setdefault(node.target.value, []).append((order(node), node))
                continue
            if type(node) not in (cst.Assign, cst.AnnAssign, cst.FunctionDef):
                continue
            if self._scope_node(node) is not scope_node:
                continue
            if type(node) is cst.Assign:
                for target in node.targets:
                    self._bind(scope, target.target, node.value, order(node))
            elif type(node) is cst.AnnAssign:
                if node.value is not None:
                    self._bind(scope, node.target, node.value, order(node))
            else:
                scope.bindings.setdefault(node.name.value, []).append((order(node), node))
        return scope

    def _bind(self, scope: _Scope, target: cst.BaseExpression, value: cst.BaseExpression, position: int) -> None:
        if type(target) is cst.Name:
            scope.bindings.setdefault(target.value, []).append((position, value))
        elif (
            type(target) in (cst.Tuple, cst.List)
            and type(value) in (cst.Tuple, cst.List)
            and len(target.elements) == len(value.elements)
        ):
            for element, item in zip(target.elements, value.elements):
                self._bind(scope, element.value, item.value, position)
        elif type(target) in (cst.Tuple, cst.List) and _starred_shape(value, len(target.elements)) is not None:
            shape, rest = _starred_shape(value, len(target.elements))  # B, T, H, K, V = *k.shape, v.shape[-1]
            rank = len(target.elements) - len(rest)
            for i, element in enumerate(target.elements[:rank]):
                self._bind(scope, element.value, self._shape_item(shape, i, rank), position)
            for element, item in zip(target.elements[rank:], rest):
                self._bind(scope, element.value, item, position)
        elif type(target) in (cst.Tuple, cst.List):  # rows, cols = x.shape: each name is one item of the value
            rank = len(target.elements) if not any(type(e) is cst.StarredElement for e in target.elements) else 0
            for i, element in enumerate(target.elements):
                self._bind(scope, element.value, self._shape_item(value, i, rank), position)

    def _is_loop_product(self, node: cst.CSTNode, scope_node: cst.CSTNode) -> bool:
        """``M *= x.shape[i]`` (or ``x.size(i)``, ``shape[i]``) in a ``for`` loop of this host function: ``M`` is the
        product of several dimensions of a tensor, a total size."""
        if not (type(node) is cst.AugAssign and type(node.operator) is cst.MultiplyAssign
                and type(node.target) is cst.Name and _is_shape_entry(node.value)):
            return False
        for ancestor in self.index.ancestors(node):
            if ancestor is scope_node or type(ancestor) in (cst.FunctionDef, cst.Lambda):
                return False
            if type(ancestor) is cst.For:
                return self._scope_node(node) is scope_node
        return False

    def _shape_item(self, value: cst.BaseExpression, i: int, rank: int) -> cst.Subscript:
        item = cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
        if rank and type(value) is cst.Attribute and value.attr.value == "shape" and type(value.value) is cst.Name:
            self.shape_items[id(item)] = (value.value.value, i, rank)
        return item

    def lookup(self, name: str, site: cst.CSTNode) -> tuple[str, cst.CSTNode | None]:
        """("value", expr) for the last assignment before ``site``; ("param", None); or ("unknown", None)."""
        scope_node = self._scope_node(site)
        position = self.index.order(site)
        enclosing = False  # names of an enclosing scope are read when the inner function runs, after them
        while True:
            scope = self._scope(scope_node)
            candidates = scope.bindings.get(name, ())
            before = [value for at, value in candidates if at < position or enclosing]
            if before:
                return "value", before[-1]
            if name in scope.params:
                return "param", None
            if scope_node is self.facts.module:
                return "unknown", None
            enclosing = True
            scope_node = self._scope_node(scope_node)

    def assignments_before(self, name: str, site: cst.CSTNode) -> list[cst.CSTNode]:
        """Every value assigned to ``name`` in the host function around ``site`` before it (each branch's)."""
        scope = self._scope(self._scope_node(site))
        position = self.index.order(site)
        return [value for at, value in scope.bindings.get(name, ()) if at < position]

    def used_as_tensor_before(self, name: str, site: cst.CSTNode) -> bool:
        """``name.attr`` (``g.transpose``, ``w.shape``) or ``name[...]`` in the host function before ``site``,
        outside any ``if``: the name is not None by then (the host would have failed)."""
        scope_node = self._scope_node(site)
        if type(scope_node) is not cst.FunctionDef:
            return False
        position = self.index.order(site)
        for node in self.index.subtree(scope_node):
            if self.index.order(node) >= position:
                break
            base = node.value if type(node) in (cst.Attribute, cst.Subscript) else None
            if type(base) is cst.Name and base.value == name and not self._conditional(node, scope_node):
                return True
        return False

    def _conditional(self, node: cst.CSTNode, scope_node: cst.CSTNode) -> bool:
        for ancestor in self.index.ancestors(node):
            if ancestor is scope_node:
                return False
            if type(ancestor) in (cst.If, cst.IfExp, cst.BooleanOperation, cst.While, cst.For, cst.Try):
                return True
        return False

    def optional_param(self, name: str, site: cst.CSTNode) -> bool:
        """A parameter of the host function around ``site`` that defaults to None or is annotated Optional."""
        scope_node = self._scope_node(site)
        while type(scope_node) is cst.FunctionDef:
            params = scope_node.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.name.value != name:
                    continue
                if _is_none(param.default):
                    return True
                annotation = param.annotation.annotation if param.annotation is not None else None
                text = self.facts.module.code_for_node(annotation) if annotation is not None else ""
                return "Optional" in text or "None" in text
            scope_node = self._scope_node(scope_node)
        return False

    def literal_choices(self, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> list[int]:
        """Every literal ``expr`` can be at ``site``: each host assignment of a name before it (``BD = 128`` in one
        branch, ``BD = 16`` in the other), both sides of a conditional expression; empty when one of them is not
        a literal."""
        if type(expr) is cst.Integer:
            return [integer_value(expr)]
        if depth >= _MAX_DEPTH:
            return []
        helper = helper_literals(self.facts, expr) or helper_item_literals(self.facts, expr)
        if helper and not isinstance(helper[0], tuple):  # BLOCK = _block_for(n); BM, BN = _tiles(M, N)
            return list(helper)
        if type(expr) is cst.IfExp:
            body, orelse = self.literal_choices(expr.body, site, depth + 1), self.literal_choices(expr.orelse, site,
                                                                                                 depth + 1)
            return body + orelse if body and orelse else []
        if type(expr) is not cst.Name:
            return []
        scope = self._scope(self._scope_node(site))
        position = self.index.order(site)
        bound = [value for at, value in scope.bindings.get(expr.value, ()) if at < position]
        if not bound:
            status, value = self.lookup(expr.value, site)
            bound = [value] if status == "value" else []
        found: list[int] = []
        for value in bound:
            choices = self.literal_choices(value, site, depth + 1) if isinstance(value, cst.BaseExpression) else []
            if not choices:
                return []  # one assignment is not a literal: the value is not known here
            found += choices
        return found

    def literal_value(self, expr: cst.BaseExpression, site: cst.CSTNode, depth: int = 0) -> int | None:
        if type(expr) is cst.Integer:
            return integer_value(expr)
        if type(expr) is cst.Name and depth < _MAX_DEPTH:
            status, value = self.lookup(expr.value, site)
            if status == "value" and isinstance(value, cst.BaseExpression):
                return self.literal_value(value, site, depth + 1)
        if type(expr) is cst.BinaryOperation and depth < _MAX_DEPTH:  # 4096 * 1024, 1 << 16
            operate = _LITERAL_ARITHMETIC.get(type(expr.operator))
            left = self.literal_value(expr.left, site, depth + 1) if operate else None
            right = self.literal_value(expr.right, site, depth + 1) if left is not None else None
            if right is not None and (type(expr.operator) is not cst.FloorDivide or right) and \
                    (type(expr.operator) not in (cst.LeftShift, cst.Power) or 0 <= right <= 64):
                return operate(left, right)
        return None

    # -- grids ----------------------------------------------------------------------------------------------------
    def grid(self, launch: Launch) -> LaunchGrid:
        found = self._grids.get(id(launch.call))
        if found is None:
            found = self._grids[id(launch.call)] = self._build_grid(launch)
        return found

    def _build_grid(self, launch: Launch) -> LaunchGrid:
        site = launch.call
        shape = self._grid_shape(launch.grid, site, 0)
        if shape is None:
            return LaunchGrid(launch, None)
        chunking = self._chunking_names(site) | self._chunked_by_callers(site)
        grown = self._grown_until_fits(site)
        axes = []
        for element in _elements(shape):
            factors = _Classifier(self, site, launch).factors(element, 0, frozenset())
            if chunking:
                factors = [replace(f, chunked=True) if f.names & chunking else f for f in factors]
            if grown:
                factors = [replace(f, capped=True) if f.names & grown else f for f in factors]
            axes.append(tuple(factors))
        axes = self._related_axes(_elements(shape), axes, launch)
        return LaunchGrid(launch, tuple(axes), shape)

    def _related_axes(self, elements: list, axes: list, launch: Launch) -> list:
        """Axes that the host sizes from each other. ``(progs, cdiv(total, progs))`` with ``progs`` bounded (a core
        count, ``min(cores, total)``) launches about ``total`` programs: the quotient axis is read as ``total``.
        ``(n, min(blocks, 65535 // n))`` keeps the product of both axes under the literal: both are capped."""
        site = launch.call
        chains = [self._chain(element, site) for element in elements]
        for j, chain in enumerate(chains):
            for expr in chain:
                parts = division_parts(expr) if type(expr) is cst.Call or _rounds_up(expr) else None
                if parts is None:
                    continue
                i = self._axis_named(parts[1], chains, j, site)
                if i is not None and not any(f.grows for f in axes[i]):
                    factors = _Classifier(self, site, launch).factors(parts[0], 0, frozenset())
                    axes[j] = tuple(replace(f, names=f.names | frozenset(n for a in axes[j] for n in a.names))
                                    for f in factors)
                    break
            for expr in chain:
                if not (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "min"):
                    continue
                for arg in expr.args:
                    value = arg.value
                    if not (type(value) is cst.BinaryOperation and type(value.operator) is cst.FloorDivide):
                        continue
                    cap = self.literal_value(value.left, site)
                    i = self._axis_named(value.right, chains, j, site)
                    if cap is not None and cap <= 65535 and i is not None:
                        axes[i] = tuple(replace(f, capped=True) for f in axes[i])
                        axes[j] = tuple(replace(f, capped=True) for f in axes[j])
        return axes

    def _chain(self, expr: cst.BaseExpression, site: cst.CSTNode) -> list[cst.BaseExpression]:
        """``expr`` and what the host names it is spelled with were last assigned (``grid = (progs, ...)``,
        ``progs = min(cores, total)``), in order."""
        found = [expr]
        for _ in range(_MAX_DEPTH):
            if type(expr) is not cst.Name:
                break
            status, value = self.lookup(expr.value, site)
            if status != "value" or not isinstance(value, cst.BaseExpression) or any(value is f for f in found):
                break
            found.append(value)
            expr = value
        return found

    def _axis_named(self, expr: cst.BaseExpression, chains: list, own: int, site: cst.CSTNode) -> int | None:
        """The other grid axis that ``expr`` (a divisor) spells, by name or by the same expression."""
        targets = self._chain(expr, site)
        for i, chain in enumerate(chains):
            if i == own:
                continue
            if any(a.deep_equals(b) for a in chain for b in targets if type(a) is not cst.Integer):
                return i
        return None

    def _grid_shape(self, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> cst.BaseExpression | None:
        if depth > _MAX_DEPTH:
            return None
        if type(expr) is cst.Lambda:
            return self._grid_shape(expr.body, site, depth + 1)
        if type(expr) is cst.Name:
            status, value = self.lookup(expr.value, site)
            if status != "value":
                return None
            if type(value) is cst.FunctionDef:
                returned = _single_return(value)
                return None if returned is None else self._grid_shape(returned, site, depth + 1)
            return self._grid_shape(value, site, depth + 1)
        if type(expr) in (cst.Tuple, cst.List):
            if any(element.value is None or type(element) is cst.StarredElement for element in expr.elements):
                return None
            return expr
        if type(expr) in (cst.Integer, cst.Call, cst.BinaryOperation, cst.Subscript, cst.Attribute):
            return expr
        return None

    def _grown_until_fits(self, site: cst.CSTNode) -> frozenset[str]:
        """Names a host ``while`` loop before ``site`` grows until a size it tests against a literal fits
        (``while triton.cdiv(n, block) > 65535: block *= 2``): a grid divided by them is capped by that test."""
        scope_node = self._scope_node(site)
        if type(scope_node) is not cst.FunctionDef:
            return frozenset()
        position = self.index.order(site)
        names: set[str] = set()
        for loop in self.index.of_type(cst.While):
            if self.index.order(loop) >= position or self._scope_node(loop) is not scope_node:
                continue
            if any(ancestor is loop for ancestor in self.index.ancestors(site)):
                continue
            test = loop.test
            if not (type(test) is cst.Comparison and any(
                    self.literal_value(c.comparator, site) is not None for c in test.comparisons)):
                continue
            for node in self.index.subtree(loop):
                if type(node) is cst.AugAssign and type(node.operator) in (cst.MultiplyAssign, cst.AddAssign,
                                                                           cst.LeftShiftAssign):
                    names.update(_target_names(node.target))
        return frozenset(names)

    def _chunked_by_callers(self, site: cst.CSTNode) -> frozenset[str]:
        """The parameters of the host function around ``site`` when every call of it in this module sits in a host
        loop that walks the data in chunks (``for start in range(0, n, step)``, ``for off, size in
        iter_launch_chunks(n, ...)``): the launch sees one chunk of what those parameters hold."""
        function = self._scope_node(site)
        if type(function) is not cst.FunctionDef:
            return frozenset()
        cached = self._chunked_params.get(id(function))
        if cached is None:
            uses = [node for node in self.index.names(function.name.value) if node is not function.name]
            calls = [node for node in uses
                     if type(self.index.parent(node)) is cst.Call and self.index.parent(node).func is node]
            cached = frozenset()
            if calls and len(calls) == len(uses) and all(self._in_chunk_loop(call) for call in calls):
                params = function.params
                cached = frozenset(p.name.value for p in (*params.posonly_params, *params.params,
                                                          *params.kwonly_params))
            self._chunked_params[id(function)] = cached
        return cached

    def _in_chunk_loop(self, node: cst.CSTNode) -> bool:
        for ancestor in self.index.ancestors(node):
            if type(ancestor) in (cst.FunctionDef, cst.Lambda):
                return False
            if type(ancestor) is cst.For and (_is_stepped_range(ancestor.iter) or type(ancestor.iter) is cst.Call
                                              and _CHUNKS.search(dotted_name(ancestor.iter.func) or "")):
                return True
        return False

    def _chunking_names(self, site: cst.CSTNode) -> frozenset[str]:
        """Names bound by host loops around ``site`` that walk the data in chunks (``range(a, b, step)``, while)."""
        names: set[str] = set()
        for ancestor in self.index.ancestors(site):
            if type(ancestor) is cst.FunctionDef:
                break
            if type(ancestor) is cst.For and _is_stepped_range(ancestor.iter):
                names.update(_target_names(ancestor.target))
                step = ancestor.iter.args[2].value  # a grid sized by the step is sized per chunk
                names.update(n.value for n in (step, *self.index.descendants(step)) if type(n) is cst.Name)
            elif type(ancestor) is not cst.While:
                continue
            for node in self.index.subtree(ancestor):
                if type(node) is cst.Assign:
                    for target in node.targets:
                        names.update(_target_names(target.target))
                elif type(node) is cst.AugAssign:
                    names.update(_target_names(node.target))
        return frozenset(names)


class _Classifier:
    """Turns one grid axis into classified product factors, following host names from one launch site."""

    def __init__(self, grids: _GridAnalysis, site: cst.CSTNode, launch: Launch | None = None) -> None:
        self.grids = grids
        self.facts = grids.facts
        self.site = site
        self.launch = launch
        self._guards: _SiteFacts | None = None

    @property
    def guards(self) -> _SiteFacts:
        if self._guards is None:
            self._guards = _site_facts(self.grids, self.facts, self.site)
        return self._guards

    def factors(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> list[Factor]:
        if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
            found = self.factors(expr.left, depth, names) + self.factors(expr.right, depth, names)
            return self._batch_times_length(self._flattened_rows(found, expr))
        if type(expr) is cst.Name:
            return self._name(expr, depth, names)
        return [self._single(expr, depth, names)]

    @staticmethod
    def _batch_times_length(factors: list[Factor]) -> list[Factor]:
        """``batch * seq_len`` with ``batch = x.shape[0]`` of an activation: the tokens of the batch (the rows of
        ``x`` flattened), also when the length is a literal at this launch."""
        batches = [f for f in factors if f.batch_rows]
        if not batches:
            return factors
        if not any(f not in batches and any(_is_token_name(n) for n in f.names) for f in factors):
            return factors
        return [replace(f, tokens=True, host_tokens=True,
                        evidence=f"`{sorted(f.names)[0]}` is the leading dimension of an activation"
                        " times a sequence length") if f.batch_rows else f for f in factors]

    def _flattened_rows(self, factors: list[Factor], expr: cst.BaseExpression) -> list[Factor]:
        """``b * s`` of ``b, s, _ = x.shape``: leading dimensions of one tensor, one of them named as a token count,
        multiply into the rows of the flattened tensor, a total size (``B * H`` of ``B, H, D = q.shape`` does not)."""
        by_tensor: dict[str, list[tuple[int, int, Factor]]] = {}
        for factor in factors:
            item = self.grids.shape_items.get(id(factor.expr))
            if item is not None and factor.kind is Kind.EXTENT:
                by_tensor.setdefault(item[0], []).append((item[1], item[2], factor))
        for dims in by_tensor.values():
            indices = {index for index, _, _ in dims}
            leading = len(indices) >= 2 and indices == set(range(len(indices)))
            if leading and any(_is_token_name(name) for _, _, f in dims for name in f.names):
                merged = [f for _, _, f in dims]
                rows = Factor(Kind.TOTAL_SIZE, expr, names=frozenset().union(*(f.names for f in merged)), rows=True,
                              tokens=True, host_tokens=True)
                return [f for f in factors if all(f is not m for m in merged)] + [rows]
        return factors

    def _name(self, expr: cst.Name, depth: int, names: frozenset[str]) -> list[Factor]:
        name = expr.value
        if depth >= _MAX_DEPTH or name in names:  # too deep, or a name defined through itself
            return [Factor(Kind.UNKNOWN, expr, names=names)]
        names = names | {name}
        bound = self.guards.bounds.get(name)
        if bound is not None:  # if N <= 128: ... kernel[(N,)]
            return [Factor(Kind.LITERAL, expr, value=bound, capped=True, names=names)]
        status, value = self.grids.lookup(name, self.site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            found = [replace(f, names=f.names | names) for f in self.factors(value, depth + 1, names)]
        elif status == "value" and type(value) is cst.AugAssign:  # a product of dimensions built in a loop
            found = [Factor(Kind.TOTAL_SIZE, expr, names=names | _receiver_names(value.value))]
        elif status == "param":
            found = [Factor(Kind.EXTENT, expr, names=names)]
        else:
            found = [Factor(Kind.UNKNOWN, expr, names=names)]
        found = self._named(name, found, expr)
        if len(found) == 1 and found[0].tokens and not found[0].rows and mag.name_bits(name) <= mag.BATCH_BITS:
            found = [replace(found[0], tokens=False, host_tokens=False, evidence="", batch_rows=True,
                             batch_axis=True)]  # batch = x.shape[0]
        if len(found) == 1 and found[0].kind in (*RUNTIME_KINDS, Kind.UNKNOWN) and _ROUTED_TILES.fullmatch(name):
            found = [replace(found[0], kind=Kind.TILE_COUNT, tokens=True, host_tokens=True, launch_wide=True,
                             evidence=f"`{name}` counts tiles of the routed tokens")]
        if len(found) == 1 and found[0].kind in RUNTIME_KINDS and not found[0].tokens and _is_token_name(name):
            found = [replace(found[0], tokens=True, evidence=found[0].evidence or f"`{name}` counts tokens or rows",
                             host_tokens=found[0].host_tokens or _SEQUENCE_LENGTH.fullmatch(name) is not None)]
        return found

    @staticmethod
    def _named(name: str, found: list[Factor], expr: cst.Name) -> list[Factor]:
        """A host name that says what it counts refines an opaque value: ``_, num_vectorcore = props()`` is a core
        count, ``H = A_log.numel()`` counts heads (not a whole tensor's size)."""
        if len(found) != 1:
            return found
        factor = found[0]
        core = _core_name_kind(name)
        if core is not None and factor.kind in (Kind.EXTENT, Kind.UNKNOWN):
            return [replace(factor, kind=core, expr=expr)]
        if factor.kind is Kind.TOTAL_SIZE and not factor.rows and mag.name_bits(name) <= mag.BATCH_BITS:
            return [replace(factor, kind=Kind.EXTENT)]
        return found

    def _one(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> Factor:
        """The expression as a single factor (a product inside a sum or a division is folded)."""
        return _fold(self.factors(expr, depth, names), expr)

    def _single(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> Factor:
        if type(expr) is cst.Integer:
            return Factor(Kind.LITERAL, expr, value=integer_value(expr))
        if type(expr) is cst.Call:
            return self._call(expr, depth, names)
        if type(expr) is cst.Attribute:
            kind = _CORE_PROPERTIES.get(expr.attr.value)
            return Factor(kind or Kind.UNKNOWN, expr, names=names)
        if type(expr) is cst.Subscript:
            return self._subscript(expr, depth, names)
        if type(expr) is cst.BooleanOperation and type(expr.operator) is cst.Or:
            return self._override_or_default(expr, depth, names)
        if type(expr) is cst.IfExp:  # NT = cdiv(T, BT) if cu_seqlens is None else len(chunk_indices)
            return self._conditional(expr, depth, names)
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) in (cst.FloorDivide, cst.Divide):
                numerator, denominator = division_parts(expr) if _rounds_up(expr) else (expr.left, expr.right)
                return self._divide(expr, numerator, denominator, depth, names)
            if type(expr.operator) in (cst.Add, cst.Subtract):
                left = self._one(expr.left, depth, names)
                if _is_segment_count(expr, left):
                    return replace(left, kind=Kind.EXTENT, expr=expr)
                return _sum(left, self._one(expr.right, depth, names), expr)
        return Factor(Kind.UNKNOWN, expr, names=names)

    def _conditional(self, expr: cst.IfExp, depth: int, names: frozenset[str]) -> Factor:
        """``a if test else b``: the faster-growing side that can be taken. A side the test bounds is bounded
        (``g if g < 65536 else 2048``, ``t if t <= cores else min(t, cores * 6)``); a ``x is None`` test that the
        launch's own guard decides (``if max_programs is not None:``) leaves one side."""
        sides = []
        decided = self._decided(expr.test)
        for taken, side in ((True, expr.body), (False, expr.orelse)):
            if decided is not None and decided is not taken:
                continue
            factor = self._one(side, depth, names)
            limit = _side_limit(expr.test, side, taken)
            if limit is not None:
                bound, strict = limit
                value = self.grids.literal_value(bound, self.site)
                if value is not None:
                    factor = Factor(Kind.LITERAL, side, value=value - 1 if strict else value, capped=True,
                                    names=factor.names)
                else:
                    factor = _minimum([factor, self._one(bound, depth, names)], side)
            sides.append(factor)
        return _fold_max(sides, expr)

    def _decided(self, test: cst.BaseExpression) -> bool | None:
        """The value of ``x is None`` / ``x is not None`` where the launch is guarded by ``x is not None``."""
        if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
            return None
        target = test.comparisons[0]
        if not (type(test.left) is cst.Name and _is_none(target.comparator)):
            return None
        if test.left.value not in self.guards.not_none:
            return None
        if type(target.operator) is cst.Is:
            return False
        return True if type(target.operator) is cst.IsNot else None

    def _override_or_default(self, expr: cst.BooleanOperation, depth: int, names: frozenset[str]) -> Factor:
        """``n_cores or vector_core_count(dev)``: an optional caller override in front of a computed default.

        The default says what the value is meant to be; a core-count default makes the whole a core count.
        """
        left, right = self._one(expr.left, depth, names), self._one(expr.right, depth, names)
        if right.is_core_count and left.kind in (Kind.EXTENT, Kind.UNKNOWN, Kind.CONSTANT, Kind.LITERAL):
            return replace(right, expr=expr, names=left.names | right.names)
        return _fold_max([left, right], expr)

    def _call(self, call: cst.Call, depth: int, names: frozenset[str]) -> Factor:
        func = call.func
        short = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        qualified = self.facts.qualname(func) or dotted_name(func) or ""
        if short in _DIVIDE_UP and len(args) == 2:
            return self._divide(call, args[0], args[1], depth, names, rounds_up=True)
        if short == "min" and type(func) is cst.Name and len(args) >= 2:
            return _minimum([self._one(a, depth, names) for a in args], call)
        if short == "max" and type(func) is cst.Name and args:
            return _fold_max([self._one(a, depth, names) for a in args], call)
        if (short in _TRANSPARENT_CALLS or qualified in _TRANSPARENT_CALLS) and len(args) == 1:
            return replace(self._one(args[0], depth, names), expr=call)
        if short in _ROOTS and len(args) == 1:
            inner = self._one(args[0], depth, names)
            if inner.kind in RUNTIME_KINDS:
                return Factor(Kind.EXTENT, call, names=inner.names, root=inner.names)
            return replace(inner, expr=call)
        if short == "numel":
            bound = self.guards.numels.get(func.value.value) if type(func) is cst.Attribute and \
                type(func.value) is cst.Name else None
            if bound is not None:  # assert x.numel() == 4096 * 1024
                return Factor(Kind.LITERAL, call, value=bound, capped=True, names=names | _receiver_names(func))
            return Factor(Kind.TOTAL_SIZE, call, names=names | _receiver_names(func))
        if short == "size" and type(func) is cst.Attribute and type(func.value) is cst.Name and len(args) == 1:
            bound = self.guards.dim_bound(func.value.value, hf.literal_dim(args[0]))
            if bound is not None:  # assert x.size(0) <= 512
                return Factor(Kind.LITERAL, call, value=bound, capped=True, names=names | _receiver_names(func))
        if short == "prod" and len(args) == 1 and _is_shape_slice(args[0]):  # math.prod(shape[:dim])
            return Factor(Kind.TOTAL_SIZE, call, names=names | _receiver_names(args[0]))
        if short in ("size", "len", "dim"):
            tensor = hf.receiver(func.value if short == "size" and type(func) is cst.Attribute else args[0]) if (
                short != "dim" and (args or short == "size")) else None
            dim = 0 if short == "len" else hf.literal_dim(args[0]) if args else None
            tokens = tensor is not None and short != "dim" and dim == 0 and hf.leading_dimension_counts_rows(tensor)
            kind = Kind.TILE_COUNT if tokens and _TILE_LIST.search(tensor) else Kind.EXTENT
            return Factor(kind, call, names=names | _receiver_names(func) | _receiver_names(*args[:1]),
                          tokens=tokens, host_tokens=tokens and hf.is_activation(tensor), evidence=f"`{self.facts.module.code_for_node(call)}` counts rows" if tokens
                          else "")
        core = _core_function_kind(short)
        if core is not None:
            return Factor(core, call, names=names)
        helper = helper_literals(self.facts, call)
        if helper and not isinstance(helper[0], tuple):  # a helper that returns one of a few literals
            return Factor(Kind.LITERAL, call, value=max(helper), names=names)
        return Factor(Kind.UNKNOWN, call, names=names)

    def _subscript(self, expr: cst.Subscript, depth: int, names: frozenset[str]) -> Factor:
        helper = helper_item_literals(self.facts, expr)
        if helper:  # BM, BN = _tiles(M, N): an item of a helper's literal tuples
            return Factor(Kind.LITERAL, expr, value=max(helper), names=names)
        key = expr.slice[0].slice if len(expr.slice) == 1 else None
        index = key.value if type(key) is cst.Index else None
        if type(index) is cst.SimpleString:
            text = index.evaluated_value
            if text in _CORE_PROPERTIES:
                return Factor(_CORE_PROPERTIES[text], expr, names=names)
            if self._is_lambda_param(expr.value):
                return self._meta(text, expr, depth, names)
            return Factor(Kind.UNKNOWN, expr, names=names)
        receivers = _receiver_names(expr.value)
        if _is_integer(index, 0) and self._is_flattened(expr.value):
            return Factor(Kind.TOTAL_SIZE, expr, names=names | receivers, rows=True, tokens=True, host_tokens=True)
        item = self.grids.shape_items.get(id(expr))
        tensor, dim = (item[0], item[1]) if item is not None else (hf.receiver(expr.value), hf.literal_dim(index))
        asserted = self._asserted_dim(expr.value, tensor, dim)
        if asserted is not None:  # assert x.shape == (4096, 1024) before the launch
            return Factor(Kind.LITERAL, expr, value=asserted, capped=True, names=names | receivers)
        shape = expr.value
        if type(shape) is cst.Name:  # shape = dY.shape; batch = shape[0]
            status, value = self.grids.lookup(shape.value, self.site)
            if status == "value" and type(value) is cst.Attribute and value.attr.value == "shape":
                shape, tensor = value, hf.receiver(value)
        tokens = (type(shape) is cst.Attribute and shape.attr.value == "shape" and dim == 0
                  and tensor is not None and hf.leading_dimension_counts_rows(tensor)
                  and (item is None or item[2] <= 3))  # [B, T, H, D]: the leading axis is the batch
        kind = Kind.TILE_COUNT if tokens and _TILE_LIST.search(tensor) else Kind.EXTENT
        batch = dim == 0 and item is not None and item[2] >= 3
        sequence = dim == 1 and item is not None and (item[2] >= 3 and hf.is_per_token(tensor)  # T of [B, T, H, K]
                                                      or item[2] == 2 and hf.is_token_ids(tensor))  # [B, seq_len]
        tokens = tokens or sequence and item[2] == 2
        host = tokens and hf.is_activation(tensor) or sequence
        return Factor(kind, expr, names=names | receivers, tokens=tokens, batch_axis=batch, host_tokens=host,
                      evidence=f"`{tensor}.shape[0]` counts rows" if tokens else "")

    def _asserted_dim(self, shape: cst.BaseExpression, tensor: str | None, dim: int | None) -> int | None:
        """The literal a guard before the launch bounds ``tensor.shape[dim]`` by, read where the shape is the
        tensor's own (``x.shape[0]``, or a name unpacked from ``x.shape``)."""
        guards = self.guards
        if not guards.dims or tensor is None or dim is None:
            return None
        if type(shape) is cst.Attribute and shape.attr.value == "shape" and type(shape.value) is cst.Name \
                and shape.value.value == tensor:
            return guards.dim_bound(tensor, dim)
        return None

    def _meta(self, key: str, expr: cst.Subscript, depth: int, names: frozenset[str]) -> Factor:
        """``meta["M"]`` in a grid function: what the launch passes for ``M`` (a runtime size for an int
        parameter, a host tile size for a constexpr); a constant chosen by autotuning when the launch passes none."""
        passed = launch_argument(self.launch, key) if self.launch is not None else None
        if passed is None or depth >= _MAX_DEPTH:
            return Factor(Kind.CONSTANT, expr, names=names)
        found = self._one(passed, depth + 1, names)
        return replace(found, names=found.names | {key})

    def _is_flattened(self, shape: cst.BaseExpression) -> bool:
        """``x.view(-1, D).shape``, or ``g.shape`` after ``g = g.reshape(-1, D)``: its first dimension is every row
        of the tensor folded into one."""
        if not (type(shape) is cst.Attribute and shape.attr.value == "shape"):
            return False
        tensor = shape.value
        for _ in range(_MAX_DEPTH):
            if type(tensor) is cst.Name:
                status, value = self.grids.lookup(tensor.value, self.site)
                if status != "value" or not isinstance(value, cst.BaseExpression) or value is tensor:
                    return False
                tensor = value
                continue
            if not (type(tensor) is cst.Call and type(tensor.func) is cst.Attribute):
                return False
            method = tensor.func.attr.value
            if method in _RESHAPES:
                args = [a.value for a in tensor.args if a.keyword is None and not a.star]
                return len(args) >= 2 and _is_minus_one(args[0])
            if method not in _PASS_METHODS:
                return False
            tensor = tensor.func.value
        return False

    def _is_model_dimension(self, numerator: cst.BaseExpression, folded: Factor) -> bool:
        """A head dim or hidden size, as spelled at the division (``cdiv(V, BV)``, ``cdiv(head_dim, BD)``,
        ``cdiv(meta["D"], meta["BD"])``) or as resolved (the last dimension of a tensor of rank 3 or more)."""
        spelled = numerator.value if type(numerator) is cst.Name else _string_key(numerator)
        if spelled is not None and _MODEL_DIM.fullmatch(spelled):
            return True
        item = self.grids.shape_items.get(id(folded.expr))  # [B, T, H, D]: not a matrix's columns (GEMM N)
        return item is not None and item[2] >= 3 and item[1] == item[2] - 1

    def _is_lambda_param(self, expr: cst.BaseExpression) -> bool:
        """``meta`` in ``lambda meta: ...`` or ``def grid(meta)``: the launch's compile-time meta-parameters."""
        if type(expr) is not cst.Name:
            return False
        for ancestor in self.grids.index.ancestors(expr):
            if type(ancestor) in (cst.Lambda, cst.FunctionDef):
                params = ancestor.params
                return expr.value in {p.name.value for p in (*params.posonly_params, *params.params)}
        return False

    def _divide(self, expr, numerator, denominator, depth, names, rounds_up: bool = False) -> Factor:
        top = self.factors(numerator, depth, names)
        bottom = self._one(denominator, depth, names)
        folded = _fold(top, numerator)
        if folded.is_core_count:
            return replace(folded, expr=expr)
        if folded.kind is Kind.LITERAL and bottom.kind is Kind.LITERAL and folded.value is not None and bottom.value:
            return Factor(Kind.LITERAL, expr, value=-(-folded.value // bottom.value))
        if folded.kind in (Kind.LITERAL, Kind.CONSTANT) or _spells_tile(numerator) and _is_tile_size(bottom, denominator):
            return Factor(Kind.CONSTANT, expr, names=folded.names)  # cdiv(BT, BC): sub-tiles of one tile
        shared = bottom.share
        if shared is not None and shared[2] & folded.names:  # cdiv(n, ceil(n / CORES)): about CORES programs
            kind, value, _ = shared
            return Factor(kind, expr, value=value, names=folded.names | bottom.names)
        if bottom.root & folded.names and _root_split_bounded(bottom):  # cdiv(n, next_power_of_2(sqrt(n)))
            return Factor(Kind.EXTENT, expr, names=folded.names | bottom.names)
        runtime = sum(f.weight for f in top if f.kind in RUNTIME_KINDS or f.kind is Kind.UNKNOWN)
        share = None
        if folded.kind in RUNTIME_KINDS and (bottom.is_core_count or bottom.kind in (Kind.LITERAL, Kind.CONSTANT)):
            share = (bottom.kind, bottom.value, folded.names)
        if folded.kind is Kind.TOTAL_SIZE and not folded.rows or runtime >= 3:
            kind = Kind.TOTAL_SIZE  # ``cdiv(x.numel(), BLOCK)``; the rows of a flattened tensor are tokens
        elif not rounds_up and not _rounds_up(expr) and not _is_tile_size(bottom, denominator):
            kind = Kind.EXTENT  # ``N // group_size``: a ratio of two sizes, not a count of tiles
        else:
            kind = Kind.TILE_COUNT
        return Factor(
            kind,
            expr,
            capped=folded.capped,
            weight=max(1, runtime),
            names=folded.names | bottom.names,
            share=share,
            model_bounded=kind is Kind.TILE_COUNT and self._is_model_dimension(numerator, folded),
            rows=folded.rows,
            tokens=(folded.tokens or folded.batch_rows) and kind is not Kind.EXTENT,
            host_tokens=(folded.host_tokens or folded.batch_rows) and kind is not Kind.EXTENT,
            evidence=folded.evidence or (f"`{sorted(folded.names)[0]}` is the leading dimension of an activation,"
                                         " tiled by the host" if folded.batch_rows and kind is Kind.TILE_COUNT else ""),
            wide=kind is Kind.TILE_COUNT and self._weight_rows(folded) and self._small_tile(denominator),
            tile=self._literal_tile(bottom, denominator),
        )

    def _literal_tile(self, bottom: Factor, denominator: cst.BaseExpression) -> int | None:
        if bottom.kind is Kind.LITERAL and bottom.value:  # min(..., 2048): at most the cap
            return bottom.value
        choices = self.grids.literal_choices(denominator, self.site, 0)
        return max(choices) if choices else None

    def _weight_rows(self, folded: Factor) -> bool:
        """The leading dimension of a weight (``D, W = weight.shape``): its output channels or features."""
        item = self.grids.shape_items.get(id(folded.expr))
        if item is not None:
            return item[1] == 0 and item[2] == 2 and hf.is_weight(item[0])
        expr = folded.expr
        return (type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape"
                and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index
                and hf.literal_dim(expr.slice[0].slice.value) == 0 and hf.is_weight(hf.receiver(expr.value) or ""))

    def _small_tile(self, denominator: cst.BaseExpression) -> bool:
        """Every value the host gives the tile is a literal of at most 16."""
        choices = self.grids.literal_choices(denominator, self.site, 0)
        return bool(choices) and max(choices) <= 16


# -- combining factors ---------------------------------------------------------------------------------------------
def _fold(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
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


def _side_limit(test: cst.BaseExpression, side: cst.BaseExpression, taken: bool):
    """(bound, strict) when ``test`` bounds ``side`` on the branch where it is ``taken``: ``g`` in
    ``g if g < 65536 else ...`` is below 65536, ``t`` in ``... if t > cap else t`` is at most ``cap``."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    operator, left, right = test.comparisons[0].operator, test.left, test.comparisons[0].comparator
    below = {cst.LessThan: True, cst.LessThanEqual: False}  # left below right when true
    above = {cst.GreaterThan: True, cst.GreaterThanEqual: False}  # left above right when true
    kind = type(operator)
    if taken:
        if left.deep_equals(side) and kind in below:
            return right, below[kind]
        if right.deep_equals(side) and kind in above:
            return left, above[kind]
    else:
        if left.deep_equals(side) and kind in above:  # not (g > cap): g <= cap
            return right, not above[kind]
        if right.deep_equals(side) and kind in below:  # not (cap < g): g <= cap
            return left, not below[kind]
    return None


def _is_shape_entry(expr: cst.BaseExpression) -> bool:
    """``x.shape[i]``, ``x.size(i)`` or ``shape[i]`` / ``sizes[i]``: one dimension of a tensor."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        return expr.func.attr.value == "size" and len(expr.args) == 1
    if type(expr) is not cst.Subscript:
        return False
    base = expr.value
    if type(base) is cst.Attribute:
        return base.attr.value == "shape"
    return type(base) is cst.Name and ("shape" in base.value.lower() or "size" in base.value.lower())


def _is_shape_slice(expr: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.shape[:dim]`` or ``shape[1:]``: several dimensions of a tensor."""
    if type(expr) is cst.Subscript:
        if not (len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Slice):
            return False
        expr = expr.value
    if type(expr) is cst.Attribute:
        return expr.attr.value == "shape"
    return type(expr) is cst.Name and "shape" in expr.value.lower()


def _root_split_bounded(divisor: Factor) -> bool:
    """``n`` divided by a divisor that grows like ``sqrt(n)`` stays below 65536 programs up to 2**32 elements; when
    the divisor is capped (``min(sqrt(n), cap)``) the quotient reaches ``n / cap``, below 65536 for tensors up to
    2**31 elements only when the cap is at least 32768."""
    if divisor.kind is Kind.LITERAL:
        return divisor.value is not None and mag.quotient(mag.INT32_BITS, divisor.value) <= mag.GRID_AXIS_BITS
    return divisor.kind in RUNTIME_KINDS and not divisor.capped


def _sum(left: Factor, right: Factor, expr: cst.BaseExpression) -> Factor:
    if left.kind is Kind.LITERAL and right.kind is Kind.LITERAL and None not in (left.value, right.value):
        op = expr.operator if type(expr) is cst.BinaryOperation else None
        value = left.value - right.value if type(op) is cst.Subtract else left.value + right.value
        return Factor(Kind.LITERAL, expr, value=value)
    return _fold_max([left, right], expr)


def _fold_max(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
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


def _minimum(factors: list[Factor], expr: cst.BaseExpression) -> Factor:
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


# -- small syntax helpers ------------------------------------------------------------------------------------------
def _core_function_kind(name: str) -> Kind | None:
    """``get_aicore_num`` / ``cube_core_count`` -> cube, ``get_aivector_core_num`` / ``vector_core_count`` ->
    vector, any other core-count function -> cores."""
    if name == "get_multiprocessor_count":
        return Kind.CORES
    if _CORE_FUNCTION.match(name) is None:
        return None
    if "vector" in name or "aiv" in name:
        return Kind.VECTOR_CORES
    if "aicore" in name or "cube" in name or "aic_" in name:
        return Kind.CUBE_CORES
    return Kind.CORES


def _receiver_names(*exprs: cst.BaseExpression) -> frozenset[str]:
    """The variable a method or attribute chain starts from: ``part`` in ``part.numel`` or ``part.shape[0]``."""
    found = set()
    for expr in exprs:
        while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
            expr = expr.func if type(expr) is cst.Call else expr.value
        if type(expr) is cst.Name:
            found.add(expr.value)
    return frozenset(found)


def is_model_dimension_name(name: str) -> bool:
    """A name spelled like a model dimension (``K``, ``V``, ``D``, ``head_dim``, ``HEAD_DIM``, ``hidden_size``): a size
    the model fixes, whatever the batch or the sequence length."""
    return _MODEL_DIM.fullmatch(name) is not None


def _core_name_kind(name: str) -> Kind | None:
    match = _CORE_NAME.fullmatch(name)
    if match is None or name.lower() == "core":
        return None
    unit = (match.group(1) or "").lower()
    if unit in ("aiv", "vector"):
        return Kind.VECTOR_CORES
    if unit in ("ai", "cube"):
        return Kind.CUBE_CORES
    return Kind.CORES


def _is_token_name(name: str) -> bool:
    return mag.name_bits(name) == mag.TOKEN_BITS and _SPECULATIVE.search(name) is None


# Host names of a token count or sequence length (``T``, ``seq_len``, ``num_tokens``): the language of sequence
# workloads. Generic row counts (``M``, ``rows``, ``n_rows``) of general-purpose ops do not back a finding alone.
_SEQUENCE_LENGTH = lazy(
    r"t|s|seq_?len|seqlen|seq_?length|max_?seq_?len|max_?seqlen|num_?tokens?|n_?tokens?|total_?tokens?|tokens?"
    r"|context_?len|ctx_?len|kv_?len|q_?len|n_?ctx|n_?(q|kv)_?ctx|num_?ctx|\w*_tokens", re.I)
# host helpers that yield (offset, length) chunks of an axis for a loop of launches (``iter_axis_launch_chunks``)
_CHUNKS = lazy(r"chunk", re.I)
# speculative-decoding lengths (``max_spec_len``, ``num_draft_tokens``) count a few draft tokens per request
_SPECULATIVE = lazy(r"spec|draft|accepted", re.I)
# M-tiles of the tokens a MoE routing sends to the experts (``num_m_tiles``, ``n_row_tiles``, ``token_blocks``)
_ROUTED_TILES = lazy(r"(num_?|n_?|total_?)?(m|rows?|tokens?)_?(tiles|blocks)", re.I)
# a host list or tensor of blocks or tiles (``block_info``, ``tile_row_start``): its length counts tiles of rows
_TILE_LIST = lazy(r"block|tile|chunk", re.I)


def _string_key(expr: cst.BaseExpression) -> str | None:
    """``"D"`` of ``meta["D"]``."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        key = expr.slice[0].slice
        if type(key) is cst.Index and type(key.value) is cst.SimpleString:
            return key.value.evaluated_value
    return None


def _spells_tile(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and _TILE_NAME.search(expr.value) is not None


def _is_tile_size(bottom: Factor, denominator: cst.BaseExpression) -> bool:
    """A divisor that is a tile: a literal, a compile-time constant, or a name spelled like a block size."""
    if bottom.kind in (Kind.LITERAL, Kind.CONSTANT):
        return True
    spelled = {denominator.value} if type(denominator) is cst.Name else set()
    return any(_TILE_NAME.search(name) for name in spelled | bottom.names)


def _rounds_up(expr: cst.BaseExpression) -> bool:
    """``(n + B - 1) // B``: a division rounded up by hand."""
    return (
        type(expr) is cst.BinaryOperation
        and type(expr.operator) is cst.FloorDivide
        and type(expr.left) is cst.BinaryOperation
        and type(expr.left.operator) in (cst.Add, cst.Subtract)
    )


def _is_segment_count(expr: cst.BinaryOperation, left: Factor) -> bool:
    """``offsets.numel() - 1``: the number of segments an offsets array delimits, not a total size."""
    return (
        type(expr.operator) is cst.Subtract
        and _is_integer(expr.right, 1)
        and left.kind is Kind.TOTAL_SIZE
        and type(expr.left) is cst.Call
        and type(expr.left.func) is cst.Attribute
        and expr.left.func.attr.value == "numel"
    )


def _is_integer(node, value: int) -> bool:
    return type(node) is cst.Integer and node.evaluated_value == value


def _is_minus_one(node) -> bool:
    return (
        type(node) is cst.UnaryOperation
        and type(node.operator) is cst.Minus
        and _is_integer(node.expression, 1)
    )


def _starred_shape(value, targets: int) -> tuple[cst.Attribute, list[cst.BaseExpression]] | None:
    """``(*k.shape, v.shape[-1])``: the unpacked ``k.shape`` and the items after it."""
    if type(value) not in (cst.Tuple, cst.List) or not value.elements:
        return None
    first, rest = value.elements[0], value.elements[1:]
    if type(first) is not cst.StarredElement or any(type(e) is cst.StarredElement for e in rest):
        return None
    shape = first.value
    if not (type(shape) is cst.Attribute and shape.attr.value == "shape") or targets <= len(rest):
        return None
    return shape, [e.value for e in rest]


def _elements(shape: cst.BaseExpression) -> list[cst.BaseExpression]:
    if type(shape) in (cst.Tuple, cst.List):
        return [element.value for element in shape.elements]
    return [shape]


def _single_return(function: cst.FunctionDef) -> cst.BaseExpression | None:
    body = function.body.body if type(function.body) is cst.IndentedBlock else ()
    returns = [
        small.value
        for statement in body
        if type(statement) is cst.SimpleStatementLine
        for small in statement.body
        if type(small) is cst.Return and small.value is not None
    ]
    return returns[-1] if len(returns) == 1 else None


def _is_stepped_range(expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.Call
        and type(expr.func) is cst.Name
        and expr.func.value == "range"
        and len(expr.args) == 3
    )


def _target_names(target: cst.BaseExpression) -> list[str]:
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in _target_names(element.value)]
    return []
