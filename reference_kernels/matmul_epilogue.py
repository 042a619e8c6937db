"""Tiled matmul with a fused bias + activation epilogue on a 1-D cube-core grid.

``c = act(a @ b + bias)`` for ``a [M, K]``, ``b [K, N]``. The ``M x N`` output tiles are flattened into
one task id and each program walks its share of tasks, so the launch stays at the cube core count
however large the matrices get. The epilogue runs on the float32 accumulator before the single store.
Inner tiles span 512 bytes of the input dtype, the MTE transfer granule.
"""

import torch
import triton
import triton.language as tl

from reference_kernels._cores import cube_core_count

TILE_M = 64
TILE_BYTES = 512
ACTIVATIONS = (None, "relu", "silu")


@triton.jit(do_not_specialize=["M", "N", "K", "stride_am", "stride_bk", "stride_cm", "n_tasks"])
def _matmul_epilogue_kernel(
    a,
    b,
    bias,
    c,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    n_tasks,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    ACTIVATION: tl.constexpr,
):
    n_tiles_n = tl.cdiv(N, BN)
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        i_m = task // n_tiles_n
        i_n = task % n_tiles_n
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        for i_k in range(tl.cdiv(K, BK)):
            p_a = tl.make_block_ptr(a, (M, K), (stride_am, 1), (i_m * BM, i_k * BK), (BM, BK), (1, 0))
            p_b = tl.make_block_ptr(b, (K, N), (stride_bk, 1), (i_k * BK, i_n * BN), (BK, BN), (1, 0))
            b_a = tl.load(p_a, boundary_check=(0, 1), padding_option="zero")
            b_b = tl.load(p_b, boundary_check=(0, 1), padding_option="zero")
            # b_a is loaded fresh every step and never read after the dot, so it needs no copy.
            acc += tl.dot(b_a, b_b)

        if HAS_BIAS:
            cols = i_n * BN + tl.arange(0, BN)
            acc += tl.load(bias + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
        if ACTIVATION == "relu":
            acc = tl.maximum(acc, 0.0)
        elif ACTIVATION == "silu":
            acc = acc * tl.sigmoid(acc)

        p_c = tl.make_block_ptr(c, (M, N), (stride_cm, 1), (i_m * BM, i_n * BN), (BM, BN), (1, 0))
        tl.store(p_c, acc.to(c.dtype.element_ty), boundary_check=(0, 1))


def run(
    a: torch.Tensor,
    b: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    activation: str | None = None,
    n_cores: int | None = None,
) -> torch.Tensor:
    """``act(a @ b + bias)``; ``activation`` is ``None``, ``"relu"`` or ``"silu"``.

    ``n_cores`` overrides the device's cube core count.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"unsupported activation {activation!r}")
    (m, k), (k_b, n) = a.shape, b.shape
    if k != k_b:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    a, b = a.contiguous(), b.contiguous()
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    n_cores = n_cores or cube_core_count(a.device)
    granule = TILE_BYTES // a.element_size()
    block_n = min(granule, max(16, triton.next_power_of_2(n)))
    block_k = min(granule, max(16, triton.next_power_of_2(k)))
    n_tasks = triton.cdiv(m, TILE_M) * triton.cdiv(n, block_n)

    _matmul_epilogue_kernel[(n_cores,)](
        a,
        b,
        bias,
        c,
        m,
        n,
        k,
        a.stride(0),
        b.stride(0),
        c.stride(0),
        n_tasks,
        BM=TILE_M,
        BN=block_n,
        BK=block_k,
        HAS_BIAS=bias is not None,
        ACTIVATION=activation,
    )
    return c


def reference(
    a: torch.Tensor,
    b: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    activation: str | None = None,
) -> torch.Tensor:
    """The same computation with torch, accumulated in float32."""
    out = a.float() @ b.float()
    if bias is not None:
        out = out + bias.float()
    if activation == "relu":
        out = torch.relu(out)
    elif activation == "silu":
        out = torch.nn.functional.silu(out)
    return out.to(a.dtype)
