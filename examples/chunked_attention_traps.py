"""A chunked attention-style kernel with the silent Ascend traps: run ``ascendlint check examples/``."""

import triton
import triton.language as tl


@triton.jit
def chunk_scores_kernel(
    q_ptr, k_ptr, o_ptr, cu_seqlens, T, H, K: tl.constexpr, BT: tl.constexpr, USE_H0: tl.constexpr, h0_ptr=None
):
    i_t, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // H, i_nh % H
    # Sequence starts narrowed to int32: `bos * H` wraps long before bos reaches 2**31 (ASC203, opt-in).
    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    T = eos - bos
    p_q = tl.make_block_ptr(q_ptr + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    p_k = tl.make_block_ptr(k_ptr + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, K), (1, 0))
    # No boundary_check: the last chunk's DMA runs past the end of the sequence (ASC303).
    b_q = tl.load(p_q)
    b_k = tl.load(p_k, boundary_check=(0, 1))
    # tl.dot may overwrite its left operand in the Unified Buffer; b_q is read again below (ASC301).
    b_s = tl.dot(b_q, tl.trans(b_k))
    b_o = tl.dot(b_q, tl.trans(b_q)) + b_s
    # h0_ptr may be None: the runtime term keeps this branch compiled even when USE_H0 is False (ASC104, opt-in,
    # with `report-unlaunched`: no launch here shows what callers pass).
    if USE_H0 or i_t * BT < T:
        b_o += tl.load(h0_ptr + i_h * BT * BT + tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :])
    p_o = tl.make_block_ptr(o_ptr + (bos * H + i_h) * BT, (T, BT), (H * BT, 1), (i_t * BT, 0), (BT, BT), (1, 0))
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))
