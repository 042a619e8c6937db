from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Valid

from .asc301_dot_lhs_reuse import DotLhsReuse


class DotLhsLoopCarried(DotLhsReuse):
    """Flags a `tl.dot` whose left operand is read again only as the left operand of dots on later loop
    iterations: the flash-attention query tile, loaded once and passed to `tl.dot(q, k)` for every KV block."""

    decides = """
    The later reads are this same dot on the next iteration of a loop around it, or dots in later loops that do
    not hold it (the second, on-band pass of a two-stage attention kernel, which passes the same query tile
    again). Every other later read of a dot's left operand (another dot later in the same iteration or in
    straight-line code, the tile as a right operand, a store, arithmetic) is ASC301's, which is on by default.
    """

    code = "ASC306"
    name = "dot-lhs-loop-carried"
    message = (
        "`tl.dot` may overwrite its left operand `{name}` in UB, and a later loop iteration passes `{name}` to "
        "`tl.dot` as the left operand again (line {line})"
    )
    severity = Severity.WARNING
    fix_safety = FixSafety.UNSAFE
    default = False
    opt_in_reason = (
        "not reproduced on hardware: triton-ascend's own fused-attention tutorial reuses its query tile this way "
        "and passes its accuracy test on the NPU, so reporting every flash-attention kernel would not hold the "
        "default set's precision"
    )
    loop_carried = True
    why = """
        The cube unit's matmul may reuse its left operand's buffer in UB (ASC301). If it does here, the first
        iteration leaves garbage in the query tile and every later iteration multiplies with it: the output drifts
        silently. Whether the compiler lets the first dot overwrite a tile that the loop reads again unchanged has
        not been reproduced on an NPU: FLA's catalog of the clobber counts this shape, while triton-ascend's
        fused-attention tutorial is written this way and passes its NPU accuracy test. This rule is the review
        sweep for that shape (`extend-select = ["ASC306"]`); ASC301 reports the reuses that are certain.
    """
    fix_notes = """
        A copy of the tile inside the loop does not help: it does not depend on the loop, the compiler hoists it
        out, and one copy then serves every iteration's dot. When the tile was loaded and its address is unchanged
        at the dot, the unsafe fix reloads it in the loop (`b_q_c = tl.load(q + offs, volatile=True)`) and passes
        the reload to the dot: one more transfer from global memory per iteration, and a different tile if
        something wrote there in between. Otherwise no fix is offered.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(q, k, o, NK, BT: language.constexpr):
                offs = language.arange(0, BT)[:, None] * BT + language.arange(0, BT)[None, :]
                b_q = language.load(q + offs)
                acc = language.zeros([BT, BT], dtype=language.float32)
                for i_k in range(0, NK):
                    b_k = language.load(k + i_k * BT * BT + offs)
                    acc = language.dot(
                        b_q,
                        b_k,
                        acc,
                    )
                language.store(o + offs, acc)
            """,
            fixed="""
            import triton
            import triton.language as language

            @triton.jit
            def kernel(q, k, o, NK, BT: language.constexpr):
                offs = language.arange(0, BT)[:, None] * BT + language.arange(0, BT)[None, :]
                b_q = language.load(q + offs)
                acc = language.zeros([BT, BT], dtype=language.float32)
                for i_k in range(0, NK):
                    b_k = language.load(k + i_k * BT * BT + offs)
                    # reloaded: tl.dot may overwrite its left operand on Ascend (ASC306)
                    b_q_c = language.load(q + offs, volatile=True)
                    acc = language.dot(
                        b_q_c,
                        b_k,
                        acc,
                    )
                language.store(o + offs, acc)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs, mask=offs < BT * BT, other=0)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    tl.store(o + i_k * BT * BT + offs, tl.dot(b_q, b_k))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs, mask=offs < BT * BT, other=0)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    # reloaded: tl.dot may overwrite its left operand on Ascend (ASC306)
                    b_q_c = tl.load(q + offs, mask=offs < BT * BT, other=0, volatile=True)
                    tl.store(o + i_k * BT * BT + offs, tl.dot(b_q_c, b_k))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attend(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_q = tl.load(q + offs)
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    acc += tl.dot(b_q, b_k)
                tl.store(o + offs, acc)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attend_and_keep(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    acc += tl.dot(b_q, b_k)
                tl.store(o + offs, acc + b_q)
            """
        ),
    ]
