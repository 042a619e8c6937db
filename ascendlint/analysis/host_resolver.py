"""Host-name resolution: what a name in host code holds at a given site.

Each host scope (a non-kernel function or the module) keeps its assignments in source order, tuple unpacking
included (``B, T, H, K = k.shape`` binds each name to one dimension); ``lookup`` answers the last assignment before
the site, climbing enclosing scopes; ``literal_value`` and ``literal_choices`` fold literal arithmetic and the
literals a name can hold in either branch. Nothing is executed.

Shared by every analysis that reads launch sites (grids, host guards and bounds, host argument values, run sizes,
compiler configurations); one resolver per module, cached on the module facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .literal_helpers import helper_item_literals, helper_literals
from .module_facts import ModuleFacts
from .literals import integer_value
from .syntax import is_none


MAX_DEPTH = 12  # name-resolution depth; host code that deep is not worth following


_LITERAL_ARITHMETIC = {
    cst.Multiply: lambda a, b: a * b, cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
    cst.FloorDivide: lambda a, b: a // b, cst.LeftShift: lambda a, b: a << b, cst.Power: lambda a, b: a ** b,
}


@dataclass
class _Scope:
    """Assignments of one host scope (a non-kernel function or the module), in source order."""

    node: cst.CSTNode
    bindings: dict[str, list[tuple[int, cst.CSTNode]]] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)


def host_resolver(facts: ModuleFacts) -> HostResolver:
    """The module's host-name resolver (``lookup``, ``literal_value``, ``literal_choices``, ``shape_items``); it lives
    on the module facts it belongs to, and dies with them."""
    return facts.memo("host_resolver", lambda: HostResolver(facts))


class HostResolver:
    """What host names hold at a site, read from the assignments of each host scope."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.index = facts.index
        self._scopes: dict[int, _Scope] = {}
        # ``b, s, _ = x.shape`` binds each name to a synthetic ``x.shape[i]``: id -> (tensor name, i, rank)
        self.shape_items: dict[int, tuple[str, int, int]] = {}
        # ... and the names the same unpacking binds, in order (None for a target that is not a plain name)
        self.shape_axes: dict[int, tuple[str | None, ...]] = {}

    # -- scopes ---------------------------------------------------------------------------------------------------
    def scope_node(self, node: cst.CSTNode) -> cst.CSTNode:
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
            if type(node) is cst.For and self.scope_node(node) is scope_node:
                # for block in (64, 128, 256): ... break; for bm, bn in ((64, 128), (32, 64)): each one of those
                iterable = node.iter
                if type(iterable) is cst.Name and type(scope_node) is cst.FunctionDef:
                    iterable = self._module_value(iterable.value) or iterable  # for bm, bn in _TILES:
                for name, picked in loop_bindings(node.target, iterable):
                    scope.bindings.setdefault(name, []).append((order(node), picked))
                continue
            if type(node) not in (cst.Assign, cst.AnnAssign, cst.FunctionDef):
                continue
            if self.scope_node(node) is not scope_node:
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

    def _module_value(self, name: str) -> cst.BaseExpression | None:
        """The value of a name bound once at module level (a literal list of tile sizes), else None."""
        bound = self._scope(self.facts.module).bindings.get(name, ())
        value = bound[0][1] if len(bound) == 1 else None
        return value if isinstance(value, cst.BaseExpression) else None

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
            axes = _target_names(target)[:rank]
            for i, element in enumerate(target.elements[:rank]):
                self._bind(scope, element.value, self._shape_item(shape, i, rank, axes), position)
            for element, item in zip(target.elements[rank:], rest):
                self._bind(scope, element.value, item, position)
        elif type(target) in (cst.Tuple, cst.List):  # rows, cols = x.shape: each name is one item of the value
            rank = len(target.elements) if not any(type(e) is cst.StarredElement for e in target.elements) else 0
            axes = _target_names(target)
            for i, element in enumerate(target.elements):
                self._bind(scope, element.value, self._shape_item(value, i, rank, axes), position)

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
                return self.scope_node(node) is scope_node
        return False

    def _shape_item(self, value: cst.BaseExpression, i: int, rank: int, axes: tuple = ()) -> cst.Subscript:
        item = cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer(str(i))))])
        if rank and type(value) is cst.Attribute and value.attr.value == "shape" and type(value.value) is cst.Name:
            self.shape_items[id(item)] = (value.value.value, i, rank)
            self.shape_axes[id(item)] = axes
        return item

    def lookup(self, name: str, site: cst.CSTNode) -> tuple[str, cst.CSTNode | None]:
        """("value", expr) for the last assignment before ``site``; ("param", None); or ("unknown", None)."""
        scope_node = self.scope_node(site)
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
            scope_node = self.scope_node(scope_node)

    def parameter_default(self, name: str, site: cst.CSTNode) -> cst.BaseExpression | None:
        """The default of ``name`` when ``site`` reads it unchanged from a parameter of the function around it
        (``def scaled_add(x, scale: int = 2): kernel[grid](..., SCALE=scale)``), else None."""
        if self.lookup(name, site)[0] != "param":
            return None
        function = self.scope_node(site)
        if type(function) is not cst.FunctionDef:
            return None
        params = function.params
        return next((p.default for p in (*params.params, *params.kwonly_params) if p.name.value == name), None)

    def assignments_before(self, name: str, site: cst.CSTNode) -> list[cst.CSTNode]:
        """Every value assigned to ``name`` in the host function around ``site`` before it (each branch's)."""
        scope = self._scope(self.scope_node(site))
        position = self.index.order(site)
        return [value for at, value in scope.bindings.get(name, ()) if at < position]

    def used_as_tensor_before(self, name: str, site: cst.CSTNode) -> bool:
        """``name.attr`` (``g.transpose``, ``w.shape``) or ``name[...]`` in the host function before ``site``,
        outside any ``if``: the name is not None by then (the host would have failed)."""
        scope_node = self.scope_node(site)
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
        scope_node = self.scope_node(site)
        while type(scope_node) is cst.FunctionDef:
            params = scope_node.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.name.value != name:
                    continue
                if is_none(param.default):
                    return True
                annotation = param.annotation.annotation if param.annotation is not None else None
                text = self.facts.module.code_for_node(annotation) if annotation is not None else ""
                return "Optional" in text or "None" in text
            scope_node = self.scope_node(scope_node)
        return False

    def literal_choices(self, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> list[int]:
        """Every literal ``expr`` can be at ``site``: each host assignment of a name before it (``BD = 128`` in one
        branch, ``BD = 16`` in the other), both sides of a conditional expression; empty when one of them is not
        a literal."""
        if type(expr) is cst.Integer:
            return [integer_value(expr)]
        if depth >= MAX_DEPTH:
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
        scope = self._scope(self.scope_node(site))
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
        if type(expr) is cst.Name and depth < MAX_DEPTH:
            status, value = self.lookup(expr.value, site)
            if status == "value" and isinstance(value, cst.BaseExpression):
                return self.literal_value(value, site, depth + 1)
        if type(expr) is cst.BinaryOperation and depth < MAX_DEPTH:  # 4096 * 1024, 1 << 16
            operate = _LITERAL_ARITHMETIC.get(type(expr.operator))
            left = self.literal_value(expr.left, site, depth + 1) if operate else None
            right = self.literal_value(expr.right, site, depth + 1) if left is not None else None
            if right is not None and (type(expr.operator) is not cst.FloorDivide or right) and \
                    (type(expr.operator) not in (cst.LeftShift, cst.Power) or 0 <= right <= 64):
                return operate(left, right)
        return None


def loop_bindings(target: cst.BaseExpression, iterable: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    """(name, choice of literals) for each variable of a loop over literal ints or literal tuples of ints: a plain
    variable takes the items, each name of a tuple target its column."""
    if type(iterable) not in (cst.Tuple, cst.List) or not iterable.elements:
        return []
    if type(target) is cst.Name:
        picked = loop_literals(iterable)
        return [(target.value, picked)] if picked is not None else []
    if type(target) not in (cst.Tuple, cst.List) or not all(
            type(e) is cst.Element and type(e.value) is cst.Name for e in target.elements):
        return []
    rows = [e.value for e in iterable.elements if type(e) is cst.Element]
    width = len(target.elements)
    if len(rows) != len(iterable.elements) or not all(
            type(r) in (cst.Tuple, cst.List) and len(r.elements) == width for r in rows):
        return []
    found = []
    for i, element in enumerate(target.elements):
        column = cst.Tuple([cst.Element(r.elements[i].value) for r in rows])
        picked = loop_literals(column)
        if picked is None:
            return []
        found.append((element.value.value, picked))
    return found


def loop_literals(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """What a loop over a literal tuple or list of ints binds its variable to, as a conditional expression of
    those ints (``64 if _ else 128 if _ else 256``), which every reader of tile sizes takes as a choice of literals:
    inside the loop, and after it wherever a ``break`` stopped it (or the last item when none did)."""
    if type(iterable) not in (cst.Tuple, cst.List) or not iterable.elements \
            or not all(type(e) is cst.Element and type(e.value) is cst.Integer for e in iterable.elements):
        return None
    values = [e.value for e in iterable.elements]
    if len(values) == 1:
        return values[0]
    picked: cst.BaseExpression = values[-1]
    for value in reversed(values[:-1]):
        picked = cst.IfExp(test=cst.Name("_"), body=value, orelse=picked)
    return picked


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


def _target_names(target: cst.Tuple | cst.List) -> tuple[str | None, ...]:
    return tuple(e.value.value if type(e.value) is cst.Name else None for e in target.elements)


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
