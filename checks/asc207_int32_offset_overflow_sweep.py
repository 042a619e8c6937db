from ascendlint.rule import Invalid, Valid

from .asc202_int32_offset_overflow import HOST_FACTS_AND_MAGNITUDES, Int32OffsetOverflow


class Int32OffsetOverflowSweep(Int32OffsetOverflow):
    """The review sweep of ASC202: int32 offsets that can wrap by the magnitude model, where the launching host code
    does not show the extent to be large."""

    decides = """
    ASC202 reports a wrapping product only when the host code that launches the kernel shows the offset large (it
    starts at a token offset or loaded id, steps by a row stride read from a large tensor, or points into a state
    allocated per sequence and head), or when no launch is visible. This rule reports the rest: products that wrap
    by the magnitude model alone, such as rows of a grid or loop times a per-token size the host passes as a plain
    name, or a chunk index times `K * V`. Many of them are bounded in practice (decode-time, per-request or
    per-sequence tensors), so the sweep is opt-in, for a review of a kernel's integer widths. Both leave small
    tensors and literal factors alone, and they never report the same offset.
    """ + HOST_FACTS_AND_MAGNITUDES

    code = "ASC207"
    name = "int32-offset-overflow-sweep"
    sweep = True
    default = False
    opt_in_reason = (
        "a review sweep: the launching host code gives no sign that the tensor indexed holds 2^31 elements, and on"
        " real code about half of such products are bounded; ASC202 reports the products the host shows to be large"
    )
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (bos * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)

            def launch(q, o, cu_seqlens, H, K):
                kernel[(len(cu_seqlens) - 1, H)](q, o, cu_seqlens, H, K, BK=64)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (tl.cast(bos, tl.int64) * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)

            def launch(q, o, cu_seqlens, H, K):
                kernel[(len(cu_seqlens) - 1, H)](q, o, cu_seqlens, H, K, BK=64)
            """,
            doc=True,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (bos * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)

            def launch(q, o, cu_seqlens):
                T, H, K = q.shape
                kernel[(len(cu_seqlens) - 1, H)](q, o, cu_seqlens, H, K, BK=64)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                o_k = tl.arange(0, BK)
                tl.store(o + o_k, tl.load(q + (bos * H + i_h) * K + o_k))

            def launch(q, o, cu_seqlens, H, K):
                kernel[(len(cu_seqlens) - 1, H)](q, o, cu_seqlens, H, K, BK=64)
            """,
            doc=True,
        ),
    ]
