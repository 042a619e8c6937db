"""The grid of a launch (``kernel[grid](...)``), resolved through host code and classified factor by factor.

A grid is a tuple of axes, each axis a product of factors (``grid_factors``); each factor is classified by how it grows
with the data (``grid_classify``). Here the grid expression is found (a tuple, a name bound to one, ``lambda meta:
(...)``, a local ``def grid(meta)``), axes that the host sizes from each other are related (``(progs, cdiv(total,
progs))``), and factors are marked chunked when a host loop around the launch, or around every call of its host
function, walks the data in steps, or capped when a host ``while`` loop grows a divisor until the grid fits.

Serves the grid rules (ASC105, ASC110, ASC408, ASC501), the run-size and launch-size analyses and the compiler
configuration reader; every grid is built once per launch and cached on the module facts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Iterator, NamedTuple

import libcst as cst

from . import magnitudes as mag
from .module_facts import Kernel, Launch, ModuleFacts, dotted_name
from .grid_classify import FactorClassifier
from .grid_factors import Factor, Kind, LaunchGrid, division_parts, divides_rounding_up
from .grid_names import CHUNKS
from .grid_product_bound import product_bounded
from .grid_threshold import LIMIT as GRID_LIMIT
from .host_resolver import MAX_DEPTH, host_resolver
from .launch_arguments import launch_argument
from .module_role import launches_for_decode
from .syntax import target_names


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
    resolver = host_resolver(facts)
    for launch in facts.launches:
        kernel = launch.kernel
        if kernel is None:
            continue
        selected = params(kernel) if params is not None else [p for p in kernel.params if kernel.is_constexpr_param(p)]
        for param in selected:
            argument = launch_argument(launch, param)
            if argument is None:
                continue
            factor = FactorClassifier(resolver, launch.call, launch)._one(argument, 0, frozenset())
            yield LaunchFactor(launch, param, factor, argument)


def launch_grid(facts: ModuleFacts, launch: Launch) -> LaunchGrid:
    """The classified grid of ``launch`` (cached per launch)."""
    return facts.memo("launch_grids", lambda: _LaunchGrids(facts)).grid(launch)


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


class _LaunchGrids:
    """The classified grids of a module's launches, each built once from the host resolver."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.index = facts.index
        self.resolver = host_resolver(facts)
        self._grids: dict[int, LaunchGrid] = {}
        self._chunked_params: dict[int, frozenset[str]] = {}

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
        decode = launches_for_decode(self.facts, launch)
        axes = []
        for element in _elements(shape):
            factors = FactorClassifier(self.resolver, site, launch).factors(element, 0, frozenset())
            if chunking:
                factors = [replace(f, chunked=True) if f.names & chunking else f for f in factors]
            if grown:
                factors = [replace(f, capped=True) if f.names & grown else f for f in factors]
            axes.append(tuple(factors))
        if decode and LaunchGrid(launch, tuple(axes)).literal_size << mag.BATCH_BITS <= GRID_LIMIT:
            # the query tokens of one decode step are a token or a few per request: a batch of requests, which no
            # literal factor of this grid takes past the limit (up to 2**BATCH_BITS of them)
            axes = [tuple(replace(f, tokens=False, host_tokens=False, evidence="", batch_axis=True, batch_rows=True)
                          if f.tokens and not f.launch_wide else f for f in axis) for axis in axes]
        axes = self._related_axes(_elements(shape), axes, launch)
        if product_bounded(self.resolver, site, shape, GRID_LIMIT):  # assert NT * B * H <= 65535
            axes = [tuple(replace(f, capped=True) for f in axis) for axis in axes]
        return LaunchGrid(launch, tuple(axes), shape)

    def _related_axes(self, elements: list, axes: list, launch: Launch) -> list:
        """Axes that the host sizes from each other. ``(progs, cdiv(total, progs))`` with ``progs`` bounded (a core
        count, ``min(cores, total)``) launches about ``total`` programs: the quotient axis is read as ``total``.
        ``(n, min(blocks, 65535 // n))`` keeps the product of both axes under the literal: both are capped."""
        site = launch.call
        chains = [self._chain(element, site) for element in elements]
        for j, chain in enumerate(chains):
            for expr in chain:
                parts = division_parts(expr) if type(expr) is cst.Call or divides_rounding_up(expr) else None
                if parts is None:
                    continue
                i = self._axis_named(parts[1], chains, j, site)
                if i is not None and not any(f.grows for f in axes[i]):
                    factors = FactorClassifier(self.resolver, site, launch).factors(parts[0], 0, frozenset())
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
                    cap = self.resolver.literal_value(value.left, site)
                    i = self._axis_named(value.right, chains, j, site)
                    if cap is not None and cap <= 65535 and i is not None:
                        axes[i] = tuple(replace(f, capped=True) for f in axes[i])
                        axes[j] = tuple(replace(f, capped=True) for f in axes[j])
        return axes

    def _chain(self, expr: cst.BaseExpression, site: cst.CSTNode) -> list[cst.BaseExpression]:
        """``expr`` and what the host names it is spelled with were last assigned (``grid = (progs, ...)``,
        ``progs = min(cores, total)``), in order."""
        found = [expr]
        for _ in range(MAX_DEPTH):
            if type(expr) is not cst.Name:
                break
            status, value = self.resolver.lookup(expr.value, site)
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
        if depth > MAX_DEPTH:
            return None
        if type(expr) is cst.Lambda:
            return self._grid_shape(expr.body, site, depth + 1)
        if type(expr) is cst.Name:
            status, value = self.resolver.lookup(expr.value, site)
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
        scope_node = self.resolver.scope_node(site)
        if type(scope_node) is not cst.FunctionDef:
            return frozenset()
        position = self.index.order(site)
        names: set[str] = set()
        for loop in self.index.of_type(cst.While):
            if self.index.order(loop) >= position or self.resolver.scope_node(loop) is not scope_node:
                continue
            if any(ancestor is loop for ancestor in self.index.ancestors(site)):
                continue
            test = loop.test
            if not (type(test) is cst.Comparison and any(
                    self.resolver.literal_value(c.comparator, site) is not None for c in test.comparisons)):
                continue
            for node in self.index.subtree(loop):
                if type(node) is cst.AugAssign and type(node.operator) in (cst.MultiplyAssign, cst.AddAssign,
                                                                           cst.LeftShiftAssign):
                    names.update(target_names(node.target))
        return frozenset(names)

    def _chunked_by_callers(self, site: cst.CSTNode) -> frozenset[str]:
        """The parameters of the host function around ``site`` when every call of it in this module sits in a host
        loop that walks the data in chunks (``for start in range(0, n, step)``, ``for off, size in
        iter_launch_chunks(n, ...)``): the launch sees one chunk of what those parameters hold."""
        function = self.resolver.scope_node(site)
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
                                              and CHUNKS.search(dotted_name(ancestor.iter.func) or "")):
                return True
        return False

    def _chunking_names(self, site: cst.CSTNode) -> frozenset[str]:
        """Names bound by host loops around ``site`` that walk the data in chunks (``range(a, b, step)``, while)."""
        names: set[str] = set()
        for ancestor in self.index.ancestors(site):
            if type(ancestor) is cst.FunctionDef:
                break
            if type(ancestor) is cst.For and _is_stepped_range(ancestor.iter):
                names.update(target_names(ancestor.target))
                step = ancestor.iter.args[2].value  # a grid sized by the step is sized per chunk
                names.update(n.value for n in (step, *self.index.descendants(step)) if type(n) is cst.Name)
            elif type(ancestor) is not cst.While:
                continue
            for node in self.index.subtree(ancestor):
                if type(node) is cst.Assign:
                    for target in node.targets:
                        names.update(target_names(target.target))
                elif type(node) is cst.AugAssign:
                    names.update(target_names(node.target))
        return frozenset(names)
