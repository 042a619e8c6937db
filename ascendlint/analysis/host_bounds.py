"""Upper bounds that the conditions guarding a launch put on its host names and tensor shapes.

``if N <= 128:``, ``assert x.shape[0] <= 512``, ``assert x.shape == (4096, 1024)``, names known not to be None, shape
predicates of the module, and bounds the callers of the host function establish. Serves the grid classifier, which
reads a bounded name as capped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from . import host_facts as hf
from . import magnitudes as mag
from . import shape_evidence as se
from .module_facts import ModuleFacts
from .grid_names import spells_core_count
from .host_guards import (
    argument_names,
    call_mapping,
    guarding_conditions,
    host_function,
    literal_collection,
    negation_of,
    private_calls,
    same_binding,
)
from .host_resolver import MAX_DEPTH
from .syntax import is_none


@dataclass
class SiteFacts:
    """What the host conditions guarding one launch say about its host names: upper bounds by a literal
    (``if N <= 128:``, through host names such as ``use_split = (N <= 128) and ...``) and names known not to be None
    (``if max_programs is not None:``). Only names bound the same way at the condition and at the launch."""

    bounds: dict[str, int] = field(default_factory=dict)
    not_none: set[str] = field(default_factory=set)
    # `assert x.shape == (4096, 1024)`, `assert x.shape[0] <= 512`, `x.size(1) == 64`: (tensor, dim) -> bound; a
    # dimension asserted through a shape of known rank is kept under its negative index too
    dims: dict[tuple[str, int], int] = field(default_factory=dict)
    numels: dict[str, int] = field(default_factory=dict)  # `assert x.numel() == 4096 * 1024`
    # `if total_tiles <= self.cube_core_num:`: names at most a core count, a bound the device fixes
    core_bounded: set[str] = field(default_factory=set)
    # `if m == n == k:`: names equal where the launch runs, so a bound on one bounds the others
    equal: set[tuple[str, str]] = field(default_factory=set)

    def share_equal_bounds(self) -> None:
        """Give each name of an equality the smallest bound any name equal to it has."""
        changed = True
        while changed:
            changed = False
            for a, b in self.equal:
                for one, other in ((a, b), (b, a)):
                    bound = self.bounds.get(one)
                    if bound is not None and bound < self.bounds.get(other, bound + 1):
                        self.bounds[other] = bound
                        changed = True

    def dim_bound(self, tensor: str | None, dim: int | None) -> int | None:
        return None if tensor is None or dim is None else self.dims.get((tensor, dim))


def site_facts(resolver, facts: ModuleFacts, site: cst.CSTNode) -> SiteFacts:
    found = SiteFacts()
    for condition in guarding_conditions(facts, site):
        _collect_bounds(resolver, condition, site, found, 0)
    function = host_function(facts, site)
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
    found.share_equal_bounds()
    return found


def _caller_bounds(resolver, facts: ModuleFacts, function: cst.FunctionDef) -> SiteFacts:
    """Bounds that hold wherever a private host function runs because every call of it in the module is guarded
    (``if (M, N) not in _SHAPES: return ...`` before ``_launch(x, y)``), in the callee's parameter names; a key
    counts only when every call states it (the loosest bound is kept)."""
    key = ("caller-bounds", id(function))
    cache = facts.memo("caller-facts", dict)
    if key in cache:
        return cache[key] or SiteFacts()
    cache[key] = None  # a cycle of calls reads nothing
    merged: SiteFacts | None = None
    for call in private_calls(facts, function):
        here = site_facts(resolver, facts, call)
        mapping = call_mapping(resolver, function, call)
        translated = SiteFacts()
        for (tensor, dim), bound in here.dims.items():
            if tensor in mapping:
                translated.dims[(mapping[tensor], dim)] = bound
        for name, bound in here.bounds.items():
            if name in mapping:
                translated.bounds[mapping[name]] = bound
        for tensor, bound in here.numels.items():
            if tensor in mapping:
                translated.numels[mapping[tensor]] = bound
        merged = translated if merged is None else SiteFacts(
            bounds={k: max(v, translated.bounds[k]) for k, v in merged.bounds.items() if k in translated.bounds},
            dims={k: max(v, translated.dims[k]) for k, v in merged.dims.items() if k in translated.dims},
            numels={k: max(v, translated.numels[k]) for k, v in merged.numels.items() if k in translated.numels},
        )
    cache[key] = merged or SiteFacts()
    return cache[key]


def _collect_bounds(resolver, test, site, found: SiteFacts, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        _collect_bounds(resolver, test.left, site, found, depth + 1)
        _collect_bounds(resolver, test.right, site, found, depth + 1)
    elif type(test) is cst.Name:
        status, value = resolver.lookup(test.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            _collect_bounds(resolver, value, site, found, depth + 1)
    elif type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        negated = negation_of(test.expression)
        if negated is not None and type(negated) is not cst.UnaryOperation:
            _collect_bounds(resolver, negated, site, found, depth + 1)
    elif type(test) is cst.Call:
        _predicate_bounds(resolver, test, site, found, depth)
    elif type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.In:
        for part, values in se.membership(test, lambda c: literal_collection(resolver, c, site)):
            _bound_by(resolver, part, max(values), site, found)
    elif type(test) is cst.Comparison:
        left = test.left
        for target in test.comparisons:  # 0 < n <= 128 reads as 0 < n and n <= 128
            _compared(resolver, left, target.operator, target.comparator, site, found)
            left = target.comparator


def _bound_by(resolver, part: cst.BaseExpression, bound: int, site, found: SiteFacts) -> None:
    """``part`` (a host name or a shape entry) is at most ``bound`` where ``site`` runs."""
    if bound < 0:
        return
    if type(part) is cst.Name:
        if bound < 2 ** mag.GRID_AXIS_BITS and same_binding(resolver, part, site):
            found.bounds[part.value] = min(bound, found.bounds.get(part.value, bound))
        return
    tensor, dim, numel = hf.shape_part(part)
    if tensor is not None and same_binding(resolver, tensor, site):
        if numel:
            found.numels[tensor.value] = min(bound, found.numels.get(tensor.value, bound))
        else:
            found.dims[(tensor.value, dim)] = min(bound, found.dims.get((tensor.value, dim), bound))


def _predicate_bounds(resolver, call: cst.Call, site, found: SiteFacts, depth: int) -> None:
    """The bounds a shape predicate's ``True`` states (read in its own scope), on what the call passes: a bound on
    a parameter's shape entry bounds the argument's, and a bound on a name the predicate binds to a parameter's
    shape entry (``M, N = x.shape`` there) too."""
    predicate = se.shape_predicate(resolver.facts, call)
    if predicate is None:
        return
    function, _ = predicate
    mapping = argument_names(resolver, function, call, site)
    inner = function.body.body[-1]
    own = SiteFacts()
    for condition in se.predicate_conditions(resolver.facts, function):
        _collect_bounds(resolver, condition, inner, own, depth + 1)
    entries = {(tensor, dim): bound for (tensor, dim), bound in own.dims.items()}
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params)}
    for name, bound in own.bounds.items():
        key = se.canonical(resolver, cst.Name(name), inner)
        target = mapping.get(name) if name in params else None
        if target is not None and "." not in target:  # `rows <= 4096` on a size the caller passes by name
            found.bounds[target] = min(bound, found.bounds.get(target, bound))
        elif target is not None and ".shape[" in target:
            tensor, _, rest = target.partition(".shape[")
            dim = int(rest.rstrip("]"))
            found.dims[(tensor, dim)] = min(bound, found.dims.get((tensor, dim), bound))
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


def _compared(resolver, left, operator, right, site, found: SiteFacts) -> None:
    if _compared_shape(resolver, left, operator, right, site, found):
        return
    if type(left) is cst.Name and is_none(right) and type(operator) is cst.IsNot:
        if same_binding(resolver, left, site):
            found.not_none.add(left.value)
        return
    if type(operator) is cst.Equal and type(left) is cst.Name and type(right) is cst.Name \
            and same_binding(resolver, left, site) and same_binding(resolver, right, site):
        found.equal.add((left.value, right.value))
    # n <= cores, cores > n: at most a core count
    kind = type(operator)
    for name, other, upper in ((left, right, kind in (cst.LessThan, cst.LessThanEqual, cst.Equal)),
                               (right, left, kind in (cst.GreaterThan, cst.GreaterThanEqual, cst.Equal))):
        if upper and type(name) is cst.Name and is_core_count(resolver, other, site) \
                and same_binding(resolver, name, site):
            found.core_bounded.add(name.value)
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
    if 0 <= bound < 2 ** mag.GRID_AXIS_BITS and same_binding(resolver, name, site):
        found.bounds[name.value] = min(bound, found.bounds.get(name.value, bound))


def _compared_shape(resolver, left, operator, right, site, found: SiteFacts) -> bool:
    """Bounds from a comparison of a tensor's shape with literals (``x.shape == (M0, 1024)`` keeps the literal
    entries, ``x.shape[0] <= 512``, ``x.size(-1) == 64``, ``x.numel() == 4096 * 1024``); True when the comparison
    was about a shape. Only a tensor bound the same way at the comparison and at the launch counts."""
    kind = type(operator)
    for one, other, upper in ((left, right, kind in (cst.Equal, cst.LessThan, cst.LessThanEqual)),
                              (right, left, kind in (cst.Equal, cst.GreaterThan, cst.GreaterThanEqual))):
        strict = kind in (cst.LessThan, cst.GreaterThan)
        whole = hf.whole_shape(one)
        if whole is not None:
            entries = _shape_entries(other)
            if kind is cst.Equal and entries is not None and same_binding(resolver, whole, site):
                for i, entry in enumerate(entries):
                    value = resolver.literal_value(entry, site)
                    if value is not None and value >= 0:
                        found.dims[(whole.value, i)] = found.dims[(whole.value, i - len(entries))] = value
            return True
        tensor, dim, numel = hf.shape_part(one)
        if tensor is None:
            continue
        value = resolver.literal_value(other, site) if upper else None
        if value is not None and same_binding(resolver, tensor, site):
            bound = value - 1 if strict else value
            if bound >= 0 and numel:
                found.numels[tensor.value] = min(bound, found.numels.get(tensor.value, bound))
            elif bound >= 0:
                found.dims[(tensor.value, dim)] = min(bound, found.dims.get((tensor.value, dim), bound))
        return True
    return False


def _shape_entries(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The entries of ``(4096, 1024)``, ``[4096, 1024]``, ``torch.Size([4096, 1024])``."""
    if type(expr) is cst.Call and len(expr.args) == 1 and (
            type(expr.func) is cst.Attribute and expr.func.attr.value == "Size"
            or type(expr.func) is cst.Name and expr.func.value in ("Size", "tuple", "list")):
        expr = expr.args[0].value
    if type(expr) in (cst.Tuple, cst.List) and all(type(e) is cst.Element for e in expr.elements):
        return [e.value for e in expr.elements]
    return None


def is_core_count(resolver, expr: cst.BaseExpression, site, depth: int = 0) -> bool:
    """``expr`` holds a core count where ``site`` runs: spelled as one, or a host name assigned one."""
    if spells_core_count(expr):
        return True
    if type(expr) is cst.Name and depth < 3:
        status, value = resolver.lookup(expr.value, site)
        return status == "value" and isinstance(value, cst.BaseExpression) and is_core_count(
            resolver, value, site, depth + 1)
    return False
