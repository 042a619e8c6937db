"""What the UB model reads of a kernel's syntax and how it totals buffers: the element sizes of types, the
compiler's classes of operations (reductions, scans, selects, loads, hints), shapes after broadcasting and
reducing, names and callees, and the sweep that finds the largest total of buffers live at once.

Pure functions of the syntax tree, no state; serves ``ub.model`` and ``ub.extents``.
"""

from __future__ import annotations

import re

import libcst as cst

from ..literals import integer_value
from ..module_facts import Kernel, dotted_name
from ..walk import child_nodes, iter_nodes
from .capacity import Shape, Tile

_BYTES = {
    "float32": 4, "fp32": 4, "int32": 4, "uint32": 4, "float16": 2, "fp16": 2, "bfloat16": 2, "int16": 2,
    "uint16": 2, "int8": 1, "uint8": 1, "int1": 1, "float64": 8, "int64": 8, "uint64": 8, "float8e4nv": 1,
    "float8e5": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
}
# the element types of the compile requests (``ascendlint.compiler.configs``), in bytes
ELEMENT_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u8": 1, "i1": 1,
                 "fp8e4nv": 1, "fp8e5": 1}
DEFAULT_POINTER_DTYPE = "fp16"  # what a pointer whose type the host does not show is taken to hold (configurable)
_FLOAT_PARAM = re.compile(r"^(eps|epsilon|\w*scale\w*|alpha|beta|temperature|softcap|\w*_eps|momentum|\w*pen\w*)$",
                          re.IGNORECASE)  # the compile requests' float parameters (``ascendlint.compiler.configs``)
_TREE_REDUCTIONS = {"sum", "xor_sum", "prod", "reduce"}  # combined pairwise in a scratch (max/min in place)
_SCANS = {"cumsum", "cumprod", "associative_scan"}
_WIDENING = {*_SCANS, "sigmoid"}  # computed in fp32 whatever the tile's type, into a buffer of their own
_FRESH_RESULTS = {*_WIDENING, "where"}  # probed: written to a buffer of their own, never over a dying operand
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum", "prod"}
_HINTS = {"compile_hint", "multiple_of", "max_contiguous", "max_constancy"}  # annotations, not reads of the data
_LOADS = {"load", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg"}
_MAX_DEPTH = 8


def _sweep(intervals) -> tuple[int, list[Tile]]:
    """The largest total of the intervals live at one point, and the tiles live there (largest first)."""
    best, live = 0, []
    for point in sorted({i[0] for i in intervals} | {i[1] for i in intervals}):
        here = [i for i in intervals if i[0] <= point <= i[1]]
        total = sum(i[3] for i in here) - _reused(point, here)
        if total > best:
            best, live = total, sorted((i[2] for i in here), key=lambda t: -t.bytes)
    return best, live


def _elements(shape: Shape) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count


def _reused(point, here) -> int:
    """Bytes the tiles bound at ``point`` take over from tiles whose last use is that same statement: an
    element-wise result is written in place of an operand that dies there (``b = a * 2`` with ``a`` read for the
    last time), so the two are not live at once. Each dying buffer goes to at most one new tile that fits in it."""
    # of a multi-buffered load's pair only the copy in use can be written over, the other is the next transfer's
    dying = sorted((i[2].bytes for i in here if i[1] == point and i[0] < point), reverse=True)
    born = sorted((i[3] for i in here if i[0] == point and i[1] > point and not i[2].fresh), reverse=True)
    saved = 0
    for size in born:
        fit = next((k for k, free in enumerate(dying) if free >= size), None)
        if fit is None:
            continue
        saved += size
        dying.pop(fit)
    return saved


def _callee(call: cst.Call) -> str:
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value
    if type(func) is cst.Name:
        return func.value
    return ""


def _names(expr):
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name:
            yield node.value
            continue
        if type(node) is cst.Attribute:
            stack.append(node.value)
            continue
        if type(node) is cst.Arg and node.keyword is not None:
            stack.append(node.value)
            continue
        stack.extend(child_nodes(node))


def _converted(expr) -> str | None:
    """``x`` of ``x.to(...)``."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "to":
        receiver = expr.func.value
        return receiver.value if type(receiver) is cst.Name else None
    return None


def _names_read_late(expr):
    """The names an expression reads element by element (a reduction's operand is read first, whole)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and _callee(node) in _REDUCTIONS:
            continue
        if type(node) is cst.Name:
            yield node.value
            continue
        stack.extend(child_nodes(node))


def _pointer_name(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith("ptr") or lowered.endswith("_ptrs") or lowered.startswith("ptr")


def _pointer_bases(kernel: Kernel) -> set[str]:
    """Parameters that are the leftmost term of a load's or store's address (``x + offs`` -> ``x``)."""
    found = set()
    for node in _walk(kernel.node):
        if type(node) is cst.Call and _callee(node) in (*_LOADS, "store", "make_block_ptr") and node.args:
            address = node.args[0].value
            while type(address) is cst.BinaryOperation:
                address = address.left
            if type(address) is cst.Name and address.value in kernel.params:
                found.add(address.value)
    return found


_walk = iter_nodes


def _broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    if not a:
        return b or a
    if not b:
        return a
    if len(a) < len(b):
        a, b = b, a
    b = (1,) * (len(a) - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def _reduce(shape: Shape, axis, keep_dims=None) -> Shape | None:
    """The shape after reducing ``axis`` (None: to a scalar); with ``keep_dims=True`` the axis stays, of length 1."""
    keep = type(keep_dims) is cst.Name and keep_dims.value == "True"
    if axis is None or (type(axis) is cst.Name and axis.value == "None"):
        return None
    if type(axis) is cst.UnaryOperation and type(axis.expression) is cst.Integer:
        index = -integer_value(axis.expression)
    elif type(axis) is cst.Integer:
        index = integer_value(axis)
    else:
        return None
    dims = list(shape)
    if -len(dims) <= index < len(dims):
        if keep:
            dims[index] = 1
        else:
            del dims[index]
    return tuple(dims) or None


def _dtype_size(expr) -> int | None:
    if expr is None:
        return None
    name = dotted_name(expr) if type(expr) in (cst.Attribute, cst.Name) else None
    if name is None:
        return None
    return _BYTES.get(name.split(".")[-1])
