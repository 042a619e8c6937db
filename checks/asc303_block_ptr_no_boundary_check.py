from __future__ import annotations

import libcst as cst

from ascendlint.analysis.values import argument
from ascendlint.analysis.block_pointers import block_pointer_origins, block_rank
from ascendlint.diagnostics import Edit, FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_MASK_POSITION = {"tl.load": 1, "tl.store": 2}


class BlockPtrNoBoundaryCheck(Rule):
    """Flags `tl.load` / `tl.store` of a block pointer that passes no `boundary_check`.

    Block pointers made by `tl.make_block_ptr`, moved by `tl.advance` or returned by a jit helper all count.
    """

    code = "ASC303"
    name = "block-ptr-no-boundary-check"
    message = "block-pointer {op} without `boundary_check`: the last tile can run past the tensor"
    severity = Severity.WARNING
    fix_safety = FixSafety.UNSAFE
    why = """
        A block pointer's DMA (MTE) copies the whole block. Without `boundary_check` nothing clips the last tile
        of a dimension that the block size does not divide, so the transfer reads or writes past the allocation
        ("DDR address out of range" on Ascend) or silently overwrites a neighbouring tensor.
    """
    fix_notes = """
        The fix adds `boundary_check=(0, ..., rank-1)` for the block's rank. It is unsafe because out-of-bounds
        elements of a checked load are then padded (see `padding_option`) instead of read, which changes values
        a kernel might have relied on, and it costs a little time when the shape is known to divide evenly.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                tl.store(p_y, tl.load(p_x))
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                tl.store(p_y, tl.load(p_x, boundary_check=(0, 1)), boundary_check=(0, 1))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def row_sum(x_ptr, out_ptr, N, BN: language.constexpr):
                p = language.make_block_ptr(
                    base=x_ptr, shape=(N,), strides=(1,), offsets=(0,), block_shape=(BN,), order=(0,)
                )
                acc = language.zeros((BN,), dtype=language.float32)
                for _ in range(0, N, BN):
                    acc += language.load(
                        p,
                        padding_option="zero",
                    )
                    p = language.advance(p, (BN,))
                language.store(out_ptr, language.sum(acc))
            """,
            fixed="""
            import triton
            from triton import language as language

            @triton.jit
            def row_sum(x_ptr, out_ptr, N, BN: language.constexpr):
                p = language.make_block_ptr(
                    base=x_ptr, shape=(N,), strides=(1,), offsets=(0,), block_shape=(BN,), order=(0,)
                )
                acc = language.zeros((BN,), dtype=language.float32)
                for _ in range(0, N, BN):
                    acc += language.load(
                        p,
                        padding_option="zero", boundary_check=(0,),
                    )
                    p = language.advance(p, (BN,))
                language.store(out_ptr, language.sum(acc))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def tile_ptrs(base, T, K, i_t, BT: tl.constexpr, BK: tl.constexpr):
                p = tl.make_block_ptr(base, (T, K), (K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
                return p, i_t * BT

            @triton.jit
            def kernel(q_ptr, o_ptr, T, K, BT: tl.constexpr, BK: tl.constexpr):
                i_t = tl.program_id(0)
                p_q, start = tile_ptrs(q_ptr, T, K, i_t, BT, BK)
                offs = start + tl.arange(0, BT)
                tl.store(o_ptr + offs, tl.sum(tl.load(p_q), axis=1), mask=offs < T)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def tile_ptrs(base, T, K, i_t, BT: tl.constexpr, BK: tl.constexpr):
                p = tl.make_block_ptr(base, (T, K), (K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
                return p, i_t * BT

            @triton.jit
            def kernel(q_ptr, o_ptr, T, K, BT: tl.constexpr, BK: tl.constexpr):
                i_t = tl.program_id(0)
                p_q, start = tile_ptrs(q_ptr, T, K, i_t, BT, BK)
                offs = start + tl.arange(0, BT)
                tl.store(o_ptr + offs, tl.sum(tl.load(p_q, boundary_check=(0, 1)), axis=1), mask=offs < T)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def edge_or_block(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, EDGE: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if EDGE:
                    rows = t0 + tl.arange(0, BT)
                    p_x = x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :]
                    b_x = tl.load(p_x, mask=rows[:, None] < T, other=0.0)
                else:
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0))
                    b_x = tl.load(p_x)
                tl.store(x_ptr + tl.arange(0, BD), tl.sum(b_x, axis=0))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def edge_or_block(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, EDGE: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if EDGE:
                    rows = t0 + tl.arange(0, BT)
                    p_x = x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :]
                    b_x = tl.load(p_x, mask=rows[:, None] < T, other=0.0)
                else:
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0))
                    b_x = tl.load(p_x, boundary_check=(0, 1))
                tl.store(x_ptr + tl.arange(0, BD), tl.sum(b_x, axis=0))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(p_x):
                return tl.sum(tl.load(p_x), 1)

            @triton.jit
            def kernel(x, o, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                tl.store(o + i_t * BT + tl.arange(0, BT), row_sum(p_x))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(p_x):
                return tl.sum(tl.load(p_x, boundary_check=(0, 1)), 1)

            @triton.jit
            def kernel(x, o, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                tl.store(o + i_t * BT + tl.arange(0, BT), row_sum(p_x))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(p_x):
                return tl.sum(tl.load(p_x), 1)

            @triton.jit
            def kernel(x, o, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                rows = i_t * BT + tl.arange(0, BT)
                p_x = x + rows[:, None] * D + tl.arange(0, D)[None, :]
                p_y = tl.make_block_ptr(x, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                total = row_sum(p_x) + tl.sum(tl.load(p_y, boundary_check=(0, 1)), 1)
                tl.store(o + rows, total)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                tl.store(p_y, tl.load(p_x, boundary_check=(0, 1)), boundary_check=(0, 1))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs, mask=offs < n)
                tl.store(x_ptr + offs, x * 2, mask=offs < n)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def tile_ptrs(base, T, K, i_t, BT: tl.constexpr, BK: tl.constexpr):
                p = tl.make_block_ptr(base, (T, K), (K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
                return p, base + i_t * BT * K

            @triton.jit
            def kernel(q_ptr, T, K, BT: tl.constexpr, BK: tl.constexpr):
                p_q, q_row = tile_ptrs(q_ptr, T, K, tl.program_id(0), BT, BK)
                first = tl.load(q_row)
                tl.store(p_q, tl.load(p_q, None, None, (0, 1)) * first, boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def edge_or_block(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, EDGE: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if EDGE:
                    rows = t0 + tl.arange(0, BT)
                    p_x = x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :]
                    b_x = tl.load(p_x, mask=rows[:, None] < T, other=0.0)
                else:
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0))
                    b_x = tl.load(p_x, boundary_check=(0, 1))
                tl.store(x_ptr + tl.arange(0, BD), tl.sum(b_x, axis=0))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            def host_side(buffer, p):
                return buffer.load(p)
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        op = self.facts.qualname(node.func)
        if op not in _MASK_POSITION or argument(node, 3, "boundary_check") is not None:
            return
        if argument(node, _MASK_POSITION[op], "mask") is not None:
            return  # a masked access is a pointer tile, never a block pointer
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        origins = block_pointer_origins(self.context, kernel).of(argument(node, 0, "pointer"))
        if not origins:
            return
        ranks = {block_rank(origin) for origin in origins}
        rank = ranks.pop() if len(ranks) == 1 else None
        self.report(
            node,
            self.message.format(op=op.split(".")[1]),
            fix_message=None if rank is None else f"Add `boundary_check={_checked_axes(rank)}`",
            edits=None if rank is None else lambda loc: [_append_keyword(loc, node, rank)],
        )


def _checked_axes(rank: int) -> str:
    return "(0,)" if rank == 1 else "(" + ", ".join(str(axis) for axis in range(rank)) + ")"


def _append_keyword(loc, call: cst.Call, rank: int) -> Edit:
    _, end = loc.offsets(call.args[-1])  # the argument's span keeps its value's parentheses
    return Edit(end, end, f", boundary_check={_checked_axes(rank)}")
