from __future__ import annotations

import libcst as cst

from ascendlint.analysis.values import KernelAnalysis, argument
from ascendlint.analysis.block_pointers import block_pointer_origins
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.grid import launches_of, literal_arguments
from ascendlint.analysis.module_facts import Kernel
from ascendlint.rule import Invalid, Rule, Valid

_ELEMENT_BYTES = {
    **dict.fromkeys(("tl.int8", "tl.uint8", "tl.int1", "tl.float8e4nv", "tl.float8e5", "tl.float8e4b15"), 1),
    **dict.fromkeys(("tl.float16", "tl.bfloat16", "tl.int16", "tl.uint16"), 2),
    **dict.fromkeys(("tl.float32", "tl.int32", "tl.uint32"), 4),
    **dict.fromkeys(("tl.float64", "tl.int64", "tl.uint64"), 8),
}
_VALUE_POSITION = {"tl.store": 1}
_PASS_THROUGH = {"tl.max_contiguous", "tl.multiple_of", "tl.cast"}
_LAST, _OTHER, _FLAT = "last axis", "other axis", "1-D"
_DEPTH = 10


class NarrowInnerTile(Rule):
    """Flags a loaded or stored tile whose innermost (stride-1) extent is under 512 bytes.

    The innermost extent is `block_shape[order[0]]` for a block pointer and the last `tl.arange` axis of a pointer
    tile (an axis multiplied by a stride is not stride-1 and is skipped). The extent must be a literal, or a
    constexpr parameter that a launch in the module passes as a literal. When the element type is known (a store
    of a value cast with `.to(dtype)` / `tl.cast` or created with `dtype=`) the limit is 512 bytes; otherwise a tile
    under 64 elements is flagged.
    """

    code = "ASC503"
    name = "narrow-inner-tile"
    message = "innermost tile extent is {detail}"
    severity = Severity.ADVISORY
    default = False
    opt_in_reason = "a performance advisory"
    fix_safety = FixSafety.NONE
    options = {"granule_bytes": 512, "min_elements_unknown_type": 64}
    why = """
        Ascend's memory transfer engine (MTE) moves data between global memory and the Unified Buffer in 512-byte
        granules along the contiguous dimension. A tile row narrower than that wastes most of every transfer and
        multiplies the number of DMA instructions; bandwidth-bound kernels slow down in proportion.
    """
    fix_notes = """
        Widen the innermost block (fp16/bf16: 256 elements, fp32: 128, int8: 512), or lay the data out so that
        the wide dimension is the contiguous one.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                b = tl.load(p_x, boundary_check=(0, 1))
                tl.store(p_y, b.to(tl.float16), boundary_check=(0, 1))

            def run(x, y, T, D):
                copy_rows[(triton.cdiv(T, 64),)](x, y, T, D, BT=64, BD=32)
            """,
            count=2,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def scale(x_ptr, n, BLOCK: language.constexpr):
                offs = language.program_id(0) * BLOCK + language.arange(0, BLOCK)
                x = language.load(x_ptr + offs, mask=offs < n)
                language.store(x_ptr + offs, x * 2, mask=offs < n)

            def run(x):
                width = 32
                scale[(triton.cdiv(x.numel(), width),)](x, x.numel(), width)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def gather_cols(x_ptr, out_ptr, M, N, BM: tl.constexpr):
                rows = tl.program_id(0) * BM + tl.arange(0, BM)
                cols = tl.arange(0, 16)
                tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M)
                tl.store(out_ptr + rows, tl.sum(tile, axis=1), mask=rows < M)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def transposed_tile(x_ptr, T, D, BT: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (D, T), (1, D), (0, 0), (32, BT), (0, 1))
                tl.store(p, tl.zeros((32, BT), dtype=tl.float32), boundary_check=(0, 1))

            def run(x, T, D):
                transposed_tile[(1,)](x, T, D, BT=256)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rows(x_ptr, y_ptr, n):
                cols = tl.arange(0, 16)
                weights = tl.sum(cols.to(tl.float32), 0)
                cols = tl.arange(0, 256)
                tl.store(y_ptr + cols, tl.load(x_ptr + cols, mask=cols < n) * weights, mask=cols < n)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                b = tl.load(p_x, boundary_check=(0, 1))
                tl.store(p_y, b.to(tl.float16), boundary_check=(0, 1))

            def run(x, y, T, D):
                copy_rows[(triton.cdiv(T, 16),)](x, y, T, D, BT=16, BD=256)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def column_tiles(x_ptr, M, N, BM: tl.constexpr):
                rows = tl.program_id(0) * BM + tl.arange(0, BM)
                cols = tl.arange(0, 16)
                tile = tl.load(x_ptr + rows[None, :] + cols[:, None] * M, mask=rows[None, :] < M)
                tl.store(x_ptr + rows[None, :] + cols[:, None] * M, tile * 2, mask=rows[None, :] < M)

            def run(x, M, N):
                column_tiles[(triton.cdiv(M, 256),)](x, M, N, BM=256)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def strided(x_ptr, n, stride, BLOCK: tl.constexpr):
                offs = tl.arange(0, 16)
                tl.store(x_ptr + offs * stride, tl.load(x_ptr + offs * stride) + 1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 512})], key=["n"])
            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x, n):
                scale[(triton.cdiv(n, 128),)](x, n)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def bytes_wide(x_ptr, y_ptr, n):
                offs = tl.arange(0, 512)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.int8))
                idx = tl.load(x_ptr + tl.arange(0, 64))
                tl.store(y_ptr + idx, tl.zeros((64,), dtype=tl.float32))
            """
        ),
    ]

    def __init__(self, context, options=None) -> None:
        super().__init__(context, options)
        self._reported_blocks: set[int] = set()
        self._launch_values: dict[tuple[int, str], int | None] = {}

    def visit_Call(self, node: cst.Call) -> None:
        op = self.facts.qualname(node.func)
        if op not in ("tl.load", "tl.store"):
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        element_bytes = self._element_bytes(analysis, node, op)
        pointer = argument(node, 0, "pointer")
        blocks = block_pointer_origins(self.context, kernel).of(pointer)
        if blocks:
            for block in blocks:
                self._check_block(block, element_bytes)
            return
        for arange in _innermost_aranges(self.facts, analysis, pointer):
            extent = self._arange_extent(analysis, arange)
            if self._report_if_narrow(node, extent, element_bytes):
                return

    def _check_block(self, block: cst.Call, element_bytes: int | None) -> None:
        if id(block) in self._reported_blocks:
            return
        shape, order = argument(block, 4, "block_shape"), argument(block, 5, "order")
        if not isinstance(shape, (cst.Tuple, cst.List)) or not isinstance(order, (cst.Tuple, cst.List)):
            return
        first = order.elements[0].value if order.elements else None
        if not isinstance(first, cst.Integer) or int(first.value) >= len(shape.elements):
            return
        owner = self.facts.enclosing_kernel(block)
        if owner is None:
            return
        extent = self._value(self.context.analysis(owner), shape.elements[int(first.value)].value)
        if self._report_if_narrow(block, extent, element_bytes):
            self._reported_blocks.add(id(block))

    def _report_if_narrow(self, node: cst.CSTNode, extent: int | None, element_bytes: int | None) -> bool:
        if extent is None or extent <= 0:
            return False
        granule = self.settings["granule_bytes"]
        if element_bytes is not None:
            if extent * element_bytes >= granule:
                return False
            detail = (
                f"{extent} x {element_bytes} bytes = {extent * element_bytes} bytes, "
                f"under the {granule}-byte MTE transfer granule"
            )
        else:
            minimum = self.settings["min_elements_unknown_type"]
            if extent >= minimum:
                return False
            detail = (
                f"{extent} elements, under {minimum} (element type unknown; "
                f"MTE transfers prefer {granule}-byte granules)"
            )
        self.report(node, self.message.format(detail=detail))
        return True

    # -- values ----------------------------------------------------------------------------------------------------
    def _arange_extent(self, analysis: KernelAnalysis, arange: cst.Call) -> int | None:
        start, end = argument(arange, 0, "start"), argument(arange, 1, "end")
        low, high = self._value(analysis, start), self._value(analysis, end)
        return None if low is None or high is None else high - low

    def _value(self, analysis: KernelAnalysis, expr: cst.BaseExpression | None, depth: int = 0) -> int | None:
        """A literal, or a constexpr parameter passed as a literal by a launch in this module (the smallest)."""
        if isinstance(expr, cst.Integer):
            return int(expr.value, 0)
        if not isinstance(expr, cst.Name) or depth > _DEPTH:
            return None
        kernel = analysis.kernel
        if analysis.is_param(expr.value):
            return self._launch_value(kernel, expr.value) if kernel.is_constexpr_param(expr.value) else None
        values = _reaching_values(analysis, expr)
        if len(values) == 1 and values[0] is not None:
            return self._value(analysis, values[0], depth + 1)
        return None

    def _launch_value(self, kernel: Kernel, name: str) -> int | None:
        key = (id(kernel.node), name)
        if key not in self._launch_values:
            passed = [literal_arguments(self.facts, launch).get(name) for launch in launches_of(self.facts, kernel)]
            literals = [value for value in passed if value is not None]
            self._launch_values[key] = min(literals) if literals else None
        return self._launch_values[key]

    def _element_bytes(self, analysis: KernelAnalysis, call: cst.Call, op: str) -> int | None:
        """Element size of a stored value whose type the code states (a cast or a ``dtype=``)."""
        if op not in _VALUE_POSITION:
            return None
        value = argument(call, _VALUE_POSITION[op], "value")
        for _ in range(_DEPTH):
            if isinstance(value, cst.Name):
                assigned = _reaching_values(analysis, value)
                if len(assigned) != 1 or assigned[0] is None:
                    return None
                value = assigned[0]
                continue
            if not isinstance(value, cst.Call):
                return None
            cast = analysis.cast_target(value)
            dtype = cast[1] if cast is not None else _keyword(value, "dtype")
            return _ELEMENT_BYTES.get(self.facts.qualname(dtype)) if dtype is not None else None
        return None


def _innermost_aranges(facts, analysis: KernelAnalysis, pointer) -> list[cst.Call]:
    """``tl.arange`` calls on the stride-1 (last, unscaled) axis of a pointer tile expression."""
    found: list[tuple[cst.Call, str, bool]] = []
    _collect_aranges(facts, analysis, pointer, _FLAT, False, 0, frozenset(), found)
    return [call for call, axis, scaled in found if axis in (_LAST, _FLAT) and not scaled]


def _collect_aranges(facts, analysis, expr, axis, scaled, depth, seen, found) -> None:
    if expr is None or depth > _DEPTH:
        return

    def recurse(inner, inner_axis=axis, inner_scaled=scaled):
        _collect_aranges(facts, analysis, inner, inner_axis, inner_scaled, depth + 1, seen, found)

    if isinstance(expr, cst.Call):
        name = facts.qualname(expr.func)
        if name == "tl.arange":
            found.append((expr, axis, scaled))
        elif name in _PASS_THROUGH and expr.args:
            recurse(expr.args[0].value)
        elif isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to":
            recurse(expr.func.value)
        return
    if isinstance(expr, cst.Subscript):
        slots = [element.slice for element in expr.slice]
        full = [i for i, s in enumerate(slots) if isinstance(s, cst.Slice)]
        if axis == _FLAT and len(full) == 1 and len(slots) > 1:
            recurse(expr.value, _LAST if full[0] == len(slots) - 1 else _OTHER)
        return
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Subtract)):
            recurse(expr.left)
            recurse(expr.right)
        elif isinstance(expr.operator, cst.Multiply):
            recurse(expr.left, axis, scaled or not _is_one(expr.right))
            recurse(expr.right, axis, scaled or not _is_one(expr.left))
        return
    if isinstance(expr, cst.Name) and expr.value not in seen and not analysis.is_param(expr.value):
        seen = seen | {expr.value}
        for value in _reaching_values(analysis, expr):
            if value is not None:
                _collect_aranges(facts, analysis, value, axis, scaled, depth + 1, seen, found)


def _reaching_values(analysis: KernelAnalysis, read: cst.Name) -> list[cst.BaseExpression | None]:
    """The expressions assigned to ``read`` by the definitions that reach it (None for any other binding),
    so a name reused for several tiles is resolved to the tile in force at this read."""
    return [d.value if d.kind == "assign" else None for d in analysis.definitions(read)]


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _is_one(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and int(expr.value, 0) == 1
