"""Reads the sizes a closed module spells for its tensors, each dimension followed to literals.

Allocations (``torch.randn((tokens, heads, dim))``, ``x.new_zeros(...)``, ``np.random.rand(*shape)``) and the
views a tensor is reshaped to; dimensions through host names, parametrize cases, the parameters of a host function
at every call in the module, and the literal lists of shapes a loop iterates; a dimension read from another tensor
is bounded by the sizes found so far. Serves ``run_sizes`` (the module's largest sizes) and ``launch_bound`` (a
launch grid's axes read against them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import libcst as cst

from . import host_facts as hf
from .closed_modules import host_functions, module_call_sites, parametrize_cases
from .grid_factors import DIVIDE_UP
from .host_resolver import host_resolver
from .module_facts import Launch, ModuleFacts
from .literals import integer_value

_MAX_DEPTH = 12
_HUGE = 2**64  # larger bounds say nothing more
# Shapes: every candidate shape a name can take (``shape`` iterating ``[(128, 128), (256, 256)]``).
Shapes = tuple  # tuple[tuple[int, ...], ...]
_PASS_CALLS = {"int", "abs", "round", "ceil", "floor"}
RESHAPES = {"view", "reshape"}
JOINS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack"}
LOADERS = {"load", "from_pretrained", "from_file", "fromfile", "load_file", "frombuffer"}


@dataclass(frozen=True)
class RunSizes:
    """The largest dimension, leading-dimension product (rows) and element count of any tensor a closed module
    allocates, and the allocation that sets the largest dimension."""

    dim: int
    rows: int
    elements: int
    evidence: str = ""


def named_expression(resolver, expr: cst.BaseExpression, site) -> cst.BaseExpression | None:
    """The expression a host name stands for, followed through module and local names (``SHAPE`` to the tuple
    assigned to it); ``expr`` itself when it is not a name; None when a name has no single value."""
    for _ in range(_MAX_DEPTH):
        if type(expr) is not cst.Name:
            break
        status, value = resolver.lookup(expr.value, site)
        if status != "value" or not isinstance(value, cst.BaseExpression):
            return None
        expr = value
    return expr


def literal_item(resolver, expr: cst.Subscript, site) -> cst.BaseExpression | None:
    """``SHAPE[2]`` (or ``SHAPE[-1]``) of a literal tuple or list the host spells (through names): the item's
    expression, else None."""
    if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
        return None
    position = hf.literal_dim(expr.slice[0].slice.value)
    receiver = named_expression(resolver, expr.value, site)
    if type(receiver) not in (cst.Tuple, cst.List) or position is None:
        return None
    elements = receiver.elements
    if not -len(elements) <= position < len(elements) or type(elements[position]) is cst.StarredElement:
        return None
    return elements[position].value


def short_name(func: cst.BaseExpression) -> str | None:
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return None


def _join(values: list) -> int | Shapes | None:
    """The bound over several values: the largest int, or every candidate shape."""
    if not values or any(v is None for v in values):
        return None
    if all(type(v) is int for v in values):
        return max(values)
    if all(type(v) is tuple for v in values):
        merged = []
        for shapes in values:
            for shape in shapes:
                if shape not in merged:
                    merged.append(shape)
        return tuple(merged)
    return None


class SizeReader:
    """Upper bounds of host expressions of one module. ``sizes`` None: literal sizes only (a dimension read from a
    tensor is unknown); otherwise such a read is bounded by the sizes."""

    def __init__(self, facts: ModuleFacts, sizes: RunSizes | None, launch: Launch | None) -> None:
        self.facts = facts
        self.index = facts.index
        self.sizes = sizes
        self.launch = launch
        self.resolver = host_resolver(facts)
        self.constants = facts.module_constants
        self.functions = host_functions(facts)
        self._sites: dict[str, list[cst.Call]] | None = None
        self._params: dict[int, dict[str, object]] = {}
        self._loops: dict[int, dict[str, object]] = {}
        self._busy: set = set()
        self._names: dict[tuple[str, int], object] = {}  # (name, site) -> its bound: each name read once per site

    # -- allocations
    def allocation_shapes(self, call: cst.Call) -> Shapes | None:
        """The candidate shapes of the tensor ``call`` makes, or None when a dimension is not bounded."""
        short = short_name(call.func)
        site = call
        sizes = self.sizes
        args = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if short in LOADERS:
            return None
        if short in JOINS:
            if sizes is None or not args or type(args[0].value) not in (cst.List, cst.Tuple):
                return None
            return ((sizes.dim * len(args[0].value.elements),),)
        if short == "flatten":
            return None if sizes is None else ((sizes.elements,),)
        if short in RESHAPES:
            values = [a.value for a in args if not a.star]
            if len(values) == 1 and type(values[0]) in (cst.Tuple, cst.List):
                values = [e.value for e in values[0].elements]
            if not values or any(type(v) in (cst.Attribute, cst.SimpleString) for v in values) or "dtype" in keywords:
                return ((1,),)  # a dtype view keeps the shape
            if len(values) == 1 and self._names_a_shape(values[0], site):
                return ((1,),)  # back to a shape a tensor had: ``y.view(x_shape)``
            if len(values) == 1 and type(values[0]) is cst.Name:
                shapes = self.value(values[0], site, 0, frozenset())
                if type(shapes) is tuple:
                    return shapes  # ``x.reshape(shape)`` of a name holding literal shapes
            if sizes is None:
                return None
            shape = []
            for position, value in enumerate(values):
                if _is_minus_one(value):
                    rows = position == 0 and len(values) == 2 and _is_last_dim_read(values[1])
                    shape.append(sizes.rows if rows else sizes.elements)
                    continue
                bound = self.int_value(value, site)
                if bound is None:
                    return None
                shape.append(bound)
            return (tuple(shape),)
        if short in ("repeat", "expand"):
            values = [a.value for a in args if not a.star]
            if len(values) == 1 and type(values[0]) in (cst.Tuple, cst.List):
                values = [e.value for e in values[0].elements]
            if sizes is None or not values:
                return None
            shape = []
            for value in values:
                bound = sizes.dim if _is_minus_one(value) else self.int_value(value, site)
                if bound is None:
                    return None
                shape.append(bound * sizes.dim if short == "repeat" else bound)
            return (tuple(shape),)
        if short == "arange":
            values = [a.value for a in args]
            if not values:
                return None
            end = values[0] if len(values) == 1 else values[1]
            bound = self.int_value(end, site)
            return None if bound is None else ((max(bound, 1),),)
        if short == "randint":
            size = keywords.get("size")
            if size is None:
                tuples = [a.value for a in args if type(a.value) in (cst.Tuple, cst.List, cst.Name)]
                size = tuples[-1] if tuples else None
            return None if size is None else self._shape_of(size, site)
        if "size" in keywords and not args:
            return self._shape_of(keywords["size"], site)
        starred = [a for a in args if a.star == "*"]
        if starred:
            if len(args) != 1:
                return None
            return self._shape_of(starred[0].value, site)
        dims = hf.allocation_dims(call)
        if dims is None:
            return None
        if len(dims) == 1:
            return self._shape_of(dims[0], site)
        shape = []
        for dim in dims:
            bound = self.int_value(dim, site)
            if bound is None:
                return None
            shape.append(bound)
        return (tuple(shape),)

    def _names_a_shape(self, expr, site) -> bool:
        """``x.shape``, ``x.shape[:-1]`` or a name assigned one of them."""
        if type(expr) is cst.Name:
            values = self.resolver.assignments_before(expr.value, site)
            return len(values) == 1 and isinstance(values[0], cst.BaseExpression) and _is_shape_read(values[0])
        return _is_shape_read(expr)

    def shape_argument(self, call: cst.Call) -> Shapes | None:
        """The literal shape a call to a function of another module is given first (``generate(shape, dtype)``,
        ``make_inputs((M, N))``): the tensor it makes, or None when the first argument is not a shape."""
        if not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        value = self.value(call.args[0].value, call, 0, frozenset())
        return value if type(value) is tuple and value and all(len(shape) > 0 for shape in value) else None

    def _shape_of(self, expr: cst.BaseExpression, site: cst.CSTNode) -> Shapes | None:
        if type(expr) in (cst.Tuple, cst.List):
            shape = []
            for element in expr.elements:
                if type(element) is cst.StarredElement:
                    return None
                bound = self.int_value(element.value, site)
                if bound is None:
                    return None
                shape.append(bound)
            return (tuple(shape),)
        value = self.value(expr, site, 0, frozenset())
        if type(value) is int:
            return ((value,),)
        return value

    # -- values
    def int_value(self, expr: cst.BaseExpression, site: cst.CSTNode) -> int | None:
        value = self.value(expr, site, 0, frozenset())
        return value if type(value) is int else None

    def value(self, expr, site, depth: int, names: frozenset) -> int | Shapes | None:
        if depth > _MAX_DEPTH:
            return None
        kind = type(expr)
        if kind is cst.Integer:
            return integer_value(expr)
        if kind is cst.Name:
            return self._name(expr.value, site, depth, names)
        if kind in (cst.Tuple, cst.List):
            shape = []
            for element in expr.elements:
                if type(element) is cst.StarredElement:
                    return None
                item = self.value(element.value, site, depth + 1, names)
                if type(item) is not int:
                    return None
                shape.append(item)
            return (tuple(shape),)
        if kind is cst.BinaryOperation:
            return self._binary(expr, site, depth, names)
        if kind is cst.IfExp:
            return _join([self.value(expr.body, site, depth + 1, names),
                          self.value(expr.orelse, site, depth + 1, names)])
        if kind is cst.BooleanOperation:
            return _join([self.value(expr.left, site, depth + 1, names),
                          self.value(expr.right, site, depth + 1, names)])
        if kind is cst.Subscript:
            return self._subscript(expr, site, depth, names)
        if kind is cst.Call:
            return self._call(expr, site, depth, names)
        return None

    def _binary(self, expr: cst.BinaryOperation, site, depth, names):
        operator = type(expr.operator)
        left = self.value(expr.left, site, depth + 1, names)
        if type(left) is not int:
            return None
        if operator in (cst.FloorDivide, cst.Divide):
            return -(-left // self._lower(expr.right, site))
        if operator is cst.Subtract:
            return left
        if operator is cst.RightShift:
            return left
        right = self.value(expr.right, site, depth + 1, names)
        if type(right) is not int:
            return None
        if operator is cst.Add:
            return left + right
        if operator is cst.Multiply:
            return min(left * right, _HUGE)
        if operator is cst.Modulo:
            return min(left, right)
        if operator is cst.LeftShift:
            return left << min(right, 64)
        if operator is cst.Power:
            return min(left ** min(right, 64), _HUGE)
        return None

    def _lower(self, expr, site, depth: int = 0) -> int:
        """A lower bound of a divisor: its smallest literal value where the host spells one (an assignment, a module
        constant, an entry of a literal tuple, the parametrize cases or the calls of a parameter), else 1."""
        if depth > _MAX_DEPTH:
            return 1
        if type(expr) is cst.Integer:
            return max(1, integer_value(expr))
        if type(expr) is cst.Name:
            return self._lower_name(expr.value, site, depth)
        if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
            return self._lower(expr.left, site, depth + 1) * self._lower(expr.right, site, depth + 1)
        if type(expr) is cst.Subscript and self.launch is not None:
            key = _string_key(expr)
            if key is not None:
                argument = self.launch.keywords.get(key)
                if argument is not None and type(argument.value) is cst.Integer:
                    return max(1, integer_value(argument.value))
        if type(expr) is cst.Subscript:
            item = literal_item(self.resolver, expr, site)
            return 1 if item is None else self._lower(item, site, depth + 1)
        return 1

    def _lower_name(self, name: str, site, depth: int) -> int:
        values = self.resolver.assignments_before(name, site)
        if values and self._updated_in_place(name, site, self.resolver.scope_node(site)):
            return 1  # block //= 2: less than its first value
        if values:
            if not all(isinstance(v, cst.BaseExpression) for v in values):
                return 1
            return min(self._lower(v, site, depth + 1) for v in values)
        status, value = self.resolver.lookup(name, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            return self._lower(value, site, depth + 1)
        scope = self.resolver.scope_node(site)
        if status == "param" and type(scope) is cst.FunctionDef:
            return self._param_lowers(scope).get(name, 1)
        return max(1, self.constants.get(name, 1)) if status == "unknown" else 1

    def _param_lowers(self, function: cst.FunctionDef) -> dict[str, int]:
        """The smallest value each parameter of a host function takes: over its parametrize cases, or over what
        every call in the module passes (a case or call that is not spelled gives 1)."""
        key = ("lower", id(function))
        found = self._params.get(key)
        if found is not None:
            return found
        self._params[key] = found = {}  # a recursive call reads 1
        cases = parametrize_cases(function, self.facts.module)
        for name, items in cases.items():
            found[name] = min((self._lower(item, item, 1) for item in items), default=1)
        if self.functions.get(function.name.value) is function:
            for name, arguments in arguments_by_param(function, self._call_sites().get(function.name.value, [])):
                if name not in cases and arguments:
                    found[name] = min(1 if a is None else self._lower(a, site, 1) for a, site in arguments)
        return found

    def _subscript(self, expr: cst.Subscript, site, depth, names):
        if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
            return None
        index = expr.slice[0].slice.value
        receiver = expr.value
        key = _string_key(expr)
        table = self._dict_literal(receiver, site)
        if table is not None:  # SHAPES["small"] of a literal dict: that entry; SHAPES[name]: any of them
            entries = [e.value for e in table.elements if key is None or _string_value(e.key) == key]
            return _join([self.value(v, site, depth + 1, names) for v in entries])
        if key is not None:  # meta["M"]: what the launch passes for M
            if self.launch is None:
                return None
            argument = self.launch.keywords.get(key)
            return None if argument is None else self.value(argument.value, site, depth + 1, names)
        if type(receiver) is cst.Attribute and receiver.attr.value == "shape":
            return self._dimension(receiver.value, index, site, depth, names)
        position = hf.literal_dim(index)
        value = self.value(receiver, site, depth + 1, names)
        if type(value) is tuple and position is not None:
            items = []
            for shape in value:
                if not -len(shape) <= position < len(shape):
                    return None
                items.append(shape[position])
            return max(items) if items else None
        return None

    def _dimension(self, tensor, index, site, depth, names):
        """``tensor.shape[index]``: the shape of a tuple the module spells, else a tensor dimension."""
        position = hf.literal_dim(index)
        if self.sizes is None:
            return None
        if type(tensor) is cst.Name:
            status, value = self.resolver.lookup(tensor.value, site)
            if status == "value" and isinstance(value, cst.BaseExpression):
                tensor = _through_passes(value)
        if type(tensor) is cst.Call and short_name(tensor.func) in RESHAPES | {"flatten"}:
            args = [a.value for a in tensor.args if a.keyword is None]
            if len(args) == 1 and type(args[0]) in (cst.Tuple, cst.List):
                args = [e.value for e in args[0].elements]
            if short_name(tensor.func) in RESHAPES and any(type(a) in (cst.Attribute, cst.SimpleString) for a in args):
                return self.sizes.dim  # a dtype view
            if position is not None and position < 0:
                position += len(args)
            if position == 0 and len(args) == 2 and _is_minus_one(args[0]) and _is_last_dim_read(args[1]):
                return self.sizes.rows
            if position is not None and 0 <= position < len(args) and _is_last_dim_read(args[position]):
                return self.sizes.dim
            if position is not None and 0 <= position < len(args) and not _is_minus_one(args[position]):
                bound = self.value(args[position], site, depth + 1, names)
                if type(bound) is int:
                    return bound
            return self.sizes.elements
        return self.sizes.dim

    def _call(self, call: cst.Call, site, depth, names):
        short = short_name(call.func)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if short in DIVIDE_UP and len(args) == 2:
            top = self.value(args[0], site, depth + 1, names)
            return -(-top // self._lower(args[1], site)) if type(top) is int else None
        if short in ("min", "max") and args:
            values = [self.value(a, site, depth + 1, names) for a in args]
            known = [v for v in values if type(v) is int]
            if short == "min":
                return min(known) if known else None
            return max(known) if len(known) == len(values) else None
        if short in _PASS_CALLS and len(args) == 1:
            return self.value(args[0], site, depth + 1, names)
        if short == "next_power_of_2" and len(args) == 1:
            value = self.value(args[0], site, depth + 1, names)
            return 1 << max(0, value - 1).bit_length() if type(value) is int else None
        if self.sizes is None or type(call.func) is not cst.Attribute and short not in ("len", "prod"):
            return None
        if short == "prod" and len(args) == 1:
            value = self.value(args[0], site, depth + 1, names)
            return max(math.prod(shape) for shape in value) if type(value) is tuple else self.sizes.elements
        if short in ("numel", "stride", "nelement"):
            return self.sizes.elements
        if short == "size" and len(args) == 1:
            return self._dimension(call.func.value, args[0], site, depth, names)
        if short == "len" and len(args) == 1:
            value = self.value(args[0], site, depth + 1, names)
            if type(value) is tuple:
                return max(len(shape) for shape in value)
            return self.sizes.dim
        return None

    # -- names
    def _name(self, name: str, site, depth, names):
        if name in names:
            return None
        key = (name, id(site))
        if key in self._names:
            return self._names[key]
        found = self._names[key] = self._resolve_name(name, site, depth, names | {name})
        return found

    def _resolve_name(self, name: str, site, depth, names):
        scope = self.resolver.scope_node(site)
        found = []
        loops = self._loop_values(scope)
        if name in loops:
            found.append(loops[name])
        assigned = self.resolver.assignments_before(name, site)
        if assigned and self._updated_in_place(name, site, scope):
            return None  # n = 1; for d in shape: n *= d -- more than its first value
        for value in assigned:
            if not isinstance(value, cst.BaseExpression):
                return None
            earlier = self._own_assignment(name, value)
            if earlier is not None:  # n = max(n, 64): the earlier ``n`` read where this assignment stands
                found.append(self.value(value, earlier, depth + 1, names - {name}))
            else:
                found.append(self.value(value, site, depth + 1, names))
        if found:
            return _join(found)
        status, value = self.resolver.lookup(name, site)
        if status == "value":
            if not isinstance(value, cst.BaseExpression):
                return None
            outer = self.resolver.scope_node(self.resolver.scope_node(site))
            loops = self._loop_values(outer)
            extra = [loops[name]] if name in loops else []
            return _join([self.value(value, site, depth + 1, names), *extra])
        if status == "param" and type(scope) is cst.FunctionDef:
            return self._param_values(scope).get(name)
        if name in self.constants:
            return self.constants[name]
        module_loops = self._loop_values(self.facts.module)
        return module_loops.get(name)

    def _updated_in_place(self, name: str, site, scope: cst.CSTNode) -> bool:
        """An augmented assignment (``n *= d``) of ``name`` in the host scope of ``site`` before it."""
        position = self.index.order(site)
        return any(type(node.target) is cst.Name and node.target.value == name and self.index.order(node) < position
                   and self.resolver.scope_node(node) is scope for node in self.index.of_type(cst.AugAssign))

    def _own_assignment(self, name: str, value: cst.BaseExpression) -> cst.CSTNode | None:
        """The statement ``name = value`` when ``value`` reads ``name`` itself outside any loop (``n = max(n, 64)``):
        there the name still holds what earlier assignments gave it; None otherwise."""
        owner = self.index.parent(value)
        if type(owner) not in (cst.Assign, cst.AnnAssign):
            return None
        if not any(type(node) is cst.Name and node.value == name for node in (value, *self.index.descendants(value))):
            return None
        scope = self.resolver.scope_node(owner)
        for ancestor in self.index.ancestors(owner):
            if ancestor is scope:
                return owner
            if type(ancestor) in (cst.For, cst.While, cst.CompFor):
                return None
        return owner

    def _param_values(self, function: cst.FunctionDef) -> dict[str, object]:
        """The bound each parameter of a host function takes: its parametrize cases, or what every call in the
        module passes (its default where a call leaves it out)."""
        found = self._params.get(id(function))
        if found is not None:
            return found
        if id(function) in self._busy:
            return {}
        self._busy.add(id(function))
        found = {}
        cases = parametrize_cases(function, self.facts.module)
        sites = self._call_sites().get(function.name.value, []) if self.functions.get(
            function.name.value) is function else []
        for name, arguments in arguments_by_param(function, sites):
            if name in cases:
                found[name] = _join([self._case_value(item) for item in cases[name]])
            elif arguments:
                found[name] = _join([None if argument is None else self.value(argument, call, 1, frozenset())
                                     for argument, call in arguments])
        self._busy.discard(id(function))
        self._params[id(function)] = found
        return found

    def _case_value(self, item):
        """A parametrize case item: an integer or a shape the module spells (``1 << 20``, ``(128, 64)``)."""
        return self.value(item, item, 1, frozenset())

    def _call_sites(self) -> dict[str, list[cst.Call]]:
        """Calls by function name; a function used other than by calls has no call sites that tell its sizes."""
        if self._sites is None:
            found, escaped = module_call_sites(self.facts, self.functions)
            self._sites = {name: sites for name, sites in found.items() if name not in escaped}
        return self._sites

    def _loop_values(self, scope: cst.CSTNode) -> dict[str, object]:
        """Names bound by the ``for`` loops and comprehensions of a host scope, each bounded by what it iterates."""
        found = self._loops.get(id(scope))
        if found is not None:
            return found
        self._loops[id(scope)] = found = {}
        nodes = self.index.subtree(scope) if type(scope) is cst.FunctionDef else self.index.of_type(
            cst.For, cst.CompFor)
        for node in nodes:
            if type(node) not in (cst.For, cst.CompFor) or self.resolver.scope_node(node) is not scope:
                continue
            target, items = node.target, self._items(node.iter, node)
            if _is_method_call(node.iter, "items") and type(target) is cst.Tuple and len(target.elements) == 2:
                target = target.elements[1].value  # for name, shape in SHAPES.items(): the values
                items = self._items(node.iter.func.value, node, values=True)
            for name, value in _bind_items(target, items):
                found[name] = _join([found[name], value]) if name in found else value
        return found

    def _dims_of(self, expr: cst.Name, site) -> list | None:
        """The dimensions a loop over a shape takes (``for dim in shape:`` of a parameter given literal shapes): at
        most the largest entry of any of them."""
        value = self.value(expr, site, 1, frozenset())
        if type(value) is not tuple or not any(value):
            return None
        return [max(max(shape) for shape in value if shape)]

    def _dict_literal(self, expr, site) -> cst.Dict | None:
        """The literal dict a host expression names (through module and local names), else None."""
        expr = named_expression(self.resolver, expr, site)
        if type(expr) is cst.Dict and all(type(e) is cst.DictElement for e in expr.elements):
            return expr
        return None

    def _items(self, expr, site, depth: int = 0, values: bool = False) -> list | None:
        """The values a loop over ``expr`` takes: the elements of a literal list or tuple (through a name assigned
        one), or ``range(...)``'s largest; None when not spelled."""
        if depth > _MAX_DEPTH:
            return None
        if _is_method_call(expr, "values"):
            return self._items(expr.func.value, site, depth + 1, values=True)
        table = self._dict_literal(expr, site)
        if table is not None:  # the values of a literal dict (``.values()``, ``.items()``); its keys say nothing
            if not values:
                return None
            return [self.value(e.value, site, depth + 1, frozenset()) for e in table.elements]
        if type(expr) in (cst.List, cst.Tuple):
            items = []
            for element in expr.elements:
                if type(element) is cst.StarredElement:
                    return None
                items.append(self.value(element.value, site, depth + 1, frozenset()))
            return items
        if type(expr) is cst.Name:
            assigned = self.resolver.assignments_before(expr.value, site)
            if not assigned:
                status, value = self.resolver.lookup(expr.value, site)
                assigned = [value] if status == "value" else []
            if not assigned:
                return self._dims_of(expr, site)
            items = []
            for value in assigned:
                found = self._items(value, site, depth + 1) if isinstance(value, cst.BaseExpression) else None
                if found is None:
                    return None
                items.extend(found)
            return items
        if type(expr) is cst.Call and short_name(expr.func) == "range" and expr.args:
            end = expr.args[0].value if len(expr.args) == 1 else expr.args[1].value
            bound = self.value(end, site, depth + 1, frozenset())
            return [bound] if type(bound) is int else None
        return None


