"""Kernels that are wrong on purpose, to show that the emulator's hazard mode catches them.

Import only after ``emulate.install_stand_ins()`` so the kernels are built for the interpreter.
"""

import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T", "n_tasks"])
def chunked_linear_attention_reusing_lhs_kernel(
    q,
    k,
    v,
    o,
    cu_seqlens,
    scale,
    T,
    n_tasks,
    H: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
    IS_VARLEN: tl.constexpr,
):
    """``reference_kernels.chunked_linear_attention`` without the lhs copy: ``b_q`` feeds two dots."""
    o_t = tl.arange(0, BT)
    causal = o_t[:, None] >= o_t[None, :]
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        i_n = task // H
        i_h = task % H
        if IS_VARLEN:
            bos = tl.load(cu_seqlens + i_n).to(tl.int64)
            eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
            seq_len = (eos - bos).to(tl.int32)
        else:
            bos = tl.cast(i_n, tl.int64) * T
            seq_len = T
        q_base = q + (bos * H + i_h) * K
        k_base = k + (bos * H + i_h) * K
        v_base = v + (bos * H + i_h) * V
        o_base = o + (bos * H + i_h) * V

        b_h = tl.zeros([BK, BV], dtype=tl.float32)
        for i_t in range(tl.cdiv(seq_len, BT)):
            p_q = tl.make_block_ptr(q_base, (seq_len, K), (H * K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
            p_k = tl.make_block_ptr(k_base, (seq_len, K), (H * K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
            p_v = tl.make_block_ptr(v_base, (seq_len, V), (H * V, 1), (i_t * BT, 0), (BT, BV), (1, 0))
            b_q = tl.load(p_q, boundary_check=(0, 1), padding_option="zero")
            b_k = tl.load(p_k, boundary_check=(0, 1), padding_option="zero")
            b_v = tl.load(p_v, boundary_check=(0, 1), padding_option="zero")

            b_o = tl.dot(b_q, b_h.to(b_q.dtype))  # noqa: ASC301 - the hazard under test
            b_s = tl.dot(b_q, tl.trans(b_k))
            b_s = tl.where(causal, b_s, 0.0)
            b_o += tl.dot(b_s.to(b_v.dtype), b_v)
            b_h += tl.dot(tl.trans(b_k), b_v)

            p_o = tl.make_block_ptr(o_base, (seq_len, V), (H * V, 1), (i_t * BT, 0), (BT, BV), (1, 0))
            tl.store(p_o, (b_o * scale).to(o.dtype.element_ty), boundary_check=(0, 1))
