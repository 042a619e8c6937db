"""The values host code passes to a kernel's parameters, read at every launch in the module.

The literal values a constexpr parameter takes (at launches, in autotune configs, through literal helpers), the
magnitude of each program id axis, which axes count tokens, and the magnitude of a size or stride argument read
from the host tensors (``x.stride(0)`` of a vocab-sized tensor, ``T = k.shape[1]``). Serves the kernel value
analysis (``values``) and the offset, tile-size and tensor-size rules (ASC202, ASC503).
"""

from __future__ import annotations


from dataclasses import replace

import libcst as cst

from . import host_facts as hf
from . import magnitudes as mag
from .module_facts import Kernel, ModuleFacts
from .literals import integer_value
from .grid import grid_core_source, launch_grid
from .grid_factors import DIVIDE_UP, Factor, Kind, division_parts
from .host_resolver import MAX_DEPTH, host_resolver
from .launch_arguments import launch_argument, launches_of, literal_arguments


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
    resolver = host_resolver(facts)
    for launch in launches_of(facts, kernel):
        for name in (p for p in kernel.params if p in kernel.constexpr):  # in signature order, not a set's
            passed = launch_argument(launch, name)
            if passed is not None:
                found.setdefault(name, []).extend(resolver.literal_choices(passed, launch.call, 0))
    for name, value in autotune_values(facts, kernel):
        if name in kernel.constexpr:
            found.setdefault(name, []).append(value)
    return {name: values for name, values in found.items() if values}


def autotune_values(facts: ModuleFacts, kernel: Kernel) -> list[tuple[str, int]]:
    """The (name, integer) entries of the ``triton.Config`` dicts of ``kernel``'s autotune configs, through a config
    list bound to a host name and list comprehensions over literal lists."""
    autotune = kernel.autotune
    if autotune is None:
        return []
    configs = next((a.value for a in autotune.args if a.keyword is not None and a.keyword.value == "configs"), None)
    if configs is None and autotune.args and autotune.args[0].keyword is None:
        configs = autotune.args[0].value
    resolver = host_resolver(facts)
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


def host_argument_bits(facts: ModuleFacts, kernel: Kernel, param: str) -> tuple[int, bool, bool, int] | None:
    """(magnitude, counts tokens, definite, kind) of what this module's launches pass for the integer parameter
    ``param`` (*kind*: the magnitude the host tensors give before a guard bounds it, which says what sort of size it
    is):
    read from the host expression (``x.stride(-1)`` is 1, ``logits.stride(0)`` a vocabulary, ``x.shape[0]`` of an
    activation its rows, ``x.numel()`` a total size, ``min(n, cap)`` at most the cap, literals and names assigned
    from them) or else from the host name it is spelled with. *Definite* when every launch's value was read from
    what the host tensors are, not from a name. None when no launch is visible or the host says nothing."""
    found = host_argument_bounds(facts, kernel, param)
    if found is None:
        return None
    return found.bits, found.tokens, found.evidence.startswith(_DEFINITE), found.kind_bits


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
    resolver = host_resolver(facts)
    largest = None
    for launch in launches:
        expr = launch_argument(launch, param)
        found = _host_argument(resolver, expr, launch.call, 0) if expr is not None else None
        asserted = _asserted_bound(facts, resolver, expr, launch.call) if expr is not None else None
        if asserted is not None and (found is None or mag.of_int(asserted) < found.bits):
            # smaller than the host's reading; how definite the reading is (what the tensors are) stays as it was
            evidence = f"{found.evidence} (at most {asserted})" if found is not None else f"at most {asserted}"
            found = HostBound(mag.of_int(asserted), False, evidence, found.kind_bits if found is not None else None)
        if found is None:
            largest = None
            break
        if largest is None or found.bits > largest.bits:
            definite = found.evidence.startswith(_DEFINITE) and (
                largest is None or largest.evidence.startswith(_DEFINITE))
            evidence = found.evidence if definite else found.evidence.lstrip(_DEFINITE)
            read = max((b.kind_bits for b in (found, largest) if b is not None and b.read_bits is not None),
                       default=None)
            largest = HostBound(found.bits, found.tokens or bool(largest and largest.tokens), evidence, read)
        elif found.tokens and not largest.tokens:
            largest = replace(largest, tokens=True)
        if largest is not None and not found.evidence.startswith(_DEFINITE):
            largest = replace(largest, evidence=largest.evidence.lstrip(_DEFINITE))
    cache[key] = largest
    return largest


def _asserted_bound(facts: ModuleFacts, resolver, expr: cst.BaseExpression, site: cst.CSTNode) -> int | None:
    """The bound the conditions guarding a launch put on what it passes (``assert head_dim <= 256``, ``assert
    n_heads in (8, 16, 32)``, ``if D > 256: raise``, a shape predicate the caller runs first): a size the host
    checks is at most that, whatever its name says."""
    from .host_bounds import site_facts

    known = site_facts(resolver, facts, site)
    if type(expr) is cst.Name and expr.value in known.bounds:
        return known.bounds[expr.value]
    tensor, dim, _ = hf.shape_part(expr)
    if tensor is None and type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        item = resolver.shape_items.get(id(value)) if status == "value" else None
        if item is not None:
            name, dim, rank = item
            return known.dim_bound(name, dim) or known.dim_bound(name, dim - rank)
        if status == "value" and isinstance(value, cst.BaseExpression):
            tensor, dim, _ = hf.shape_part(value)
    if tensor is not None and dim is not None:
        return known.dim_bound(tensor.value, dim)
    return None


def _host_argument(resolver, expr, site, depth):
    """What one launch passes: a ``HostBound`` whose evidence starts with ``_DEFINITE`` when it was read from the
    host tensors (a stride, a shape, a literal), or None."""
    from . import host_facts as hf
    from .host_facts import HostBound

    if depth >= MAX_DEPTH:
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
        if short in DIVIDE_UP and len(args) == 2:
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
    resolver = host_resolver(facts)
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
