"""The model of one kernel at one configuration: the tiles its body binds, their shapes and element sizes, when each
buffer is live, and the largest total live at once, planned as BiShengIR plans it (multi-buffering in loops, the
compiler's own buffers for loads inside expressions, upcasts, reductions, scans and selects).

Every rule of the plan here was probed against the compiler (``tests/compiler/test_ub_model_probes.py``).
Serves ``ub.estimate`` (ASC305, ``ascendlint ub``) and ASC304's check of a tile at a large model size.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..host_resolver import host_resolver
from ..literals import integer_value
from ..module_facts import Kernel, ModuleFacts, dotted_name
from ..walk import child_nodes
from .capacity import UB_BUDGET, UB_PHYSICAL, Shape, Tile
from .configs import _arith, fold
from .tiles import (_FLOAT_PARAM, _FRESH_RESULTS, _HINTS, _LOADS, _MAX_DEPTH, _REDUCTIONS, _TREE_REDUCTIONS,
                    _WIDENING, DEFAULT_POINTER_DTYPE, ELEMENT_BYTES, _broadcast, _callee, _converted, _dtype_size,
                    _elements, _names, _names_read_late, _pointer_bases, _pointer_name, _reduce, _sweep)

@dataclass
class _Value:
    shape: Shape | None  # None: not a tile (a scalar, a pointer, unknown)
    size: int = 4
    loaded: bool = False
    pointer: bool = False
    dma: bool = False  # the result of a load itself, not a value computed from one


_SCALAR = _Value(None)


class _Model:
    def __init__(self, facts: ModuleFacts, kernel: Kernel, values: dict[str, int], multibuffer: bool = False,
                 dtypes: dict[str, str] | None = None, pointer_dtype: str = DEFAULT_POINTER_DTYPE):
        self.facts = facts
        self.kernel = kernel
        self.values = values
        self.multibuffer = multibuffer
        self.dtypes = dtypes or {}  # pointer parameter -> element type (``fp16``, ``i32``), as the compile has it
        self.default_bytes = ELEMENT_BYTES.get(pointer_dtype, 2)  # a load from a pointer of no known type
        self.scratch: list[tuple[int, str, list[set[str]], Tile]] = []  # nested arithmetic, its overwritable reads
        self.widened_from: dict[str, str] = {}  # ``a32 = a.to(tl.float32)`` of a loaded ``a``: a32 -> a
        self.pointer_origin: dict[str, str] = {}  # local pointer (``x_ptrs = x + offs``) -> the parameter it is in
        self.resolver = host_resolver(facts)
        self.env: dict[str, _Value] = {}
        self.ints: dict[str, int | None] = {}
        self.block_ptrs: dict[str, Shape | None] = {}
        self.pointers = {p for p in kernel.params if p not in kernel.constexpr and _pointer_name(p)}
        self.pointers |= _pointer_bases(kernel)
        self.extent_names: set[str] = set()
        self.unknown: set[str] = set()
        self.unknown_extents: set[str] = set()
        self.position = 0
        self.defs: dict[str, list[int]] = {}
        self.uses: dict[str, list[int]] = {}
        self.sizes: dict[str, Tile] = {}
        self.loops: list[tuple[int, int, set[str], set[str]]] = []  # start, end, names used, names assigned
        self._loop_stack: list[tuple[int, set[str], set[str]]] = []
        self.tiles_seen = False
        self.dot_operands: dict[str, int] = {}  # uses of a name as an operand of tl.dot (cube L1/L0 buffers)
        self.dot_results: set[str] = set()  # names bound to tl.dot results (the cube's L0C accumulator)
        self.address_uses: dict[str, int] = {}  # uses of a name inside a load's or store's address or mask
        self.feeds: dict[str, dict[str, int]] = {}  # uses of a name in the value bound to another (name -> target)
        self.hint_uses: dict[str, int] = {}  # uses as the tile a compile hint annotates (``tl.compile_hint(x, ...)``)
        self.binding = None  # the expression the statement being read binds to a name (a load there is that tile)
        self.temporaries: list[tuple[int, Tile]] = []  # unnamed buffers the compiler materialises, by position
        self.loop_stores: list[tuple[int, int]] = []  # (position, bytes) of tiles stored inside a loop

    # statements
    def run(self) -> None:
        self._block(self.kernel.node.body)

    def _block(self, block) -> None:
        body = block.body if hasattr(block, "body") else block
        if isinstance(body, (list, tuple)):
            for statement in body:
                self._statement(statement)
        else:
            self._statement(body)

    def _statement(self, node) -> None:
        self.position += 1
        if type(node) is cst.SimpleStatementLine:
            for small in node.body:
                self._small(small)
            return
        if type(node) is cst.For:
            self._uses(node.iter)
            self._bind_scalar(node.target)
            self._loop(node)
            return
        if type(node) is cst.While:
            self._uses(node.test)
            self._loop(node)
            return
        if type(node) is cst.If:
            self._uses(node.test)
            self._block(node.body)
            orelse = node.orelse
            while orelse is not None:
                if type(orelse) is cst.If:
                    self._uses(orelse.test)
                    self._block(orelse.body)
                    orelse = orelse.orelse
                else:
                    self._block(orelse.body)
                    orelse = None
            return
        if type(node) is cst.With:
            self._block(node.body)
            return
        if isinstance(node, cst.BaseSmallStatement):
            self._small(node)

    def _loop(self, node) -> None:
        start = self.position
        self._loop_stack.append((start, set(), set()))
        self._block(node.body)
        if getattr(node, "orelse", None) is not None:
            self._block(node.orelse.body)
        begin, used, assigned = self._loop_stack.pop()
        self.position += 1
        self.loops.append((begin, self.position, used, assigned))
        if self._loop_stack:
            self._loop_stack[-1][1].update(used)
            self._loop_stack[-1][2].update(assigned)

    def _small(self, node) -> None:
        self.binding = node.value if type(node) in (cst.Assign, cst.AnnAssign) else None
        if type(node) is cst.Assign:
            value = self._expr(node.value)
            self._uses(node.value)
            if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
                self._nested_scratch(node.value, value, node.targets[0].target.value)
            for target in node.targets:
                self._feed(node.value, target.target)
                self._bind(target.target, node.value, value)
        elif type(node) is cst.AnnAssign and node.value is not None:
            value = self._expr(node.value)
            self._uses(node.value)
            self._feed(node.value, node.target)
            self._bind(node.target, node.value, value)
        elif type(node) is cst.AugAssign:
            value = self._expr(node.value)
            self._uses(node.value)
            self._feed(node.value, node.target)
            self._feed(node.target, node.target)
            if type(node.target) is cst.Name:
                if type(node.value) is cst.Call and _callee(node.value) == "dot":
                    self.dot_results.add(node.target.value)
                self._use(node.target.value, carried=True)
                old = self.env.get(node.target.value, _SCALAR)
                merged = _Value(_broadcast(old.shape, value.shape), max(old.size, value.size) if old.shape else
                                value.size, old.loaded)
                if merged.shape:
                    self._define(node.target.value, merged)
        elif type(node) is cst.Expr:
            self._expr(node.value)
            self._uses(node.value)
        elif type(node) is cst.Return and node.value is not None:
            self._uses(node.value)

    def _feed(self, expr, target) -> None:
        """Record that the names read in ``expr`` go into the value bound to ``target`` (a name only)."""
        if type(target) is not cst.Name:
            return
        for name in _names(expr):
            if name in self.env:
                into = self.feeds.setdefault(name, {})
                into[target.value] = into.get(target.value, 0) + 1

    def _bind(self, target, expr, value: _Value) -> None:
        if type(target) is cst.Name:
            name = target.value
            self.widened_from.pop(name, None)
            source = _converted(expr)
            if source is not None and source in self.env:
                loaded = self.env[source]
                if loaded.dma and value.shape and loaded.size < value.size:
                    self.widened_from[name] = source
            if type(expr) is cst.Call and _callee(expr) == "dot":
                self.dot_results.add(name)
            if type(expr) is cst.Call and _callee(expr) == "make_block_ptr":
                self.block_ptrs[name] = self._block_shape(expr)
                self._note_origin(name, expr.args[0].value if expr.args else None)
                return
            if type(expr) is cst.Call and _callee(expr) == "advance" and expr.args:
                first = expr.args[0].value
                if type(first) is cst.Name and first.value in self.block_ptrs:
                    self.block_ptrs[name] = self.block_ptrs[first.value]
                    self._note_origin(name, first)
                    return
            if value.pointer:
                self._note_origin(name, expr)
            if value.shape is None:
                self.ints[name] = self._int(expr)
                self.env.pop(name, None)
                if value.pointer:
                    self.pointers.add(name)
                return
            self._define(name, value)
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:
                if type(element.value) is cst.Name:
                    self.ints[element.value.value] = None
                    self.env.pop(element.value.value, None)

    def _bind_scalar(self, target) -> None:
        if type(target) is cst.Name:
            self.ints[target.value] = None
            if self._loop_stack:
                pass

    def _define(self, name: str, value: _Value) -> None:
        self.env[name] = value
        self.tiles_seen = True
        if value.pointer:
            return
        self.defs.setdefault(name, []).append(self.position)
        if self._loop_stack:
            self._loop_stack[-1][2].add(name)
        elements = 1
        for dim in value.shape:
            elements *= dim
        size = elements * value.size
        old = self.sizes.get(name)
        fresh = type(self.binding) is cst.Call and _callee(self.binding) in _FRESH_RESULTS
        if old is None or old.bytes < size:
            self.sizes[name] = Tile(name, value.shape, size, value.loaded, value.dma, fresh or (old is not None
                                                                                              and old.fresh))

    def _use(self, name: str, carried: bool = False) -> None:
        if name in self.env:
            self.uses.setdefault(name, []).append(self.position - (0.5 if carried else 0))
            if self._loop_stack:
                self._loop_stack[-1][1].add(name)
            source = self.widened_from.get(name)
            if source is not None and source != name:
                self._use(source)  # probed: the compiler widens at each use, so the narrow load stays live

    def _uses(self, expr) -> None:
        for node in _names(expr):
            self._use(node)

    def _nested_scratch(self, expr, value: _Value, target: str) -> None:
        """Arithmetic nested inside the bound expression (``s * (1 - t) + t``) is materialised by the compiler:
        one scratch tile for the statement, at the width of the widest tile the nested operations read, when one
        of them can overwrite none of its operands (an operand is overwritten in place when the statement reads it
        once and it dies there). Not counted when the bound tile turns out to form addresses only."""
        if not value.shape or value.pointer or (type(expr) is cst.Call and _callee(expr) in (*_LOADS, "dot")):
            return
        width, operations = 0, []
        stack = list(child_nodes(expr))
        while stack:
            node = stack.pop()
            if type(node) is cst.Call and _callee(node) in (*_LOADS, "store", "make_block_ptr"):
                continue  # addresses and masks of transfers
            if type(node) is cst.BinaryOperation:
                read = [n for n in _names(node) if n in self.env and self.env[n].shape and not self.env[n].pointer]
                if read:
                    width = max(width, *(self.env[n].size for n in read))
                    operations.append(set(read))
            stack.extend(child_nodes(node))
        if width:
            counts: dict[str, int] = {}
            for name in _names_read_late(expr):
                counts[name] = counts.get(name, 0) + 1
            once = {name for name, count in counts.items() if count == 1}
            self.scratch.append((self.position, target, [read & once for read in operations],
                                 Tile("<nested>", value.shape, _elements(value.shape) * width, False)))

    def _temporary(self, kind: str, shape: Shape, size: int, dma: bool = False) -> None:
        """An unnamed buffer the compiler allocates for one statement (a load inside an expression)."""
        self.tiles_seen = True
        self.temporaries.append((self.position, Tile(f"<{kind}>", shape, _elements(shape) * size, False, dma)))

    def _to_size(self, dtype) -> int | None:
        """The element size a conversion names: a type (``tl.float32``) or another tile's (``x.dtype``)."""
        if type(dtype) is cst.Attribute and dtype.attr.value == "dtype" and type(dtype.value) is cst.Name:
            other = self.env.get(dtype.value.value)
            if other is not None and other.shape:
                return other.size
            origin = self._origin(dtype.value)
            return self._load_bytes(dtype.value) if origin is not None else None
        return _dtype_size(dtype)

    def _float_scalar(self, expr) -> bool:
        """A float argument of the kernel (``scale``, ``eps``): a runtime fp32 scalar, not a weakly typed literal."""
        return (type(expr) is cst.Name and expr.value in self.kernel.params and expr.value not in self.kernel.constexpr
                and expr.value not in self.env and bool(_FLOAT_PARAM.match(expr.value)))

    def _reduction(self, name: str, x: _Value, axis, keep_dims) -> _Value:
        """A reduction's result, and the compiler's buffers for it (probed): a narrow (fp16/bf16) tile is reduced
        in an fp32 copy, and a sum of a whole one-dimensional tile works in a scratch of half its fp32 size."""
        shape = _reduce(x.shape, axis, keep_dims)
        if x.size < 4:
            self._temporary("widened", x.shape, 4)
        if name in _TREE_REDUCTIONS and len(x.shape) == 1:
            self._temporary("reduce", (max(1, x.shape[0] // 2),), 4)
        return _Value(shape, x.size)

    def _note_origin(self, name: str, address) -> None:
        origin = self._origin(address)
        if origin is not None:
            self.pointer_origin[name] = origin

    def _origin(self, address) -> str | None:
        """The pointer parameter an address is into: its leftmost term, followed through local pointers."""
        while type(address) is cst.BinaryOperation:
            address = address.left
        if type(address) is cst.Name:
            if address.value in self.kernel.params:
                return address.value
            return self.pointer_origin.get(address.value)
        return None

    def _load_bytes(self, address) -> int:
        """The element size of what a load reads: the type the compile gives its pointer, else the assumed one."""
        if type(address) is cst.Name and address.value in self.pointer_origin:
            origin = self.pointer_origin[address.value]
        else:
            origin = self._origin(address)
        dtype = self.dtypes.get(origin) if origin is not None else None
        return ELEMENT_BYTES.get(dtype, self.default_bytes) if dtype is not None else self.default_bytes

    def _upcast_of(self, call: cst.Call) -> bool:
        """The load is converted to a 4-byte type by the statement's bound value (``tl.load(p).to(tl.float32)``):
        the compiler keeps the loaded (narrower) copy beside the converted one."""
        bound = self.binding
        if type(bound) is not cst.Call or type(bound.func) is not cst.Attribute or bound.func.value is not call:
            return False
        if bound.func.attr.value != "to" or not bound.args:
            return False
        return _dtype_size(bound.args[0].value) == 4

    def _in_loop(self, position: float) -> tuple[int, int] | None:
        """The innermost loop holding ``position``."""
        inside = [(b, f) for b, f, _, _ in self.loops if b <= position <= f]
        return max(inside, default=None)

    # liveness
    def _address_only(self) -> set[str]:
        """Tiles that only ever form addresses or masks of loads and stores, directly or through the names they
        are bound into (``offs``, ``cols = start + offs``, ``mask = cols < n``): the compiler turns such index
        arithmetic into strided or bounded transfers instead of materialising the tiles."""
        candidates = {name for name, tile in self.sizes.items() if not tile.loaded}
        fed_by: dict[str, list[tuple[str, int]]] = {}
        support = {}
        for name in candidates:
            support[name] = self.address_uses.get(name, 0)
            for target, count in self.feeds.get(name, {}).items():
                if target in candidates:
                    support[name] += count
                    fed_by.setdefault(target, []).append((name, count))
        pending = [name for name in candidates if support[name] < len(self.uses.get(name, []))]
        while pending:  # each name leaves once, each feed is undone once: linear in the feeds
            name = pending.pop()
            if name not in candidates:
                continue
            candidates.discard(name)
            for source, count in fed_by.get(name, ()):
                if source in candidates:
                    support[source] -= count
                    if support[source] < len(self.uses.get(source, [])):
                        pending.append(source)
        return candidates

    def peak(self) -> tuple[int, list[Tile]]:
        """The largest total of live buffers. With multi-buffering (triton-ascend's default), a load's buffer
        inside a loop is held twice (the next iteration's copy arrives while this one is used) and a tile stored
        inside a loop gets its own pair of buffers; the compiler gives up the stores' pairs (down to the loads'
        two copies) before it gives up, so the peak is the full plan when it fits, else the UB when the loads'
        pairs fit (the budget, or the loads' pairs when they take more), else their total. Loop-free kernels are
        planned the same either way."""
        address_only = self._address_only()
        intervals = []
        for name, tile in self.sizes.items():
            uses = len(self.uses.get(name, [])) - self.hint_uses.get(name, 0)
            if name in self.dot_results or (name in self.dot_operands and self.dot_operands[name] >= uses):
                continue  # cube buffers (L1, L0A/B, L0C), not the vector core's Unified Buffer
            if name in address_only:
                continue  # index and mask tiles of addresses only
            doubled = self.multibuffer and tile.dma and any(self._in_loop(d) for d in self.defs.get(name, ()))
            spans = self._lifetimes(name)
            if not doubled:
                intervals += [(start, end, tile, tile.bytes) for start, end in spans]
                continue
            # probed: the copy being read is held to the end of the loop's body unless a result is written over it
            # where it is read last; the other copy, which the next transfer lands in, is held across the body
            following = Tile(f"{name} (next)", tile.shape, tile.bytes, True, True)
            for start, end in spans:
                body = self._in_loop(start) or (start, end)
                intervals.append((start, end if self._taken_over(tile, end) else max(end, body[1]), tile, tile.bytes))
                intervals.append((*body, following, tile.bytes))
        for position, tile in self.temporaries:
            factor = 2 if self.multibuffer and tile.dma and self._in_loop(position) else 1
            intervals.append((position, position, tile, tile.bytes * factor))
        for position, target, operations, tile in self.scratch:
            if target in address_only or target in self.dot_results:
                continue
            dies = lambda name: not any(start < position < end for start, end in self._lifetimes(name))
            if any(not any(dies(name) for name in once) for once in operations):
                intervals.append((position, position, tile, tile.bytes))
        least = _sweep(intervals)
        if not self.multibuffer or not self.loop_stores:
            return least
        pairs = []
        for position, size in self.loop_stores:
            begin, finish = self._in_loop(position) or (position, position)
            pairs.append((begin, finish, Tile("<store>", (), size * 2, False, True), size * 2))
        full = _sweep(intervals + pairs)
        if full[0] <= UB_PHYSICAL or least[0] > UB_PHYSICAL:
            return full if full[0] <= UB_PHYSICAL else least
        return max(least[0], UB_BUDGET), full[1]  # the compiler fills what is left: as full as the UB allows

    def _taken_over(self, tile: Tile, position: float) -> bool:
        """A tile bound at ``position`` can be written over ``tile`` (element-wise, no larger, not a fresh result)."""
        return any(position in self.defs.get(other, ()) and not born.fresh and born.bytes <= tile.bytes
                   and other != tile.name for other, born in self.sizes.items())

    def _lifetimes(self, name: str) -> list[tuple[float, float]]:
        """The spans over which ``name`` holds a live buffer: one per binding, from it to the last use before the
        next binding (a name bound again in a later loop is a new buffer), to the end of a loop it is used in when
        bound before it, and across the whole of a loop that carries it (used in the body before it is bound)."""
        defs = sorted(self.defs.get(name, []))
        uses = sorted(self.uses.get(name, []))
        spans: list[list[float]] = []
        for k, start in enumerate(defs):
            stop = defs[k + 1] if k + 1 < len(defs) else float("inf")
            read = [u for u in uses if start <= u < stop]
            spans.append([start, max(read, default=start)])
        early = [u for u in uses if defs and u < defs[0]]
        if early and spans:
            spans[0][0] = min(early)
        for span in spans:
            for begin, finish, used, _ in self.loops:
                if name in used and span[0] < begin <= span[1]:
                    span[1] = max(span[1], finish)  # bound before the loop, read in it
        for begin, finish, _, _ in self.loops:
            inside_defs = [d for d in defs if begin <= d <= finish]
            inside_uses = [u for u in uses if begin <= u <= finish]
            if inside_defs and inside_uses and min(inside_uses) < min(inside_defs):
                spans.append([begin, finish])  # carried by the loop
        spans.sort()
        merged: list[list[float]] = []
        for span in spans:
            if merged and span[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(list(span))
        return [(a, b) for a, b in merged]

    # expressions
    def _int(self, expr, depth: int = 0) -> int | None:
        if depth > _MAX_DEPTH:
            return None
        if type(expr) is cst.Integer:
            return integer_value(expr)
        if type(expr) is cst.Name:
            name = expr.value
            if name in self.values:
                return self.values[name]
            if name in self.ints:
                return self.ints[name]
            if name in self.kernel.params:
                self.unknown.add(name)
                return None
            value = fold(self.resolver, expr, self.kernel.node)
            if value is None:
                self.unknown.add(name)
            return value
        if type(expr) is cst.BinaryOperation:
            return _arith(expr.operator, self._int(expr.left, depth + 1), self._int(expr.right, depth + 1))
        if type(expr) is cst.Call and _callee(expr) in ("cdiv",) and len(expr.args) == 2:
            a, b = self._int(expr.args[0].value, depth + 1), self._int(expr.args[1].value, depth + 1)
            return -(-a // b) if a is not None and b else None
        return None

    def _extent(self, expr) -> int | None:
        for name in _names(expr):
            if name in self.kernel.params or name in self.values:
                self.extent_names.add(name)
        outer, self.unknown = self.unknown, set()
        value = self._int(expr)
        self.unknown_extents |= self.unknown
        self.unknown = outer | self.unknown
        return value

    def _shape_of(self, expr) -> Shape | None:
        if type(expr) in (cst.Tuple, cst.List):
            dims = [self._extent(e.value) for e in expr.elements]
            return None if any(d is None for d in dims) else tuple(dims)
        if type(expr) is cst.Name and expr.value in self.kernel.params:
            self._extent(expr)
            return None
        dim = self._extent(expr)
        return (dim,) if dim is not None else None

    def _block_shape(self, call: cst.Call) -> Shape | None:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "block_shape":
                return self._shape_of(arg.value)
        positional = [a for a in call.args if a.keyword is None]
        return self._shape_of(positional[4].value) if len(positional) > 4 else None

    def _expr(self, expr) -> _Value:
        kind = type(expr)
        if kind is cst.Name:
            if expr.value in self.env:
                return self.env[expr.value]
            return _Value(None, pointer=expr.value in self.pointers)
        if kind in (cst.Integer, cst.Float, cst.SimpleString):
            return _SCALAR
        if kind in (cst.BinaryOperation, cst.Comparison, cst.BooleanOperation):
            parts = ([expr.left, expr.right] if kind is not cst.Comparison
                     else [expr.left, *[c.comparator for c in expr.comparisons]])
            values = [self._expr(p) for p in parts]
            shape = None
            for v in values:
                shape = _broadcast(shape, v.shape)
            pointer = any(v.pointer for v in values)
            if kind is cst.Comparison:  # probed: a compare of data tiles is held at the width of the data
                return _Value(shape, max((v.size for v in values if v.shape and v.loaded), default=1))
            size = max((v.size for v in values if v.shape), default=4)
            if shape and any(self._float_scalar(p) for p in parts):
                size = max(size, 4)  # probed: a runtime fp32 scalar promotes an fp16 tile to fp32
            return _Value(shape, size, any(v.loaded for v in values if v.shape), pointer)
        if kind is cst.UnaryOperation:
            return self._expr(expr.expression)
        if kind is cst.IfExp:
            a, b = self._expr(expr.body), self._expr(expr.orelse)
            return a if a.shape else b
        if kind is cst.Subscript:
            base = self._expr(expr.value)
            if base.shape is None:
                return _Value(None, pointer=base.pointer)
            dims = list(base.shape)
            out: list[int] = []
            i = 0
            for element in expr.slice:
                s = element.slice
                if type(s) is cst.Index and type(s.value) is cst.Name and s.value.value == "None":
                    out.append(1)
                elif type(s) is cst.Slice:
                    if i < len(dims):
                        out.append(dims[i])
                    i += 1
                else:
                    i += 1
            out.extend(dims[i:])
            return _Value(tuple(out), base.size, base.loaded, base.pointer)
        if kind is cst.Call:
            return self._call(expr)
        if kind is cst.Attribute:
            return _SCALAR
        return _SCALAR

    def _call(self, call: cst.Call) -> _Value:
        name = _callee(call)
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        method = type(call.func) is cst.Attribute and not (dotted_name(call.func) or "").startswith(("tl.", "triton."))
        if method and type(call.func) is cst.Attribute:
            receiver = self._expr(call.func.value)
            if name == "to" and receiver.shape:
                size = self._to_size(positional[0] if positional else keywords.get("dtype"))
                return _Value(receiver.shape, size or receiver.size, receiver.loaded)
            if name in _REDUCTIONS and receiver.shape:
                return self._reduction(name, receiver, positional[0] if positional else keywords.get("axis"),
                                       keywords.get("keep_dims"))
            if name in ("reshape", "view") and receiver.shape and positional:
                shape = self._shape_of(positional[0]) if len(positional) == 1 else self._shape_of(
                    cst.Tuple([cst.Element(p) for p in positional]))
                return _Value(shape, receiver.size, receiver.loaded) if shape else _SCALAR
            if receiver.shape:
                return receiver
            if not (dotted_name(call.func) or "").count("."):
                return _SCALAR
        if name == "arange" and len(positional) >= 2:
            start, end = self._extent(positional[0]), self._extent(positional[1])
            if start is None or end is None:
                return _SCALAR
            return _Value((end - start,), 4)
        if name in ("zeros", "full", "empty", "ones"):
            shape_expr = positional[0] if positional else keywords.get("shape")
            shape = self._shape_of(shape_expr) if shape_expr is not None else None
            dtype = keywords.get("dtype") or (positional[-1] if len(positional) >= 2 else None)
            return _Value(shape, _dtype_size(dtype) or 4) if shape else _SCALAR
        if name in ("zeros_like", "full_like", "ones_like") and positional:
            return self._expr(positional[0])
        if name in (*_LOADS, "store") and (positional or "pointer" in keywords):
            for used in _names(positional[0] if positional else keywords["pointer"]):
                self.address_uses[used] = self.address_uses.get(used, 0) + 1
            mask = keywords.get("mask")
            if mask is None and name == "load" and len(positional) > 1:
                mask = positional[1]
            elif mask is None and name == "store" and len(positional) > 2:
                mask = positional[2]
            for used in _names(mask) if mask is not None else ():
                self.address_uses[used] = self.address_uses.get(used, 0) + 1
        if name in _LOADS and (positional or "pointer" in keywords):
            pointer = positional[0] if positional else keywords["pointer"]
            if type(pointer) is cst.Name and pointer.value in self.block_ptrs:
                shape = self.block_ptrs[pointer.value]
            else:
                shape = self._expr(pointer).shape
                for other in (*positional[1:], keywords.get("mask"), keywords.get("other")):
                    if other is not None:
                        shape = _broadcast(shape, self._expr(other).shape) if shape else shape
            if not shape:
                return _SCALAR
            size = self._load_bytes(pointer)
            if name == "load" and call is not self.binding and not (self._upcast_of(call) and size >= 4):
                self._temporary("load", shape, size, dma=True)  # an upcast keeps the narrow copy beside its result
            return _Value(shape, size, loaded=name == "load", dma=name == "load" and call is self.binding)
        if name == "store" and (positional or "pointer" in keywords):
            value = positional[1] if len(positional) > 1 else keywords.get("value")
            stored = self._expr(value) if value is not None else _SCALAR
            address = positional[0] if positional else keywords["pointer"]
            width = min(stored.size, self._load_bytes(address)) if stored.shape else 0
            from_cube = type(value) is cst.Name and value.value in self.dot_results  # converted on its way out of L0C
            if stored.shape and not stored.pointer and width < stored.size and not from_cube:
                self._temporary("narrowed", stored.shape, width)  # an fp32 result stored to fp16: its copy
            direct = type(value) is cst.Name and stored.dma
            # probed: a 2-D stored tile gets no pair of its own, one with a single long axis does
            flat = stored.shape is not None and sum(1 for d in stored.shape if d > 1) <= 1
            if self._loop_stack and stored.shape and not stored.pointer and not direct and flat:
                self.loop_stores.append((self.position, _elements(stored.shape) * width))
        if name == "dot" and len(positional) >= 2:
            for operand in positional[:2]:
                if type(operand) is cst.Name:
                    self.dot_operands[operand.value] = self.dot_operands.get(operand.value, 0) + 1
            a, b = self._expr(positional[0]), self._expr(positional[1])
            if a.shape and b.shape and len(a.shape) >= 2 and len(b.shape) >= 2:
                return _Value((*a.shape[:-1], b.shape[-1]), 4)
            return _SCALAR
        if name in _REDUCTIONS and positional:
            x = self._expr(positional[0])
            if not x.shape:
                return _SCALAR
            axis = positional[1] if len(positional) > 1 else keywords.get("axis")
            return self._reduction(name, x, axis, keywords.get("keep_dims"))
        if name in _WIDENING and positional:
            x = self._expr(positional[0])
            if not x.shape:
                return _SCALAR
            if x.size < 4:
                self._temporary("widened", x.shape, 4)  # probed: a narrow tile is scanned (or a sigmoid taken) in fp32
            return _Value(x.shape, max(x.size, 4), x.loaded)
        if name in ("trans", "permute") and positional:
            x = self._expr(positional[0])
            return _Value(tuple(reversed(x.shape)), x.size, x.loaded) if x.shape else _SCALAR
        if name in ("reshape", "view", "broadcast_to") and len(positional) >= 2:
            x = self._expr(positional[0])
            shape = self._shape_of(positional[1]) if len(positional) == 2 else self._shape_of(
                cst.Tuple([cst.Element(p) for p in positional[1:]]))
            return _Value(shape, x.size, x.loaded) if shape and x.shape else _SCALAR
        if name == "expand_dims" and len(positional) >= 2:
            x = self._expr(positional[0])
            axis = self._int(positional[1])
            if x.shape and axis is not None:
                dims = list(x.shape)
                dims.insert(axis if axis >= 0 else len(dims) + 1 + axis, 1)
                return _Value(tuple(dims), x.size, x.loaded)
            return _SCALAR
        if name in ("cast",) and positional:
            x = self._expr(positional[0])
            size = _dtype_size(positional[1] if len(positional) > 1 else keywords.get("dtype"))
            return _Value(x.shape, size or x.size, x.loaded) if x.shape else _SCALAR
        if name == "insert_slice" and positional:
            x = self._expr(positional[0])  # the full tile, with the slice written into it
            return x if x.shape else _SCALAR
        if name == "extract_slice" and positional:
            x = self._expr(positional[0])
            sizes = keywords.get("sizes") or (positional[2] if len(positional) > 2 else None)
            shape = self._shape_of(sizes) if sizes is not None else None
            return _Value(shape, x.size, x.loaded) if shape and x.shape else _SCALAR
        if name in _HINTS and positional and type(positional[0]) is cst.Name:
            self.hint_uses[positional[0].value] = self.hint_uses.get(positional[0].value, 0) + 1
            return _SCALAR if name == "compile_hint" else self._expr(positional[0])
        if name in ("make_block_ptr", "advance", "program_id", "num_programs", "store", "static_assert",
                    "device_print", "debug_barrier", "multiple_of", "max_contiguous", "static_print"):
            return _SCALAR
        # elementwise: the broadcast of the tile arguments
        shape, size, loaded = None, 0, False
        for arg in positional:
            v = self._expr(arg)
            if v.shape:
                shape = _broadcast(shape, v.shape)
                size = max(size, v.size)  # probed: ``tl.exp`` of an fp16 tile stays fp16
                loaded = loaded or v.loaded
        return _Value(shape, size or 4, loaded) if shape else _SCALAR
