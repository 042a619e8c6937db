"""Chunked causal linear attention forward, fixed-length or varlen, on a 1-D cube-core grid.

``o_t = scale * sum_{s <= t} (q_t . k_s) v_s`` per head. Each task owns one (sequence, head) and walks
its chunks of ``BT`` tokens in order: the intra-chunk part is a masked ``q k^T`` score tile times ``v``,
the inter-chunk part is ``q`` times the running state ``h = sum k_s^T v_s`` of the earlier chunks.

Layout is ``[B, T, H, K]`` for q and k, ``[B, T, H, V]`` for v and o; varlen packs the sequences into
``B = 1`` and passes ``cu_seqlens`` (``N + 1`` offsets, int32 or int64 on the host).
"""

import itertools

import torch
import triton
import triton.language as tl

from reference_kernels._cores import cube_core_count

CHUNK = 64


@triton.jit(do_not_specialize=["T", "n_tasks"])
def _chunked_linear_attention_kernel(
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
    o_t = tl.arange(0, BT)
    causal = o_t[:, None] >= o_t[None, :]
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        i_n = task // H
        i_h = task % H
        if IS_VARLEN:
            # Offsets stay int64 for the pointer math; only the length is narrowed.
            bos = tl.load(cu_seqlens + i_n).to(tl.int64)
            eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
            seq_len = (eos - bos).to(tl.int32)
        else:
            bos = tl.cast(i_n, tl.int64) * T
            seq_len = T
        # int64 lives in these flattened bases; block-pointer offsets below stay int32.
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

            # b_q feeds two dots and a dot may overwrite its lhs: the first one gets a copy.
            b_q_c = b_q + 0.0
            # Each dot's result is scaled as it leaves the cube: the sum of two raw fp32 dot results makes
            # BiShengIR copy one L0C buffer into another, which it cannot do (`Unsupported copy from cc to cc`).
            b_o = tl.dot(b_q_c, b_h.to(b_q.dtype)) * scale
            b_s = tl.dot(b_q, tl.trans(b_k))
            b_s = tl.where(causal, b_s, 0.0)
            b_o += tl.dot(b_s.to(b_v.dtype), b_v) * scale
            b_h += tl.dot(tl.trans(b_k), b_v)

            p_o = tl.make_block_ptr(o_base, (seq_len, V), (H * V, 1), (i_t * BT, 0), (BT, BV), (1, 0))
            tl.store(p_o, b_o.to(o.dtype.element_ty), boundary_check=(0, 1))


def run(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: float | None = None,
    cu_seqlens: torch.Tensor | None = None,
    chunk_size: int = CHUNK,
    n_cores: int | None = None,
) -> torch.Tensor:
    """Causal linear attention of ``q, k [B, T, H, K]`` and ``v [B, T, H, V]``.

    ``scale`` defaults to ``K ** -0.5``. With ``cu_seqlens`` the batch must be 1 and holds the packed
    sequences. ``n_cores`` overrides the device's cube core count.
    """
    batch, seq_len, heads, dim_k = q.shape
    dim_v = v.shape[-1]
    if cu_seqlens is not None and batch != 1:
        raise ValueError(f"varlen input packs the sequences into batch 1, got batch {batch}")
    if chunk_size < 16 or chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_size must be a power of two >= 16, got {chunk_size}")
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(v)
    n_seqs = batch if cu_seqlens is None else cu_seqlens.numel() - 1
    n_tasks = n_seqs * heads
    if n_tasks == 0 or seq_len == 0:
        return o
    n_cores = n_cores or cube_core_count(q.device)

    _chunked_linear_attention_kernel[(n_cores,)](
        q,
        k,
        v,
        o,
        cu_seqlens,
        dim_k**-0.5 if scale is None else scale,
        seq_len,
        n_tasks,
        H=heads,
        K=dim_k,
        V=dim_v,
        BT=chunk_size,
        BK=max(16, triton.next_power_of_2(dim_k)),
        BV=max(16, triton.next_power_of_2(dim_v)),
        IS_VARLEN=cu_seqlens is not None,
    )
    return o


def reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: float | None = None,
    cu_seqlens: torch.Tensor | None = None,
) -> torch.Tensor:
    """Quadratic-form causal linear attention with torch, per sequence, in float32."""
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    if cu_seqlens is None:
        bounds = [(b, 0, q.shape[1]) for b in range(q.shape[0])]
    else:
        offsets = cu_seqlens.tolist()
        bounds = [(0, start, end) for start, end in itertools.pairwise(offsets)]
    o = torch.zeros_like(v, dtype=torch.float32)
    for b, start, end in bounds:
        q_s, k_s, v_s = (t[b, start:end].float().transpose(0, 1) for t in (q, k, v))  # [H, L, *]
        scores = q_s @ k_s.transpose(1, 2)
        causal = torch.ones(end - start, end - start, dtype=torch.bool).tril()
        o[b, start:end] = (scale * scores.masked_fill(~causal, 0.0) @ v_s).transpose(0, 1)
    return o.to(v.dtype)