def arguments_by_param(function: cst.FunctionDef, sites: list[cst.Call]
                        ) -> list[tuple[str, list[tuple[cst.BaseExpression | None, cst.Call]]]]:
    """Each parameter of ``function`` and what every call of ``sites`` passes it (its default where a call leaves
    it out; None where a call does not say: a starred argument, no default)."""
    params = [*function.params.posonly_params, *function.params.params]
    found = []
    for position, param in enumerate([*params, *function.params.kwonly_params]):
        name = param.name.value
        arguments = []
        for call in sites:
            if any(a.star for a in call.args):
                arguments.append((None, call))
                continue
            given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            positional = [a.value for a in call.args if a.keyword is None]
            if name in given:
                argument = given[name]
            elif position < len(params) and position < len(positional):
                argument = positional[position]
            else:
                argument = param.default
            arguments.append((argument, call))
        found.append((name, arguments))
    return found


def _bind_items(target, items: list | None) -> list[tuple[str, object]]:
    """The bound each name of a loop target takes over ``items`` (None: not known)."""
    if type(target) is cst.Name:
        return [(target.value, _join(items) if items else None)]
    if type(target) not in (cst.Tuple, cst.List):
        return []
    found = []
    for position, element in enumerate(target.elements):
        if type(element.value) is not cst.Name:
            found.extend((name, None) for name, _ in _bind_items(element.value, None))
            continue
        values = [_item_at(item, position) for item in items] if items else None
        found.append((element.value.value, _join(values) if values else None))
    return found


