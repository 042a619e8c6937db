from __future__ import annotations

import re

import libcst as cst

from ascendlint.analysis.syntax import argument
from ascendlint.analysis.values import KernelAnalysis
from ascendlint.analysis.block_pointers import block_pointer_origins
from ascendlint.analysis.spelling import as_parsed
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis import magnitudes as mag
from ascendlint.analysis.grid_names import is_tile_size_name
from ascendlint.analysis.host_arguments import autotune_values, chosen_values
from ascendlint.analysis.launch_arguments import launch_argument, launches_of
from ascendlint.analysis.module_facts import Kernel
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.analysis.literals import integer_value

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
    """Flags a loaded or stored tile whose innermost (stride-1) extent is a tunable tile size under 512 bytes."""

    decides = """
    The innermost extent is `block_shape[order[0]]` for a block pointer and the last `tl.arange` axis of a pointer
    tile (an axis multiplied by a stride is not stride-1 and is skipped). Only a tile the author is already
    tuning is reported: a constexpr parameter spelled like a tile size (`BLOCK_*`, `BT`, `BK`) that the kernel's
    autotune configs vary, every offered value narrow; the advice is then one more, wider config. Not reported:
    a width passed at a launch (on real code those were set by the data or the UB budget: 22 tokens per core, a
    `BD = 32` chosen so that the tiles fit in UB, a head dim of 64, a 16x16 test block; none of 30 such findings
    on code the rule was not tuned on was one the author could follow), literals written in the kernel (the
    16x16 diagonal blocks of a triangular solve), a block that already spans the tensor's innermost dimension,
    and tiles over a small axis (`BLK_HEADS`: a few dozen heads cannot fill 512 bytes). When the element type is known (a store of a
    value cast with `.to(dtype)` / `tl.cast` or created with `dtype=`) the limit is 512 bytes; otherwise a tile
    under 64 elements is flagged. A tile loaded again through the same pointer expression (a volatile reload of it,
    as ASC301's fix writes) is the same tile, reported once.
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
        Offer a wider innermost block in the autotune configs (fp16/bf16: 256 elements, fp32: 128, int8: 512), or
        lay the data out so that the wide dimension is the contiguous one. If the configs are narrow on purpose
        (the tiles must fit in UB), say so with `# noqa: ASC503`.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BD": 16}), triton.Config({"BD": 32})], key=["D"])
            @triton.jit
            def copy_rows(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                b = tl.load(p_x, boundary_check=(0, 1))
                tl.store(p_y, b.to(tl.float16), boundary_check=(0, 1))

            def run(x, y, T, D):
                copy_rows[(triton.cdiv(T, 64),)](x, y, T, D, BT=64)
            """,
            count=2,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.autotune(configs=[triton.Config({"BLOCK": w}) for w in (16, 32)], key=["n"])
            @triton.jit
            def scale(x_ptr, n, BLOCK: language.constexpr):
                offs = language.program_id(0) * BLOCK + language.arange(0, BLOCK)
                x = language.load(x_ptr + offs, mask=offs < n)
                language.store(x_ptr + offs, x * 2, mask=offs < n)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BN": 16}), triton.Config({"BN": 32})], key=["N"])
            @triton.jit
            def gather_cols(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
                rows = tl.program_id(0) * BM + tl.arange(0, BM)
                cols = tl.arange(0, BN)
                tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M)
                tl.store(out_ptr + rows, tl.sum(tile, axis=1), mask=rows < M)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BD": 16, "BT": 256}), triton.Config({"BD": 32, "BT": 128})],
                             key=["T"])
            @triton.jit
            def transposed_tile(x_ptr, T, D, BD: tl.constexpr, BT: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (D, T), (1, D), (0, 0), (BD, BT), (0, 1))
                tl.store(p, tl.zeros((BD, BT), dtype=tl.float32), boundary_check=(0, 1))

            def run(x, T, D):
                transposed_tile[(1,)](x, T, D)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BLOCK_SIZE_N": 128}), triton.Config({"BLOCK_SIZE_N": 256})],
                             key=["dims"])
            @triton.jit
            def quantize(x_ptr, q_ptr, dims, BLOCK_SIZE_N: tl.constexpr):
                row = tl.program_id(0)
                for start in range(0, dims, BLOCK_SIZE_N):
                    cols = start + tl.arange(0, BLOCK_SIZE_N)
                    x = tl.load(x_ptr + row * dims + cols, mask=cols < dims)
                    tl.store(q_ptr + row * dims + cols, tl.cast(x * 127.0, dtype=tl.int8), mask=cols < dims)

            def run(x, q, rows, dims):
                quantize[(rows,)](x, q, dims)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def scale(x_ptr, n, BLOCK: language.constexpr):
                offs = language.program_id(0) * BLOCK + language.arange(0, BLOCK)
                x = language.load(x_ptr + offs, mask=offs < n)
                language.store(x_ptr + offs, x * 2, mask=offs < n)

            def run(x):
                width = 32  # set by the data or the UB budget: the author cannot widen it
                scale[(triton.cdiv(x.numel(), width),)](x, x.numel(), width)
            """
        ),
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
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def solve_diagonal_blocks(a_ptr, ai_ptr, T, BT: tl.constexpr):
                i_t = tl.program_id(0)
                for i in tl.static_range(0, BT // 16):
                    p_a = tl.make_block_ptr(a_ptr, (T, BT), (BT, 1), (i_t * BT + i * 16, i * 16), (16, 16), (1, 0))
                    b_a = tl.load(p_a, boundary_check=(0, 1))
                    p_ai = tl.make_block_ptr(ai_ptr, (T, 16), (16, 1), (i_t * BT + i * 16, 0), (16, 16), (1, 0))
                    tl.store(p_ai, b_a.to(tl.float32), boundary_check=(0, 1))
                cols = tl.arange(0, 16)
                tl.store(ai_ptr + cols, tl.load(a_ptr + cols))

            def run(a, ai, T):
                solve_diagonal_blocks[(triton.cdiv(T, 64),)](a, ai, T, BT=64)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attend(q_ptr, o_ptr, T, HEAD_DIM: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr):
                i_t = tl.program_id(0)
                p_q = tl.make_block_ptr(q_ptr, (T, HEAD_DIM), (HEAD_DIM, 1), (i_t * BT, 0), (BT, BK), (1, 0))
                p_o = tl.make_block_ptr(o_ptr, (T, HEAD_DIM), (HEAD_DIM, 1), (i_t * BT, 0), (BT, HEAD_DIM), (1, 0))
                b_q = tl.load(p_q, boundary_check=(0, 1))
                tl.store(p_o, b_q.to(tl.bfloat16), boundary_check=(0, 1))
                tl.store(p_q, (b_q * 2).to(tl.bfloat16), boundary_check=(0, 1))

            def run(q, o, T):
                attend[(triton.cdiv(T, 64),)](q, o, T, HEAD_DIM=64, BT=64, BK=64)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def gating(a_ptr, g_ptr, NUM_HEADS, BLK_HEADS: tl.constexpr, BLK_BATCHES: tl.constexpr):
                batch = tl.program_id(0) * BLK_BATCHES + tl.arange(0, BLK_BATCHES)
                heads = tl.arange(0, BLK_HEADS)
                off = batch[:, None] * NUM_HEADS + heads[None, :]
                mask = heads[None, :] < NUM_HEADS
                tl.store(g_ptr + off, tl.load(a_ptr + off, mask=mask).to(tl.float32), mask=mask)

            def run(a, g, batch, num_heads):
                gating[(triton.cdiv(batch, 64),)](a, g, num_heads, BLK_HEADS=8, BLK_BATCHES=64)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rms_rows(x_ptr, rstd_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
                rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
                cols = tl.arange(0, BLOCK_N)
                x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M).to(tl.float32)
                rstd = 1 / tl.sqrt(tl.sum(x * x, axis=1) / N)
                tl.store(rstd_ptr + rows, rstd.to(tl.float32), mask=rows < M)

            def run(x, rstd, M, N):
                rms_rows[(triton.cdiv(M, 8),)](x, rstd, M, N, BLOCK_M=8, BLOCK_N=1024)
            """
        ),
        Valid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def conv(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t, i_d = tl.program_id(0), tl.program_id(1)
                p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, i_d * BD), (BT, BD), (1, 0))
                tl.store(p, tl.load(p, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))

            def run(x, T, D):
                if x.dtype == torch.bfloat16:
                    BD = 256
                else:
                    BD = 16  # float32 tiles of 256 overflow the Unified Buffer with the fused epilogue
                conv[(triton.cdiv(T, 16), triton.cdiv(D, BD))](x, T, D, BT=16, BD=BD)
            """
        ),
    ]

    def __init__(self, context, options=None) -> None:
        super().__init__(context, options)
        self._reported_blocks: set[int] = set()
        self._reported_tiles: set[tuple] = set()  # (op, pointer as written, its innermost aranges) of pointer tiles
        self._launch_values: dict[tuple[int, str, bool], int | None] = {}

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
        innermost = _innermost_aranges(self.facts, analysis, pointer)
        if not innermost:
            return
        tile = (op, as_parsed(self.context.module, pointer), tuple(id(arange) for arange, _ in innermost))
        if tile in self._reported_tiles:
            return  # the same tile loaded again (a volatile reload of it, say): one finding per tile
        for arange, axis in innermost:
            if axis == _FLAT and _spelled_extent(argument(arange, 1, "end")) in self._row_extents(analysis):
                continue
            extent = self._arange_extent(analysis, arange)
            if self._report_if_narrow(node, extent, element_bytes):
                self._reported_tiles.add(tile)
                return

    def _row_extents(self, analysis: KernelAnalysis) -> set[str]:
        """Tile sizes the kernel uses on the outer (row) axis of a 2-D tile: a block's dimensions other than
        ``order[0]``, a ``tl.arange`` broadcast as ``rows[:, None]``. A 1-D vector of that width (per-row means,
        the query positions of a query block) is sized by its 2-D tile, not tunable on its own."""
        key = ("asc503-row-extents", id(analysis.kernel.node))
        return self.context.memo(key, lambda: _row_extents(self.facts, analysis))

    def _check_block(self, block: cst.Call, element_bytes: int | None) -> None:
        if id(block) in self._reported_blocks:
            return
        shape, order = argument(block, 4, "block_shape"), argument(block, 5, "order")
        if type(shape) not in (cst.Tuple, cst.List) or type(order) not in (cst.Tuple, cst.List):
            return
        first = order.elements[0].value if order.elements else None
        if type(first) is not cst.Integer or integer_value(first) >= len(shape.elements):
            return
        owner = self.facts.enclosing_kernel(block)
        if owner is None:
            return
        analysis = self.context.analysis(owner)
        inner = shape.elements[integer_value(first)].value
        if len(shape.elements) == 1 and _spelled_extent(inner) in self._row_extents(analysis):
            return
        extent = self._value(analysis, inner, tunable=True)
        if extent is None or self._spans_the_tensor(analysis, block, integer_value(first), inner, extent):
            return
        if self._report_if_narrow(block, extent, element_bytes):
            self._reported_blocks.add(id(block))

    def _spans_the_tensor(self, analysis: KernelAnalysis, block: cst.Call, axis: int, inner, extent: int) -> bool:
        """The block already covers the whole innermost dimension (``block_shape`` equal to ``shape`` there, or a
        tensor extent whose known values are not larger): the data forces the width."""
        tensor = argument(block, 1, "shape")
        if type(tensor) not in (cst.Tuple, cst.List) or axis >= len(tensor.elements):
            return False
        size = tensor.elements[axis].value
        code = self.context.module.code_for_node
        if code(size) == code(inner):
            return True
        if type(size) is cst.Integer:
            return size.evaluated_value <= extent
        known = analysis.constexpr_values.get(size.value) if type(size) is cst.Name else None
        return bool(known) and max(known) <= extent

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
        low, high = self._value(analysis, start), self._value(analysis, end, tunable=True)
        return None if low is None or high is None else high - low

    def _value(self, analysis: KernelAnalysis, expr: cst.BaseExpression | None, depth: int = 0,
               tunable: bool = False) -> int | None:
        """A literal, or a constexpr parameter whose values the module chooses at its launches or in autotune
        configs (the largest: the author already offers that width). With ``tunable``, only a tile size the author
        can widen: a constexpr spelled like one (``BLOCK_*``, ``BT``), not a tile over a small axis (``BLK_HEADS``)
        and not a literal written in the kernel (``tl.arange(0, 16)`` of a 16x16 solve is the algorithm's)."""
        if type(expr) is cst.Integer:
            return None if tunable else integer_value(expr)
        if type(expr) is not cst.Name or depth > _DEPTH:
            return None
        kernel = analysis.kernel
        name = expr.value
        if analysis.is_param(name):
            if not kernel.is_constexpr_param(name):
                return None
            if tunable and (not is_tile_size_name(name) or _tiles_a_small_axis(name)):
                return None
            return self._chosen_value(kernel, name, tunable)
        values = _reaching_values(analysis, expr)
        if len(values) == 1 and values[0] is not None:
            return self._value(analysis, values[0], depth + 1, tunable)
        return None

    def _chosen_value(self, kernel: Kernel, name: str, tunable: bool = False) -> int | None:
        """The largest value the module chooses for a constexpr; with ``tunable``, only the values of its
        autotune configs: a width passed at a launch is usually set by the data or the UB budget (22 tokens per
        core, `BD = 32` picked so that the tiles fit in UB, a 4-wide inner block of a small-inner path), which
        the author cannot widen, while a width the configs already vary is one more config to try."""
        key = (id(kernel.node), name, tunable)
        if key not in self._launch_values:
            if tunable:
                chosen = [value for config_name, value in autotune_values(self.facts, kernel) if config_name == name]
                if name in _launched_names(self.facts, kernel):
                    chosen = []  # a launch that passes the name overrides the configs' choice
            else:
                chosen = chosen_values(self.facts, kernel).get(name)
            self._launch_values[key] = max(chosen) if chosen else None
        return self._launch_values[key]

    def _element_bytes(self, analysis: KernelAnalysis, call: cst.Call, op: str) -> int | None:
        """Element size of a stored value whose type the code states (a cast or a ``dtype=``)."""
        if op not in _VALUE_POSITION:
            return None
        value = argument(call, _VALUE_POSITION[op], "value")
        for _ in range(_DEPTH):
            if type(value) is cst.Name:
                assigned = _reaching_values(analysis, value)
                if len(assigned) != 1 or assigned[0] is None:
                    return None
                value = assigned[0]
                continue
            if type(value) is not cst.Call:
                return None
            cast = analysis.cast_target(value)
            dtype = cast[1] if cast is not None else _keyword(value, "dtype")
            return _ELEMENT_BYTES.get(self.facts.qualname(dtype)) if dtype is not None else None
        return None


def _launched_names(facts, kernel: Kernel) -> set[str]:
    return {name for launch in launches_of(facts, kernel) for name in kernel.constexpr
            if launch_argument(launch, name) is not None}


def _tiles_a_small_axis(name: str) -> bool:
    """``BLK_HEADS``, ``BLOCK_H``, ``BH``: a tile over heads or groups, a few dozen at most; 512 bytes of them do
    not exist."""
    rest = re.sub(r"^(block|blk|tile)_?|_?(block|blk|tile)(_?size)?$", "", name, flags=re.IGNORECASE)
    if rest == name and len(name) == 2 and name[0] in "bB":
        rest = name[1]
    return bool(rest) and rest != name and mag.name_bits(rest) == mag.SMALL_BITS


def _innermost_aranges(facts, analysis: KernelAnalysis, pointer) -> list[tuple[cst.Call, str]]:
    """``tl.arange`` calls on the stride-1 (last, unscaled) axis of a pointer tile expression, with that axis
    (``_LAST`` of a 2-D tile, or ``_FLAT`` for a 1-D one)."""
    found: list[tuple[cst.Call, str, bool]] = []
    _collect_aranges(facts, analysis, pointer, _FLAT, False, 0, frozenset(), found)
    return [(call, axis) for call, axis, scaled in found if axis in (_LAST, _FLAT) and not scaled]


def _row_extents(facts, analysis: KernelAnalysis) -> set[str]:
    found: set[str] = set()
    for node in analysis.nodes:
        if type(node) is cst.Call and facts.qualname(node.func) == "tl.make_block_ptr":
            shape, order = argument(node, 4, "block_shape"), argument(node, 5, "order")
            if type(shape) in (cst.Tuple, cst.List) and type(order) in (cst.Tuple, cst.List) and order.elements:
                inner = order.elements[0].value
                for position, element in enumerate(shape.elements):
                    if len(shape.elements) > 1 and not (type(inner) is cst.Integer and inner.evaluated_value ==
                                                        position):
                        found.add(_spelled_extent(element.value))
        elif type(node) is cst.Subscript and _is_row_broadcast(node):
            for part in analysis.offset_nodes([node.value]):
                if type(part) is cst.Call and facts.qualname(part.func) == "tl.arange":
                    found.add(_spelled_extent(argument(part, 1, "end")))
    found.discard(None)
    return found


def _is_row_broadcast(node: cst.Subscript) -> bool:
    """``rows[:, None]``: the tile's rows, broadcast along a second (column) axis."""
    slots = [element.slice for element in node.slice]
    return (
        len(slots) == 2
        and type(slots[0]) is cst.Slice
        and type(slots[1]) is cst.Index
        and type(slots[1].value) is cst.Name
        and slots[1].value.value == "None"
    )


def _spelled_extent(expr) -> str | None:
    if type(expr) is cst.Name:
        return expr.value
    if type(expr) is cst.Integer:
        return str(expr.evaluated_value)
    return None


def _collect_aranges(facts, analysis, expr, axis, scaled, depth, seen, found) -> None:
    if expr is None or depth > _DEPTH:
        return

    def recurse(inner, inner_axis=axis, inner_scaled=scaled):
        _collect_aranges(facts, analysis, inner, inner_axis, inner_scaled, depth + 1, seen, found)

    if type(expr) is cst.Call:
        name = facts.qualname(expr.func)
        if name == "tl.arange":
            found.append((expr, axis, scaled))
        elif name in _PASS_THROUGH and expr.args:
            recurse(expr.args[0].value)
        elif type(expr.func) is cst.Attribute and expr.func.attr.value == "to":
            recurse(expr.func.value)
        return
    if type(expr) is cst.Subscript:
        slots = [element.slice for element in expr.slice]
        full = [i for i, s in enumerate(slots) if type(s) is cst.Slice]
        if axis == _FLAT and len(full) == 1 and len(slots) > 1:
            recurse(expr.value, _LAST if full[0] == len(slots) - 1 else _OTHER)
        return
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) in (cst.Add, cst.Subtract):
            recurse(expr.left)
            recurse(expr.right)
        elif type(expr.operator) is cst.Multiply:
            recurse(expr.left, axis, scaled or not _is_one(expr.right))
            recurse(expr.right, axis, scaled or not _is_one(expr.left))
        return
    if type(expr) is cst.Name and expr.value not in seen and not analysis.is_param(expr.value):
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
    return type(expr) is cst.Integer and integer_value(expr) == 1
