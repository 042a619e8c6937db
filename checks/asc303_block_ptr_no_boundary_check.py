from __future__ import annotations

import libcst as cst

from ascendlint.analysis.syntax import argument
from ascendlint.analysis.block_pointers import block_pointer_origins, block_rank, imported_block
from ascendlint.analysis.grid_names import is_model_dimension_name
from ascendlint.analysis.host_guards import host_guards, static_guards
from ascendlint.analysis.literal_launches import literal_launch_guards
from ascendlint.diagnostics import Edit, FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.analysis.literals import integer_value

_MASK_POSITION = {"tl.load": 1, "tl.store": 2}


class BlockPtrNoBoundaryCheck(Rule):
    """Flags `tl.load` / `tl.store` of a block pointer that passes no `boundary_check`."""

    decides = """
    Block pointers made by `tl.make_block_ptr`, moved by `tl.advance` or returned by a jit helper all count.
    Not reported when the block provably never overshoots: in every dimension its block extent equals the tensor
    extent at offset 0 (`(W, D)` blocks of a `(W, D)` weight), or every launch of the kernel in the module is
    guarded by the host (`if T % BT == 0 and K == BK:`, through host names, an `assert D % BD == 0` before it,
    or an early exit such as `if T % BT != 0: raise ValueError(...)`, in any spelling of the size: `x.shape[0]`,
    `x.size(0)` or a name bound to either), or every shape the host lets through divides by the block (an early
    return unless the shape is in a literal set, passes a predicate function that checks it, or is a key of a
    literal table; also when every caller of a private launcher states it), or the kernel asserts it at compile
    time (`tl.static_assert(M % BLOCK_M == 0)` in its body), or the module is a test module or script whose every
    launch (and `warmup` compile) of the kernel runs from its own tests with literal sizes the block divides
    (`rows, cols, BR, BC = SHAPE_2D` of a module-level tuple, `pytest.mark.parametrize` cases), and the offset is
    a multiple of the block (`i_t * BT`); nor when the access sits in a branch of an `if`
    on constexprs whose other branch moves the same block with `boundary_check` (a `TAIL_MODE` split: this
    variant is launched for full tiles only).

    A dimension whose extent is a model dimension (`K`, `V`, `D`, `HEAD_DIM`, `hidden_size`) is not reported by
    default: model sizes are multiples of the usual power-of-two blocks, and the host usually picks the block to
    divide them, in ways a linter cannot follow. Set `check-model-dimensions = true` to report those too (a head
    dim of 96 under a block of 128 does overshoot).
    """

    code = "ASC303"
    name = "block-ptr-no-boundary-check"
    message = "block-pointer {op} without `boundary_check`: the last tile can run past the tensor"
    partial_message = (
        "block-pointer {op} whose `boundary_check` leaves out dimension{s} {dims}: the last tile can run past the"
        " tensor there"
    )
    severity = Severity.WARNING
    fix_safety = FixSafety.UNSAFE
    options = {"check-model-dimensions": False}
    default = False
    opt_in_reason = (
        "below the default bar on code no change was tuned on: 3 of 11 findings right on the untuned sets (set 1 "
        "3/7, set 3 0/4), against 11/12 on the corpus it was written on. The false findings are block pointers over "
        "shapes the host makes exact in ways it did not read then (a `tl.static_assert`, read since; a launcher "
        "reached only for fixed shapes)"
    )
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
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rows(x_ptr, T, BT: tl.constexpr, BK: tl.constexpr, K: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (T, K), (K, 1), (tl.program_id(0) * BT, 0), (BT, BK), (1, 0))
                tl.store(p, tl.load(p) * 2)

            def run(x, T, BT):
                if T % BT == 0:
                    rows[(T // BT,)](x, T, BT=BT, BK=64, K=64)
                rows[(triton.cdiv(T, BT),)](x, T, BT=BT, BK=64, K=64)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scan(x_ptr, N, lo, BN: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (N,), (1,), (0,), (BN,), (0,))
                p = tl.advance(p, (lo,))
                tl.store(p, tl.load(p) + 1)

            def run(x, N, lo):
                assert N % 128 == 0
                scan[(1,)](x, N, lo, BN=128)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def whole(x_ptr, W: tl.constexpr, D: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (W, D), (D, 1), (tl.program_id(0), 0), (W, D), (1, 0))
                tl.store(p, tl.load(p) * 2)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def split(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                if TAIL_MODE == 0:
                    b = tl.load(p_x)
                else:
                    b = tl.load(p_y, boundary_check=(0, 1))
                tl.store(p_y, b, boundary_check=(0, 1))
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

            @triton.jit
            def conv_weight(w_ptr, o_ptr, W: tl.constexpr, D: tl.constexpr):
                p_w = tl.make_block_ptr(w_ptr, (W, D), (D, 1), (0, 0), (W, D), (1, 0))
                tl.store(o_ptr + tl.arange(0, D), tl.sum(tl.load(p_w), 0))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def bulk_or_tail(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                # TAIL_MODE 0: launched for the full tiles only; 1: the last, partial tile
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                if TAIL_MODE == 0:
                    b = tl.load(p_x)
                    tl.store(p_x, b * 2)
                else:
                    b = tl.load(p_x, boundary_check=(0, 1))
                    tl.store(p_x, b * 2, boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def aligned(k_ptr, v_ptr, T, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr,
                        BV: tl.constexpr):
                i_v, i_t = tl.program_id(0), tl.program_id(1)
                v_start = i_v * BV
                p_k = tl.make_block_ptr(k_ptr, (T, K), (K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
                p_v = tl.make_block_ptr(v_ptr, (T, V), (V, 1), (i_t * BT, v_start), (BT, BV), (1, 0))
                tl.store(p_v, tl.load(p_v) + tl.sum(tl.load(p_k), 1)[:, None])

            def launch_on_cores(kernel, grid, **kwargs):
                kernel[grid](**kwargs)

            def run(k, v, T, K, V, BT, BV):
                BK = triton.next_power_of_2(K)
                one_slab = T % BT == 0 and K == BK and V % BV == 0
                if one_slab:
                    launch_on_cores(aligned, (V // BV, T // BT), k_ptr=k, v_ptr=v, T=T, K=K, V=V, BT=BT, BK=BK,
                                    BV=BV)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rows(x_ptr, T, BT: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (T,), (1,), (tl.program_id(0) * BT,), (BT,), (0,))
                p = tl.advance(p, (BT,))
                tl.store(p, tl.load(p) * 2)

            def run(x, seq_len):
                assert seq_len % 64 == 0, "whole tiles only"
                assert seq_len % 128 == 0
                rows[(seq_len // 128,)](x, seq_len, BT=128)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rows(x_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (tl.program_id(0) * BT, 0), (BT, D), (1, 0))
                tl.store(p, tl.load(p) * 2)

            def run(x, T, D, BT):
                if T % BT != 0 or D > 256:
                    raise ValueError("the sequence must be a whole number of tiles")
                rows[(T // BT,)](x, T, D=D, BT=BT)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def conv_weight_tile(w_ptr, o_ptr, D, W: tl.constexpr, BD: tl.constexpr):
                i_d = tl.program_id(0)
                p_w = tl.make_block_ptr(w_ptr, (W, D), (D, 1), (0, i_d * BD), (W, BD), (1, 0))
                tl.store(o_ptr + i_d * BD + tl.arange(0, BD), tl.sum(tl.load(p_w), 0))
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
        if op not in _MASK_POSITION:
            return
        given = argument(node, 3, "boundary_check")
        checked = _checked_dims(given) if given is not None else frozenset()
        if checked is None:
            return  # a boundary_check the source does not spell as literal axes
        if argument(node, _MASK_POSITION[op], "mask") is not None:
            return  # a masked access is a pointer tile, never a block pointer
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        resolver = block_pointer_origins(self.context, kernel)
        origins = resolver.of(argument(node, 0, "pointer"))
        if not origins:
            self._check_imported(node, op, kernel, given, checked)
            return
        if self._full_tiles_only(node, kernel, resolver, origins):
            return
        ragged = set()
        for origin in origins:
            ragged |= self._overshooting_dims(origin, kernel)
        if not ragged - checked:
            return
        ranks = {block_rank(origin) for origin in origins}
        self._report_unchecked(node, op, ragged - checked, ranks.pop() if len(ranks) == 1 else None, given)

    def _check_imported(self, node: cst.Call, op: str, kernel, given, checked: frozenset[int]) -> None:
        """A block pointer a jit helper of another linted module returns: its summary says which dimensions fit,
        as this rule would read the helper in this module (the tree is one program, README)."""
        block = imported_block(self.context.analysis(kernel), argument(node, 0, "pointer"))
        if block is None:
            return
        dims = block.get("dims")
        if dims is None:
            ragged = {-1}
        else:
            model_dimensions = self.settings["check-model-dimensions"]
            ragged = {i for i, d in enumerate(dims) if not d.get("fits") and (model_dimensions or not d.get("model"))}
        if not ragged - checked:
            return
        rank = block.get("rank") if isinstance(block.get("rank"), int) else None
        self._report_unchecked(node, op, ragged - checked, rank, given)

    def _report_unchecked(self, node: cst.Call, op: str, unchecked: set[int], rank: int | None, given) -> None:
        """One finding for an access that leaves ``unchecked`` dimensions unbounded: the dimensions a partial
        ``boundary_check`` misses, or the missing keyword with its fix when the block's rank is known."""
        if given is not None:
            missing = sorted(d for d in unchecked if d >= 0)
            spelled = ", ".join(map(str, missing)) if missing else "a ragged dimension"
            self.report(node, self.partial_message.format(op=op.split(".")[1], dims=spelled,
                                                          s="s" if len(missing) > 1 else ""))
            return
        self.report(
            node,
            self.message.format(op=op.split(".")[1]),
            fix_message=None if rank is None else f"Add `boundary_check={_checked_axes(rank)}`",
            edits=None if rank is None else lambda loc: [_append_keyword(loc, node, rank)],
        )

    # -- blocks that provably stay inside the tensor --------------------------------------------------------------
    def _full_tiles_only(self, node: cst.Call, kernel, resolver, origins: list[cst.Call]) -> bool:
        """The access sits in a branch of an ``if`` on constexprs whose other branch moves the same block with
        ``boundary_check``: a ``TAIL_MODE``-style split, where this variant is launched for full tiles only."""
        analysis = self.context.analysis(kernel)
        index = self.context.index
        child = node
        for ancestor in index.ancestors(node):
            if ancestor is kernel.node:
                return False
            if type(ancestor) is cst.If and child is not ancestor.test and ancestor.orelse is not None:
                if analysis.is_compile_time(ancestor.test):
                    nodes = index.subtree(ancestor)
                    split = index.order(ancestor.orelse) - index.order(ancestor)
                    other = nodes[split:] if child is ancestor.body else nodes[1:split]
                    if self._checked_access(other, resolver, origins):
                        return True
            child = ancestor
        return False

    def _checked_access(self, branch: list, resolver, origins: list[cst.Call]) -> bool:
        for candidate in branch:
            if type(candidate) is not cst.Call or self.facts.qualname(candidate.func) not in _MASK_POSITION:
                continue
            if argument(candidate, 3, "boundary_check") is None:
                continue
            found = resolver.of(argument(candidate, 0, "pointer"))
            if any(any(f is o for o in origins) for f in found):
                return True
        return False

    def _overshooting_dims(self, block: cst.Call, kernel) -> set[int]:
        """The dimensions of the block that can run past the tensor ({-1} when the block's parts are not
        literal tuples of one rank: some dimension may)."""
        return self._may_overshoot(block, kernel, every=True)

    def _may_overshoot(self, block: cst.Call, kernel, every: bool = False):
        """Some dimension of the block can run past the tensor. A dimension stays inside when its block extent equals
        the tensor extent at offset 0, or when the host guards every launch with ``extent % block == 0`` (or
        ``extent == block``) and the offset is a multiple of the block (``i_t * BT``), with no ``tl.advance``
        moving it by anything else. A model dimension (``K``, ``D``, ``HEAD_DIM``) counts only with the
        ``check-model-dimensions`` option: model sizes are multiples of the usual power-of-two blocks."""
        shape, offsets, block_shape = (argument(block, 1, "shape"), argument(block, 3, "offsets"),
                                       argument(block, 4, "block_shape"))
        parts = [p for p in (shape, offsets, block_shape) if type(p) in (cst.Tuple, cst.List)]
        if len(parts) != 3 or len({len(p.elements) for p in parts}) != 1:
            return {-1} if every else True
        owner = self.facts.enclosing_kernel(block) or kernel
        analysis = self.context.analysis(owner)
        guards = host_guards(self.facts, owner) | static_guards(self.facts, owner) | literal_launch_guards(
            self.facts, owner)
        code = self.context.module.code_for_node
        moves = self._advances(owner, block)
        if moves is None:
            return {-1} if every else True
        found = set()
        model_dimensions = self.settings["check-model-dimensions"]
        for dim, (extent, offset, size) in enumerate(zip(*(e.elements for e in parts))):
            extent, offset, size = extent.value, offset.value, size.value
            steps = [offset] + [move[dim] for move in moves]
            if all(_is_zero(step) for step in steps) and (
                    code(extent) == code(size) or _names_equal(guards, extent, size)):
                continue
            if _names_divide(guards, extent, size) and all(_is_multiple(analysis, step, size, 0) for step in steps):
                continue
            if not model_dimensions and type(extent) is cst.Name and is_model_dimension_name(extent.value):
                continue
            if not every:
                return True
            found.add(dim)
        return found if every else False

    def _advances(self, kernel, block: cst.Call) -> list[list[cst.BaseExpression]] | None:
        """The offsets of every ``tl.advance`` applied to ``block`` in its kernel (None when one is not a tuple)."""
        resolver = block_pointer_origins(self.context, kernel)
        moves = []
        for node in self.context.index.subtree(kernel.node):
            if type(node) is not cst.Call or self.facts.qualname(node.func) != "tl.advance":
                continue
            if not any(origin is block for origin in resolver.of(argument(node, 0, "base"))):
                continue
            offsets = argument(node, 1, "offsets")
            if type(offsets) not in (cst.Tuple, cst.List):
                return None
            moves.append([element.value for element in offsets.elements])
        return moves


def _checked_dims(expr) -> frozenset[int] | None:
    """The axes a literal ``boundary_check`` names (``(0,)``, ``(0, 1)``, ``[1]``); None when not literal."""
    if type(expr) in (cst.Tuple, cst.List):
        dims = [e.value for e in expr.elements]
        if all(type(d) is cst.Integer for d in dims):
            return frozenset(integer_value(d) for d in dims)
    return None


def _is_zero(expr) -> bool:
    return type(expr) is cst.Integer and expr.evaluated_value == 0


def _names_equal(guards, extent, size) -> bool:
    return type(extent) is cst.Name and type(size) is cst.Name and guards.is_equal(extent.value, size.value)


def _names_divide(guards, extent, size) -> bool:
    return type(extent) is cst.Name and type(size) is cst.Name and guards.is_multiple(extent.value, size.value)


def _is_multiple(analysis, expr, size: cst.Name, depth: int) -> bool:
    """``expr`` is a multiple of the block extent ``size``: 0, a product with ``size`` as a factor (``i_t * BT``), or
    a name whose every reaching definition is one (``v_start = i_v * BV``)."""
    if _is_zero(expr) or (type(expr) is cst.Name and expr.value == size.value):
        return True
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
        return _is_multiple(analysis, expr.left, size, depth) or _is_multiple(analysis, expr.right, size, depth)
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
        return _is_multiple(analysis, expr.left, size, depth) and _is_multiple(analysis, expr.right, size, depth)
    if type(expr) is cst.Name and depth < 4:
        definitions = analysis.definitions(expr)
        return bool(definitions) and all(
            d.kind == "assign" and d.value is not None and _is_multiple(analysis, d.value, size, depth + 1)
            for d in definitions
        )
    return False


def _checked_axes(rank: int) -> str:
    return "(0,)" if rank == 1 else "(" + ", ".join(str(axis) for axis in range(rank)) + ")"


def _append_keyword(loc, call: cst.Call, rank: int) -> Edit:
    _, end = loc.offsets(call.args[-1])  # the argument's span keeps its value's parentheses
    return Edit(end, end, f", boundary_check={_checked_axes(rank)}")
