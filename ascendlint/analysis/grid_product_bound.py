"""Whether a host condition guarding a launch bounds the product of its grid axes by the program limit.

``assert NT * B * H <= 65535``, ``if math.prod(grid) > 65535: raise ...``, ``if total < 65536:`` or ``if total <=
num_vectorcore:`` around ``kernel[(NT, B * H)](...)``: the launch cannot pass the limit, whatever each axis could
grow to alone. The two sides are compared as multisets of multiplied terms, host names followed to the product or
tuple they stand for, so ``total = NT * B * H`` and ``grid = (NT, B * H)`` spell the same product. Serves ``grid``.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from .host_bounds import is_core_count
from .host_guards import guarding_conditions
from .host_resolver import MAX_DEPTH, HostResolver
from .module_facts import dotted_name
from .run_size_reader import literal_item

_PRODUCTS = {"prod", "math.prod", "np.prod", "numpy.prod"}


def product_bounded(resolver: HostResolver, site: cst.CSTNode, shape: cst.BaseExpression, limit: int) -> bool:
    """Does a condition that holds where ``site`` runs keep the product of ``shape``'s axes at most ``limit``?"""
    grid = _terms(resolver, shape, site, 0)
    if grid is None:
        return False
    for condition in guarding_conditions(resolver.facts, site):
        for product, bound in _upper_bounds(resolver, condition, site):
            if bound <= limit and _terms(resolver, product, site, 0) == grid:
                return True
    return False


def _upper_bounds(resolver: HostResolver, test: cst.BaseExpression, site: cst.CSTNode):
    """``(expression, bound)`` for each ``expression <= bound`` a condition states (``<``, ``>=`` reversed, chains
    and ``and`` read part by part)."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        yield from _upper_bounds(resolver, test.left, site)
        yield from _upper_bounds(resolver, test.right, site)
        return
    if type(test) is not cst.Comparison:
        return
    left = test.left
    for target in test.comparisons:
        right, kind = target.comparator, type(target.operator)
        if kind in (cst.LessThan, cst.LessThanEqual):
            value = _bound_value(resolver, right, site)
            if value is not None:
                yield left, value - (kind is cst.LessThan)
        elif kind in (cst.GreaterThan, cst.GreaterThanEqual):
            value = _bound_value(resolver, left, site)
            if value is not None:
                yield right, value - (kind is cst.GreaterThan)
        left = right


def _bound_value(resolver: HostResolver, expr: cst.BaseExpression, site: cst.CSTNode) -> int | None:
    """A literal's value; a core count (``num_vectorcore``, ``props["num_aicore"]``) is below the limit on every
    part, whatever its value."""
    value = resolver.literal_value(expr, site)
    if value is None and is_core_count(resolver, expr, site):
        return _CORES_AT_MOST
    return value


_CORES_AT_MOST = 1024  # far more cores than any Ascend part has, far fewer programs than the limit


def _terms(resolver: HostResolver, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> Counter | None:
    """The multiplied terms of ``expr`` as a multiset of their source text: products and grid tuples are split,
    host names bound to either are followed, ``grid[i]`` of a tuple is its entry, ``math.prod(grid)`` the product
    of its entries; None when a term cannot be spelled."""
    if depth > MAX_DEPTH:
        return None
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
        left = _terms(resolver, expr.left, site, depth + 1)
        right = _terms(resolver, expr.right, site, depth + 1)
        return None if left is None or right is None else left + right
    if type(expr) in (cst.Tuple, cst.List):
        found: Counter = Counter()
        for element in expr.elements:
            if type(element) is not cst.Element:
                return None
            part = _terms(resolver, element.value, site, depth + 1)
            if part is None:
                return None
            found += part
        return found
    if type(expr) is cst.Call and dotted_name(expr.func) in _PRODUCTS and len(expr.args) == 1:
        return _terms(resolver, expr.args[0].value, site, depth + 1)
    if type(expr) is cst.Subscript:
        entry = literal_item(resolver, expr, site)  # grid[1] of grid = (a, b)
        if entry is not None:
            return _terms(resolver, entry, site, depth + 1)
    if type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression) and (
                type(value) in (cst.Tuple, cst.List, cst.Name)
                or type(value) is cst.BinaryOperation and type(value.operator) is cst.Multiply):
            return _terms(resolver, value, site, depth + 1)
    return Counter({"".join(resolver.facts.module.code_for_node(expr).split()): 1})

