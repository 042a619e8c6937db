"""The sizes a closed module runs its kernels at: a test module or a script whose launches are reached only from its
own tests or ``__main__`` block, over tensors whose dimensions it spells with literals.

A module is *closed* when it is a test file (``test_*.py``, ``*_test.py``, or it imports pytest) or a script (an
``if __name__ == "__main__":`` block), no other linted module imports from it (when the engine knows the tree), and
every host function that reaches a launch is a test function or is called only from within the module (a launcher
passed around as a value, or called from nowhere in the module, takes its sizes from elsewhere). Its *run sizes*
are then read from every tensor its host code allocates (``torch.randn((tokens, heads, dim))``, ``torch.empty(M,
N)``, ``x.new_zeros(...)``, ``torch.arange(n)``, ``np.random.rand(*shape)``, and the views a tensor is reshaped
to), each dimension followed to literals: directly, through ``pytest.mark.parametrize`` cases, through a host
function's parameters at every call in the module (``run_case(256, 96, 128)``), through a literal list of shapes a
loop iterates (``for shape in shapes:``). Dimensions read from other tensors (``M, N = x.shape``) are bounded by the
largest dimension found so far. When any allocation has a size that is not spelled out, nothing is known.

The fact is three numbers: the largest extent any tensor dimension takes, the largest product of a tensor's leading
dimensions (the rows of ``x.reshape(-1, x.shape[-1])``) and the largest element count. ``launch_bound`` reads a
launch grid's axes against them. Nothing is imported or executed; the module is read once.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import libcst as cst

from ..text.lazy_regex import lazy
from . import host_facts as hf
from . import test_shapes as ts
from .grid import host_resolver
from .module_facts import Launch, ModuleFacts, dotted_name
from .literals import integer_value

_MAX_DEPTH = 12
_HUGE = 2**64  # larger bounds say nothing more

# Shapes: every candidate shape a name can take (``shape`` iterating ``[(128, 128), (256, 256)]``).
Shapes = tuple  # tuple[tuple[int, ...], ...]

_TEST_FILE = lazy(r"^(test_\w*|\w*_test)\.py$")
_FIXTURES = {"request", "tmp_path", "tmpdir", "monkeypatch", "capsys", "capfd", "caplog", "benchmark"}
_DIVIDE_UP = {"cdiv", "ceil_div", "ceildiv", "div_up", "cdiv_int"}
_PASS_CALLS = {"int", "abs", "round", "ceil", "floor"}
_RESHAPES = {"view", "reshape"}
_JOINS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack"}
# builtins and methods that take a shape without making a tensor of it
_NOT_MAKERS = {"print", "str", "repr", "len", "isinstance", "range", "zip", "enumerate", "list", "tuple", "dict", "set",
               "sorted", "min", "max", "sum", "any", "all", "append", "extend", "format", "join", "write", "get",
               "tensor", "as_tensor", "Size", "id", "hash", "type", "iter", "map", "filter", "getattr", "setattr"}
_LOADERS = {"load", "from_pretrained", "from_file", "fromfile", "load_file", "frombuffer"}


@dataclass(frozen=True)
class RunSizes:
    """The largest dimension, leading-dimension product (rows) and element count of any tensor a closed module
    allocates, and the allocation that sets the largest dimension."""

    dim: int
    rows: int
    elements: int
    evidence: str = ""


def run_sizes(facts: ModuleFacts) -> RunSizes | None:
    """The module's run sizes, or None when the module is not closed or a size is not spelled out (cached)."""
    return facts.memo("run_sizes", lambda: _decide(facts))


def launch_bound(facts: ModuleFacts, launch: Launch, grid_expr: cst.BaseExpression | None) -> int | None:
    """The grid product of ``launch`` at the module's run sizes (``grid_expr``: the resolved grid, a tuple or one
    expression), or None when the module's sizes are not known or an axis is not bounded by them."""
    sizes = run_sizes(facts)
    if sizes is None or grid_expr is None:
        return None
    reader = _Reader(facts, sizes, launch)
    elements = [e.value for e in grid_expr.elements] if type(grid_expr) in (cst.Tuple, cst.List) else [grid_expr]
    product = 1
    for element in elements:
        bound = reader.int_value(element, launch.call)
        if bound is None:
            return None
        product *= bound
    return product


