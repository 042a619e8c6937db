"""Launch values that a name or a shape makes look like a runtime size, which the host code shows fixed or few.

ASC107 reads the value a launch passes for a constexpr as a size that changes with the data from the parameter's name
or its source (``S``, ``rows``, ``M``, a first dimension). Three host forms say otherwise, whatever the names:

- an axis after the sequence axis of a shape unpacking of rank 3 or more (``B, T, H, S = g.shape``,
  ``batch, seq_len, rows, cols = x.shape``): the axes a tensor keeps per token are its features (heads, a head dim),
  fixed per model;
- a value with few possible values: a literal on every host path (an ``if``/``elif`` chain that picks 1, 2, 4 or 16),
  ``max``/``min`` of such values, and a count of rows over a literal of 65535 or more (``cdiv(rows, 65535)``: at most
  17 values up to a million rows, the magnitude model's token count);
- ``len()`` of a list the launch unpacks into the kernel's arguments (``kernel[grid](*tensors, M=len(tensors))``):
  bounded by the number of parameters of the kernel;
- a dimension of a tensor the host builds with literal sizes (``mask = torch.ones(1024, 3072).tril()``), also when
  it builds it only where the caller passes none (a parameter that defaults to ``None``): the launcher's setting,
  like a literal default.
"""

from __future__ import annotations

import libcst as cst

from . import magnitudes as mag
from .module_facts import dotted_name
from .walk import descendants

_MAX_DEPTH = 8
# A divisor from which a count of rows (below 2**TOKEN_BITS) keeps at most 2**4 + 1 values: the grid limit 65535.
_WIDE_DIVISOR = 2 ** (mag.TOKEN_BITS - 4) - 1
_CDIV = {"cdiv", "ceil_div", "ceildiv", "div_up", "round_up_div"}


def fixed_on_the_host(grids, argument: cst.BaseExpression, call: cst.Call) -> bool:
    """The value ``call`` passes (``argument``) is fixed per model or takes a few values, read from the host code."""
    return (_per_token_feature(grids, argument, call, 0) or _few_values(grids, argument, call, 0)
            or _unpacked_count(grids, argument, call, 0) or _literal_built_dimension(grids, argument, call, 0))


def _values(grids, name: str, site: cst.CSTNode) -> list[cst.BaseExpression]:
    """Every value the host function assigns ``name`` before ``site`` (each branch's), else the one an enclosing
    scope gives it; empty for a parameter or a name bound otherwise."""
    found = grids.assignments_before(name, site)
    if not found:
        status, value = grids.lookup(name, site)
        found = [value] if status == "value" else []
    return found if all(isinstance(value, cst.BaseExpression) for value in found) else []


