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
loop iterates (``for shape in shapes:``), through module-level shape tuples and dicts of them (``M, N = SHAPE_2D``,
``SHAPES["wide"]``, ``for name, shape in SHAPES.items():``). A tile size divides at its smallest literal value (the
chunk count of ``(T + chunk - 1) // chunk`` over parametrized ``T`` and ``chunk``). Dimensions read from other tensors (``M, N = x.shape``) are bounded by the
largest dimension found so far. When any allocation has a size that is not spelled out, nothing is known.

The fact is three numbers: the largest extent any tensor dimension takes, the largest product of a tensor's leading
dimensions (the rows of ``x.reshape(-1, x.shape[-1])``) and the largest element count. ``launch_bound`` reads a
launch grid's axes against them. Nothing is imported or executed; the module is read once.
"""

from __future__ import annotations

import math
import os

import libcst as cst

from ..text.lazy_regex import lazy
from . import host_facts as hf
from . import test_shapes as ts
from .module_facts import Launch, ModuleFacts
from .closed_modules import has_main_block, host_functions, launches_reached_from_module
from .run_size_reader import JOINS, LOADERS, RESHAPES, RunSizes, SizeReader, short_name

_TEST_FILE = lazy(r"^(test_\w*|\w*_test)\.py$")
# builtins and methods that take a shape without making a tensor of it
_NOT_MAKERS = {"print", "str", "repr", "len", "isinstance", "range", "zip", "enumerate", "list", "tuple", "dict", "set",
               "sorted", "min", "max", "sum", "any", "all", "append", "extend", "format", "join", "write", "get",
               "tensor", "as_tensor", "Size", "id", "hash", "type", "iter", "map", "filter", "getattr", "setattr"}


def run_sizes(facts: ModuleFacts) -> RunSizes | None:
    """The module's run sizes, or None when the module is not closed or a size is not spelled out (cached)."""
    return facts.memo("run_sizes", lambda: _decide(facts))


def launch_bound(facts: ModuleFacts, launch: Launch, grid_expr: cst.BaseExpression | None) -> int | None:
    """The grid product of ``launch`` at the module's run sizes (``grid_expr``: the resolved grid, a tuple or one
    expression), or None when the module's sizes are not known or an axis is not bounded by them."""
    sizes = run_sizes(facts)
    if sizes is None or grid_expr is None:
        return None
    reader = SizeReader(facts, sizes, launch)
    elements = [e.value for e in grid_expr.elements] if type(grid_expr) in (cst.Tuple, cst.List) else [grid_expr]
    product = 1
    for element in elements:
        bound = reader.int_value(element, launch.call)
        if bound is None:
            return None
        product *= bound
    return product


def _decide(facts: ModuleFacts) -> RunSizes | None:
    if not is_closed_module(facts):
        return None
    allocations, makers = _allocations(facts)
    if not allocations and not makers:
        return None
    sizes: RunSizes | None = None
    literal = SizeReader(facts, None, None)
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
        reader = SizeReader(facts, sizes, None)
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


def is_closed_module(facts: ModuleFacts) -> bool:
    """A test module or a script that no other linted module imports, whose launches are all reached from its own
    tests or ``__main__`` block: the sizes it spells are the only ones its kernels run at (cached)."""
    return facts.memo("closed_module", lambda: _is_closed(facts))


def _is_closed(facts: ModuleFacts) -> bool:
    if facts.imported_in_project:
        return False  # another linted module imports from it: its callers there pass their own sizes
    module = facts.module
    filename = facts.filename or ""
    if not (_TEST_FILE.match(os.path.basename(filename)) or ts._imports_pytest(module) or has_main_block(module)):
        return False
    return bool(facts.launches) and launches_reached_from_module(facts)


def _grow(sizes: RunSizes | None, shape: tuple[int, ...], call: cst.Call, facts: ModuleFacts) -> RunSizes:
    dim = max(shape) if shape else 1
    rows = math.prod(shape[:-1]) if len(shape) > 1 else 1
    elements = math.prod(shape)
    if sizes is not None and short_name(call.func) in RESHAPES | {"flatten"}:  # a view holds the elements it views
        dim, rows, elements = min(dim, sizes.elements), min(rows, sizes.elements), min(elements, sizes.elements)
    if sizes is None:
        return RunSizes(dim, rows, elements, _evidence(call, shape, facts))
    evidence = sizes.evidence if sizes.dim >= dim else _evidence(call, shape, facts)
    return RunSizes(max(sizes.dim, dim), max(sizes.rows, rows), max(sizes.elements, elements), evidence)


def _evidence(call: cst.Call, shape: tuple[int, ...], facts: ModuleFacts) -> str:
    text = " ".join(facts.module.code_for_node(call).split())
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"`{text}` at {tuple(shape)}"


def _allocations(facts: ModuleFacts) -> tuple[list[cst.Call], list[cst.Call]]:
    """The calls in host code that make a tensor whose dimensions they spell (and loaders, which spell none), and
    the calls of functions of other modules whose first argument may be a shape (``generate(shape, dtype)``)."""
    found, makers = [], []
    local = set(host_functions(facts)) | set(facts.kernels)
    for call in facts.index.of_type(cst.Call):
        short = short_name(call.func)
        if short is None or facts.enclosing_kernel(call) is not None:
            continue
        if _reshaped_at_once(call, facts):
            continue  # ``torch.arange(n).reshape(shape)``: the view holds its elements, and is read instead
        if short in hf._ALLOCATORS or short in ("randint", "arange", "flatten", "repeat", "expand") \
                or short in RESHAPES or short in JOINS or short in LOADERS:
            found.append(call)
        elif short not in _NOT_MAKERS and short not in local and call.args and type(
                call.args[0].value) in (cst.Name, cst.Tuple, cst.List) and type(call.func) in (cst.Name, cst.Attribute):
            makers.append(call)
    return found, makers


def _reshaped_at_once(call: cst.Call, facts: ModuleFacts) -> bool:
    """``call`` is the receiver of a ``reshape``/``view`` to explicit sizes, which holds as many elements."""
    attribute = facts.index.parent(call)
    if type(attribute) is not cst.Attribute or attribute.value is not call or attribute.attr.value not in RESHAPES:
        return False
    outer = facts.index.parent(attribute)
    if type(outer) is not cst.Call or outer.func is not attribute:
        return False
    args = [a for a in outer.args if a.keyword is None]
    return bool(args) and not any(a.star for a in args) and all(
        type(a.value) in (cst.Integer, cst.Name, cst.Tuple, cst.List, cst.BinaryOperation) for a in args)