# -- the decision ---------------------------------------------------------------------------------------------------
def _decide(facts: ModuleFacts) -> RunSizes | None:
    module = facts.module
    if facts.imported_in_project:
        return None  # another linted module imports from it: its callers there pass their own sizes
    filename = facts.filename or ""
    if not (_TEST_FILE.match(os.path.basename(filename)) or ts._imports_pytest(module) or _has_main_block(module)):
        return None
    if not facts.launches or not _launches_reached_from_module(facts):
        return None
    allocations, makers = _allocations(facts)
    if not allocations and not makers:
        return None
    sizes: RunSizes | None = None
    literal = _Reader(facts, None, None)
    for call in makers:
        for shape in literal.shape_argument(call) or ():
            sizes = _grow(sizes, shape, call, facts)
    derived = []
    for call in allocations:  # sizes spelled with literals
        shapes = literal.allocation_shapes(call)
        if shapes is None:
            derived.append(call)
        for shape in shapes or ():
            sizes = _grow(sizes, shape, call, facts)
    if sizes is None:
        return None  # no allocation is spelled with literals alone
    for _ in range(2):  # then sizes read from the tensors found so far (``torch.empty(M, N)`` of ``M, N = x.shape``)
        reader = _Reader(facts, sizes, None)
        grown = sizes
        for call in derived:
            shapes = reader.allocation_shapes(call)
            if shapes is None:
                return None
            for shape in shapes:
                grown = _grow(grown, shape, call, facts)
        if grown == sizes:
            break
        sizes = grown
    return sizes


def _grow(sizes: RunSizes | None, shape: tuple[int, ...], call: cst.Call, facts: ModuleFacts) -> RunSizes:
    dim = max(shape) if shape else 1
    rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
    elements = math.prod(shape)
    if sizes is not None and _short(call.func) in _RESHAPES | {"flatten"}:  # a view holds the elements it views
        dim, rows, elements = min(dim, sizes.elements), min(rows, sizes.elements), min(elements, sizes.elements)
    if sizes is None:
        return RunSizes(dim, rows, elements, _evidence(call, shape, facts))
    evidence = sizes.evidence if sizes.dim >= dim else _evidence(call, shape, facts)
    return RunSizes(max(sizes.dim, dim), max(sizes.rows, rows), max(sizes.elements, elements), evidence)


def _evidence(call: cst.Call, shape: tuple[int, ...], facts: ModuleFacts) -> str:
    text = " ".join(facts.module.code_for_node(call).split())
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"`{text}` at {tuple(shape)}"


def _has_main_block(module: cst.Module) -> bool:
    for statement in module.body:
        if type(statement) is cst.If and type(statement.test) is cst.Comparison:
            test = statement.test
            names = [test.left, *(c.comparator for c in test.comparisons)]
            if any(type(n) is cst.Name and n.value == "__name__" for n in names) and any(
                    type(n) is cst.SimpleString and n.evaluated_value == "__main__" for n in names):
                return True
    return False


def _outermost_function(facts: ModuleFacts, node: cst.CSTNode) -> cst.CSTNode | None:
    """The module-level function holding ``node``, the module for module-level code, None inside a class."""
    found: cst.CSTNode = facts.module
    for ancestor in facts.index.ancestors(node):
        if type(ancestor) is cst.ClassDef:
            return None
        if type(ancestor) is cst.FunctionDef:
            found = ancestor
    return found


def _host_functions(facts: ModuleFacts) -> dict[str, cst.FunctionDef]:
    kernels = facts.kernel_nodes()
    return {s.name.value: s for s in facts.module.body if type(s) is cst.FunctionDef and id(s) not in kernels}