def _item_at(item, position: int) -> int | None:
    """Entry ``position`` of each candidate shape of a loop item, at most (``M, N`` of ``for M, N in shapes``)."""
    if type(item) is tuple and item and all(len(shape) > position for shape in item):
        return max(shape[position] for shape in item)
    return None


def _through_passes(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x.reshape(-1, d).contiguous().npu()`` as its reshape: methods that keep the shape are looked through."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in (
            "contiguous", "to", "npu", "cuda", "cpu", "float", "half", "bfloat16", "clone", "detach", "int", "long"):
        expr = expr.func.value
    return expr


def _is_shape_read(expr) -> bool:
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Slice:
        expr = expr.value
    return type(expr) is cst.Attribute and expr.attr.value == "shape"


def _is_minus_one(expr) -> bool:
    return hf.literal_dim(expr) == -1


def _is_last_dim_read(expr) -> bool:
    """``x.shape[-1]`` or ``x.size(-1)``: the last dimension of a tensor."""
    if type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape":
        return len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index and _is_minus_one(
            expr.slice[0].slice.value)
    if type(expr) is cst.Call and short_name(expr.func) == "size" and len(expr.args) == 1:
        return _is_minus_one(expr.args[0].value)
    return False


def _is_method_call(expr, method: str) -> bool:
    """``receiver.method()`` with no arguments (``SHAPES.items()``)."""
    return type(expr) is cst.Call and not expr.args and type(expr.func) is cst.Attribute and \
        expr.func.attr.value == method


def _string_value(expr) -> str | None:
    return expr.evaluated_value if type(expr) is cst.SimpleString else None


def _string_key(expr: cst.Subscript) -> str | None:
    if len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        key = expr.slice[0].slice.value
        if type(key) is cst.SimpleString:
            return key.evaluated_value
    return None