def _per_token_feature(grids, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    """An axis that a shape unpacking of rank 3 or more places after the axis it names as the sequence (a token
    name: ``T``, ``seq_len``, ``rows``): heads or a feature width of each token."""
    if depth > _MAX_DEPTH:
        return False
    if type(expr) is cst.Name:
        values = _values(grids, expr.value, site)
        return bool(values) and all(_per_token_feature(grids, value, site, depth + 1) for value in values)
    item, axes = grids.shape_items.get(id(expr)), grids.shape_axes.get(id(expr))
    if item is None or not axes or item[2] < 3:
        return False
    sequence = next((i for i, name in enumerate(axes) if name and mag.name_bits(name) == mag.TOKEN_BITS), None)
    return sequence is not None and item[1] > sequence


def _few_values(grids, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    """``expr`` takes a few values whatever the data: literals on every path, ``max``/``min`` of such values, a count
    of rows divided by at least the grid limit."""
    if depth > _MAX_DEPTH:
        return False
    kind = type(expr)
    if kind is cst.Integer:
        return True
    if kind is cst.IfExp:
        return _few_values(grids, expr.body, site, depth + 1) and _few_values(grids, expr.orelse, site, depth + 1)
    if kind is cst.Name:
        values = _values(grids, expr.value, site)
        return bool(values) and all(_few_values(grids, value, site, depth + 1) for value in values)
    if kind is cst.Call:
        called = (dotted_name(expr.func) or "").rsplit(".", 1)[-1]
        args = [a.value for a in expr.args if a.keyword is None and not a.star]
        if called in ("max", "min") and args and len(args) == len(expr.args):
            return all(_few_values(grids, arg, site, depth + 1) for arg in args)
        if called in _CDIV and len(args) == 2 == len(expr.args):
            return _rows_over_grid_limit(grids, args[0], args[1], site)
        return False
    if kind is cst.BinaryOperation and type(expr.operator) is cst.FloorDivide:
        return _rows_over_grid_limit(grids, _without_literal_terms(grids, expr.left, site), expr.right, site)
    return False


def _rows_over_grid_limit(grids, count: cst.BaseExpression, divisor: cst.BaseExpression, site: cst.CSTNode) -> bool:
    """``rows / 65535``: a count no larger than a token count over a divisor of at least the grid limit."""
    value = grids.literal_value(divisor, site)
    if value is None or value < _WIDE_DIVISOR:
        return False
    count = _without_literal_terms(grids, count, site)
    if type(count) is not cst.Name or mag.name_bits(count.value) > mag.TOKEN_BITS:
        return False
    return not any(_total_size(value) for value in _values(grids, count.value, site))


def _total_size(value: cst.BaseExpression) -> bool:
    """``x.numel()`` or a product of sizes: a count of elements, which can pass a million rows many times over."""
    for node in (value, *descendants(value)):
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply:
            return True
        if type(node) is cst.Call and (dotted_name(node.func) or "").rsplit(".", 1)[-1] in ("numel", "prod"):
            return True
    return False


def _without_literal_terms(grids, expr: cst.BaseExpression, site: cst.CSTNode) -> cst.BaseExpression:
    """``rows + LIMIT - 1`` -> ``rows``: the rounding terms of a ceiling division."""
    while type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
        if grids.literal_value(expr.right, site) is not None:
            expr = expr.left
        elif type(expr.operator) is cst.Add and grids.literal_value(expr.left, site) is not None:
            expr = expr.right
        else:
            break
    return expr


def _unpacked_count(grids, expr: cst.BaseExpression, call: cst.Call, depth: int) -> bool:
    """``len(items)`` where the launch passes ``*items`` (or a list built from ``items``) as the kernel's
    arguments: one per parameter it fills, so no more than the kernel has."""
    if depth > _MAX_DEPTH:
        return False
    if type(expr) is cst.Name:
        values = _values(grids, expr.value, call)
        return bool(values) and all(_unpacked_count(grids, value, call, depth + 1) for value in values)
    if not (type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "len"
            and len(expr.args) == 1 and type(expr.args[0].value) is cst.Name):
        return False
    return expr.args[0].value.value in _unpacked_names(grids, call)


def _unpacked_names(grids, call: cst.Call) -> set[str]:
    """The names the launch unpacks (``*items``) and the names the values of those are built from
    (``items = indices + [indices[0]] * pad``)."""
    found: set[str] = set()
    for arg in call.args:
        if arg.star != "*" or type(arg.value) is not cst.Name:
            continue
        found.add(arg.value.value)
        for value in _values(grids, arg.value.value, call):
            if type(value) in (cst.BinaryOperation, cst.List, cst.Tuple, cst.Name):
                found.update(_names_in(value))
    return found


def _names_in(node: cst.CSTNode) -> set[str]:
    stack, found = [node], set()
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)
        elif type(current) is not cst.Call:  # `f(x)` builds something else from `x`
            stack.extend(current.children)
    return found


_CONSTRUCTORS = {"ones", "zeros", "empty", "full", "rand", "randn"}


def _literal_built_dimension(grids, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    """``mask.shape[0]`` / ``mask.size(0)`` of a ``mask`` every host assignment of which builds it with literal
    sizes; a parameter counts only with a ``None`` default (the caller normally passes nothing)."""
    if depth > _MAX_DEPTH:
        return False
    if type(expr) is cst.Name:
        values = _values(grids, expr.value, site)
        return bool(values) and all(_literal_built_dimension(grids, value, site, depth + 1) for value in values)
    tensor = _dimension_of(grids, expr)
    if tensor is None:
        return False
    built = grids.assignments_before(tensor, site)
    if not built or not all(isinstance(v, cst.BaseExpression) and _literal_sized(grids, v, site) for v in built):
        return False
    parameters = _parameters(grids, site)
    if tensor in parameters:
        default = parameters[tensor]
        return type(default) is cst.Name and default.value == "None"
    return True


def _dimension_of(grids, expr: cst.BaseExpression) -> str | None:
    """The tensor name ``t`` of ``t.shape[i]``, ``t.size(i)`` or a name unpacked from ``t.shape``."""
    item = grids.shape_items.get(id(expr))
    if item is not None:
        return item[0]
    if type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape":
        owner = expr.value.value
    elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" and expr.args:
        owner = expr.func.value
    else:
        return None
    return owner.value if type(owner) is cst.Name else None


def _parameters(grids, site: cst.CSTNode) -> dict[str, cst.BaseExpression | None]:
    """The parameters of the host function around ``site``, with their defaults."""
    function = grids.scope_node(site)
    if type(function) is not cst.FunctionDef:
        return {}
    params = function.params
    return {p.name.value: p.default for p in (*params.posonly_params, *params.params, *params.kwonly_params)}


def _literal_sized(grids, value: cst.BaseExpression, site: cst.CSTNode) -> bool:
    """``torch.ones(1024, 3072, ...)`` (through methods chained on it: ``.tril(1024)``, ``.to(...)``): every size a
    literal."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and type(value.func.value) is cst.Call:
        value = value.func.value
    if type(value) is not cst.Call:
        return False
    called = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
    if called not in _CONSTRUCTORS:
        return False
    sizes = [a.value for a in value.args if a.keyword is None and not a.star]
    if called == "full":
        sizes = sizes[:1]
    if len(sizes) == 1 and type(sizes[0]) in (cst.Tuple, cst.List):
        sizes = [e.value for e in sizes[0].elements]
    return bool(sizes) and all(grids.literal_value(size, site) is not None for size in sizes)