def _launches_reached_from_module(facts: ModuleFacts) -> bool:
    """Every host function that reaches a launch is a test, or is called (only called) from within the module;
    tests take no argument the module does not give (parametrize names, its own fixtures)."""
    functions = _host_functions(facts)
    callers, escaped = _call_sites(facts, functions)
    fixtures = {name for name, f in functions.items() if any(_is_fixture(d.decorator) for d in f.decorators)}
    pending = []
    for launch in facts.launches:
        holder = _outermost_function(facts, launch.call)
        if holder is None:
            return False
        if holder is not facts.module:
            pending.append(holder)
    seen: set[int] = set()
    while pending:
        function = pending.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        if function.name.value not in functions or function.name.value in escaped:
            return False
        sites = callers.get(function.name.value, [])
        if function.name.value.startswith("test"):
            given = set(_parametrize_cases(function, facts.module)) | fixtures | _FIXTURES
            params = function.params
            if any(p.name.value not in given for p in (*params.posonly_params, *params.params,
                                                         *params.kwonly_params)):
                return False
            continue
        if not sites:
            return False  # called from nowhere in the module: its callers are elsewhere
        for site in sites:
            holder = _outermost_function(facts, site)
            if holder is None:
                return False
            if holder is not facts.module:
                pending.append(holder)
    return True


def _call_sites(facts: ModuleFacts, functions: dict[str, cst.FunctionDef]
                ) -> tuple[dict[str, list[cst.Call]], set[str]]:
    """Calls of each host function by name, and the functions used other than by a call or their ``def`` (passed
    as a value, rebound, registered): those are called from elsewhere too."""
    found: dict[str, list[cst.Call]] = {}
    escaped: set[str] = set()
    index = facts.index
    for name, function in functions.items():
        for node in index.names(name):
            parent = index.parent(node)
            if parent is function or type(parent) is cst.Param:  # its def, or a parameter of that name
                continue
            if type(parent) is cst.Call and parent.func is node:
                found.setdefault(name, []).append(parent)
            elif not ((type(parent) is cst.Attribute and parent.attr is node)
                      or (type(parent) is cst.Arg and parent.keyword is node)):
                escaped.add(name)
    return found, escaped


def _is_fixture(decorator: cst.BaseExpression) -> bool:
    target = decorator.func if type(decorator) is cst.Call else decorator
    name = dotted_name(target)
    return name is not None and name.split(".")[-1] == "fixture"


def _parametrize_cases(function: cst.FunctionDef, module: cst.Module | None = None
                       ) -> dict[str, list[cst.BaseExpression]]:
    """Each parametrized name of a test and the case items it takes (the cases written in the decorator, or in a
    module-level list it names: ``@pytest.mark.parametrize("shape", SHAPES)``)."""
    found: dict[str, list[cst.BaseExpression]] = {}
    for decorator in function.decorators:
        call = decorator.decorator
        if not (type(call) is cst.Call and len(call.args) >= 2 and ts._is_parametrize(call.func)):
            continue
        names = ts._names(call.args[0].value)
        listed = call.args[1].value
        if type(listed) is cst.ListComp and type(listed.for_in.iter) is cst.Name:
            listed = listed.for_in.iter  # [pytest.param(*case) for case in CASES]
        if type(listed) is cst.Name and module is not None:
            listed = _module_value(module, listed.value) or listed
        cases = ts._cases(listed)
        for name in names:
            found.setdefault(name, [])
        if not cases:
            for name in names:
                found[name].append(call.args[1].value)  # not literal: unknown
            continue
        for case in cases:
            for position, name in enumerate(names):
                found[name].append(case[position] if position < len(case) else call.args[1].value)
    return found


def _module_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    """The value of the one module-level assignment of ``name``, or None."""
    found = []
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Assign and len(small.targets) == 1 and type(
                    small.targets[0].target) is cst.Name and small.targets[0].target.value == name:
                found.append(small.value)
    return found[0] if len(found) == 1 else None


def _allocations(facts: ModuleFacts) -> tuple[list[cst.Call], list[cst.Call]]:
    """The calls in host code that make a tensor whose dimensions they spell (and loaders, which spell none), and
    the calls of functions of other modules whose first argument may be a shape (``generate(shape, dtype)``)."""
    found, makers = [], []
    local = set(_host_functions(facts)) | set(facts.kernels)
    for call in facts.index.of_type(cst.Call):
        short = _short(call.func)
        if short is None or facts.enclosing_kernel(call) is not None:
            continue
        if short in hf._ALLOCATORS or short in ("randint", "arange", "flatten", "repeat", "expand") \
                or short in _RESHAPES or short in _JOINS or short in _LOADERS:
            found.append(call)
        elif short not in _NOT_MAKERS and short not in local and call.args and type(
                call.args[0].value) in (cst.Name, cst.Tuple, cst.List) and type(call.func) in (cst.Name, cst.Attribute):
            makers.append(call)
    return found, makers


def _short(func: cst.BaseExpression) -> str | None:
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return None


# -- bounds ---------------------------------------------------------------------------------------------------------
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


class _Reader:
    """Upper bounds of host expressions of one module. ``sizes`` None: literal sizes only (a dimension read from a
    tensor is unknown); otherwise such a read is bounded by the sizes."""

    def __init__(self, facts: ModuleFacts, sizes: RunSizes | None, launch: Launch | None) -> None:
        self.facts = facts
        self.index = facts.index
        self.sizes = sizes
        self.launch = launch
        self.resolver = host_resolver(facts)
        self.constants = facts.module_constants
        self.functions = _host_functions(facts)
        self._sites: dict[str, list[cst.Call]] | None = None
        self._params: dict[int, dict[str, object]] = {}
        self._loops: dict[int, dict[str, object]] = {}
        self._busy: set = set()
        self._names: dict[tuple[str, int], object] = {}  # (name, site) -> its bound: each name read once per site

    # -- allocations
    def allocation_shapes(self, call: cst.Call) -> Shapes | None:
        """The candidate shapes of the tensor ``call`` makes, or None when a dimension is not bounded."""
        short = _short(call.func)
        site = call
        sizes = self.sizes
        args = [a for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if short in _LOADERS:
            return None
        if short in _JOINS:
            if sizes is None or not args or type(args[0].value) not in (cst.List, cst.Tuple):
                return None
            return ((sizes.dim * len(args[0].value.elements),),)
        if short == "flatten":
            return None if sizes is None else ((sizes.elements,),)
        if short in _RESHAPES:
            values = [a.value for a in args if not a.star]
            if len(values) == 1 and type(values[0]) in (cst.Tuple, cst.List):
                values = [e.value for e in values[0].elements]
            if not values or any(type(v) in (cst.Attribute, cst.SimpleString) for v in values) or "dtype" in keywords:
                return ((1,),)  # a dtype view keeps the shape
            if len(values) == 1 and self._names_a_shape(values[0], site):
                return ((1,),)  # back to a shape a tensor had: ``y.view(x_shape)``
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

    def _lower(self, expr, site) -> int:
        """A lower bound of a divisor: its literal value where the host spells one, else 1."""
        if type(expr) is cst.Integer:
            return max(1, integer_value(expr))
        if type(expr) is cst.Name:
            values = self.resolver.assignments_before(expr.value, site)
            if values and all(type(v) is cst.Integer for v in values):
                return max(1, min(integer_value(v) for v in values))
            if not values and expr.value in self.constants:
                return max(1, self.constants[expr.value])
        if type(expr) is cst.Subscript and self.launch is not None:
            key = _string_key(expr)
            if key is not None:
                argument = self.launch.keywords.get(key)
                if argument is not None and type(argument.value) is cst.Integer:
                    return max(1, integer_value(argument.value))
        return 1

    def _subscript(self, expr: cst.Subscript, site, depth, names):
        if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
            return None
        index = expr.slice[0].slice.value
        receiver = expr.value
        key = _string_key(expr)
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
        if type(tensor) is cst.Call and _short(tensor.func) in _RESHAPES | {"flatten"}:
            args = [a.value for a in tensor.args if a.keyword is None]
            if len(args) == 1 and type(args[0]) in (cst.Tuple, cst.List):
                args = [e.value for e in args[0].elements]
            if _short(tensor.func) in _RESHAPES and any(type(a) in (cst.Attribute, cst.SimpleString) for a in args):
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
        short = _short(call.func)
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if short in _DIVIDE_UP and len(args) == 2:
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
        scope = self.resolver._scope_node(site)
        found = []
        loops = self._loop_values(scope)
        if name in loops:
            found.append(loops[name])
        assigned = self.resolver.assignments_before(name, site)
        for value in assigned:
            if not isinstance(value, cst.BaseExpression):
                return None
            found.append(self.value(value, site, depth + 1, names))
        if found:
            return _join(found)
        status, value = self.resolver.lookup(name, site)
        if status == "value":
            if not isinstance(value, cst.BaseExpression):
                return None
            outer = self.resolver._scope_node(self.resolver._scope_node(site))
            loops = self._loop_values(outer)
            extra = [loops[name]] if name in loops else []
            return _join([self.value(value, site, depth + 1, names), *extra])
        if status == "param" and type(scope) is cst.FunctionDef:
            return self._param_values(scope).get(name)
        if name in self.constants:
            return self.constants[name]
        module_loops = self._loop_values(self.facts.module)
        return module_loops.get(name)

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
        params = [*function.params.posonly_params, *function.params.params]
        keyword_only = list(function.params.kwonly_params)
        cases = _parametrize_cases(function, self.facts.module)
        sites = self._call_sites().get(function.name.value, []) if self.functions.get(
            function.name.value) is function else []
        for position, param in enumerate([*params, *keyword_only]):
            name = param.name.value
            if name in cases:
                found[name] = _join([self._case_value(item) for item in cases[name]])
                continue
            if not sites:
                continue
            values = []
            for call in sites:
                if any(a.star for a in call.args):
                    values = [None]
                    break
                given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                positional = [a.value for a in call.args if a.keyword is None]
                if name in given:
                    argument = given[name]
                elif position < len(params) and position < len(positional):
                    argument = positional[position]
                else:
                    argument = param.default
                values.append(None if argument is None else self.value(argument, call, 1, frozenset()))
            found[name] = _join(values)
        self._busy.discard(id(function))
        self._params[id(function)] = found
        return found

    def _case_value(self, item):
        """A parametrize case item: an integer or a shape the module spells (``1 << 20``, ``(128, 64)``)."""
        return self.value(item, item, 1, frozenset())

    def _call_sites(self) -> dict[str, list[cst.Call]]:
        """Calls by function name; a function used other than by calls has no call sites that tell its sizes."""
        if self._sites is None:
            found, escaped = _call_sites(self.facts, self.functions)
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
            if type(node) not in (cst.For, cst.CompFor) or self.resolver._scope_node(node) is not scope:
                continue
            items = self._items(node.iter, node)
            for name, value in _bind_items(node.target, items):
                found[name] = _join([found[name], value]) if name in found else value
        return found

    def _items(self, expr, site, depth: int = 0) -> list | None:
        """The values a loop over ``expr`` takes: the elements of a literal list or tuple (through a name assigned
        one), or ``range(...)``'s largest; None when not spelled."""
        if depth > _MAX_DEPTH:
            return None
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
                return None
            items = []
            for value in assigned:
                found = self._items(value, site, depth + 1) if isinstance(value, cst.BaseExpression) else None
                if found is None:
                    return None
                items.extend(found)
            return items
        if type(expr) is cst.Call and _short(expr.func) == "range" and expr.args:
            end = expr.args[0].value if len(expr.args) == 1 else expr.args[1].value
            bound = self.value(end, site, depth + 1, frozenset())
            return [bound] if type(bound) is int else None
        return None


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
    if type(expr) is cst.Call and _short(expr.func) == "size" and len(expr.args) == 1:
        return _is_minus_one(expr.args[0].value)
    return False


def _string_key(expr: cst.Subscript) -> str | None:
    if len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        key = expr.slice[0].slice.value
        if type(key) is cst.SimpleString:
            return key.evaluated_value
    return None

