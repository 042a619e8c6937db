"""Fused AllGather + GEMM in the two-phase design of the Triton-distributed Ascend tutorials.

Rank ``r`` holds ``a_r [M, K]`` and the full ``b [K, N]``; every rank computes
``C = concat(a_0, ..., a_{P-1}) @ b`` of shape ``[P*M, N]``, like ``allgather_gemm.py``, but
synchronised by barriers instead of signals. It is a mix kernel: each program runs on one AI core,
whose two vector sub-blocks (``sub_vec_id()`` 0 and 1) move data while the cube unit multiplies.

Iteration ``i`` gathers ``CHUNK = BLOCK_M * PVALUE`` rows of every shard (fewer in the last one) into
buffer ``i % BUFFER_NUM`` of the symmetric window ``[BUFFER_NUM, P, CHUNK, K]`` and multiplies them:

1. Communication. Sub-block 1 of programs ``pid < P`` sends this rank's whole chunk to every other
   rank with one UDMA ``putmem`` per peer (``for pe in range(pid, P, n_programs)``: each pe is driven
   by a single core, and one call moves the whole block). UDMA cannot copy into the calling rank's own
   memory, so the rank's own chunk is copied there on the MTE path (``tl.load``/``tl.store`` of
   ``COPY_M x COPY_K`` tiles), shared out over sub-block 0 of every program and sub-block 1 of the
   programs that send nothing.
2. ``barrier_all()``: every sub-block of every program of every rank has finished step 1, so buffer
   ``i % BUFFER_NUM`` is complete on every rank (the barrier also orders the MTE stores before it).
3. GEMM: the ``P * ceil(rows / BLOCK_M) * ceil(N / BLOCK_N)`` output tiles of the iteration, in the
   ``gemm_swizzle2d_Nz`` order, shared out over the programs; each reads its rows of ``a`` from the
   local window.

Double buffering makes one barrier per iteration enough: iteration ``i + 1`` writes the other buffer
while slower programs still multiply from buffer ``i % BUFFER_NUM``, and iteration ``i + 2`` writes it
again only after every program has passed the barrier of iteration ``i + 1``, that is after it has
finished iteration ``i``'s multiplications. ``PVALUE`` trades barriers (one per iteration) for window
size. Offsets are int64; ``a`` must have contiguous rows (one ``putmem`` moves a byte range).
"""

from dataclasses import dataclass

import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton.language.extra.cann.extension import sub_vec_id
from triton_dist.language.extra import libshmem_device
from triton_dist.language.extra.ascend.algorithm import gemm_swizzle2d_Nz

from reference_kernels._cores import cube_core_count
from reference_kernels._dist_common import SymmetricAllocator


@dataclass(frozen=True)
class TwoPhaseConfig:
    block_m: int = 128
    block_n: int = 256
    block_k: int = 256
    copy_m: int = 16
    copy_k: int = 256
    pvalue: int = 4
    buffer_num: int = 2
    swizzle: int = 7

    @property
    def chunk_rows(self) -> int:
        return self.block_m * self.pvalue


@dataclass(frozen=True)
class TwoPhaseWorkspace:
    """The symmetric gather window, indexed by rank."""

    window: object
    world_size: int
    k: int
    config: TwoPhaseConfig


def allgather_gemm_two_phase_workspace(alloc: SymmetricAllocator, world_size: int, k: int, dtype: torch.dtype,
                                       config: TwoPhaseConfig = TwoPhaseConfig()) -> TwoPhaseWorkspace:
    """Allocate the zeroed window ``[BUFFER_NUM, P, CHUNK, K]``: it grows with K and PVALUE, not with M."""
    window = alloc.symmetric_zeros((config.buffer_num * world_size * config.chunk_rows * k,), dtype)
    return TwoPhaseWorkspace(window, world_size, k, config)


@triton.jit
def allgather_gemm_two_phase_kernel(
    a_ptr, b_ptr, c_ptr, window_ptr,
    M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    PVALUE: tl.constexpr, BUFFER_NUM: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    COPY_M: tl.constexpr, COPY_K: tl.constexpr, SWIZZLE: tl.constexpr,
):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    sub_block = sub_vec_id()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    chunk_rows = BLOCK_M * PVALUE
    n_iterations = tl.cdiv(M, chunk_rows)
    tiles_n = tl.cdiv(N, BLOCK_N)
    copy_tiles_k = tl.cdiv(K, COPY_K)
    # `bitwidth // 8` does not compile in triton-ascend 3.2.0's frontend (the int's floor division
    # by a constexpr gives NotImplemented); tl.cdiv folds to the same constant.
    elem_bytes = tl.cdiv(a_ptr.dtype.element_ty.primitive_bitwidth, 8)
    # MTE copiers: sub-block 0 of every program, then sub-block 1 of the programs that send no putmem
    n_copiers = n_programs + tl.maximum(n_programs - n_ranks, 0)
    copier = pid
    if sub_block == 1:
        copier = n_programs + pid - n_ranks
    # the guide's design keeps one barrier per M-iteration; the ASC502 advisory (flatten the iterations into the
    # task ids, with per-buffer signals instead of the barrier) is the optimisation it leaves out
    for iteration in range(n_iterations):
        buffer_id = iteration % BUFFER_NUM
        row0 = tl.cast(iteration, tl.int64) * chunk_rows
        rows = tl.minimum(M - row0, chunk_rows)
        buffer_row0 = tl.cast(buffer_id, tl.int64) * n_ranks * chunk_rows
        own_row0 = buffer_row0 + tl.cast(rank, tl.int64) * chunk_rows
        # phase 1: communication
        if sub_block == 1 and pid < n_ranks:
            for pe in range(pid, n_ranks, n_programs):  # noqa: ASC502
                if pe != rank:
                    libshmem_device.putmem(window_ptr + own_row0 * K, a_ptr + row0 * stride_am,
                                           rows * K * elem_bytes, pe)
        else:
            for task in range(copier, tl.cdiv(rows, COPY_M) * copy_tiles_k, n_copiers):  # noqa: ASC502
                copy_rows = tl.cast(task // copy_tiles_k, tl.int64) * COPY_M + tl.arange(0, COPY_M)
                copy_cols = tl.cast(task % copy_tiles_k, tl.int64) * COPY_K + tl.arange(0, COPY_K)
                mask = (copy_rows[:, None] < rows) & (copy_cols[None, :] < K)
                tile = tl.load(a_ptr + (row0 + copy_rows)[:, None] * stride_am + copy_cols[None, :] * stride_ak,
                               mask=mask)
                tl.store(window_ptr + (own_row0 + copy_rows)[:, None] * K + copy_cols[None, :], tile, mask=mask)
        libshmem_device.barrier_all()
        # phase 2: GEMM on the gathered buffer
        tiles_m = tl.cdiv(rows, BLOCK_M)
        for tile_id in range(pid, n_ranks * tiles_m * tiles_n, n_programs):  # noqa: ASC502
            tile_m, tile_n = gemm_swizzle2d_Nz(tile_id, n_ranks * tiles_m * BLOCK_M, N, BLOCK_M, BLOCK_N, SWIZZLE)
            src = tile_m // tiles_m
            local_rows = tl.cast(tile_m % tiles_m, tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
            row_mask = local_rows[:, None] < rows
            window_rows = buffer_row0 + tl.cast(src, tl.int64) * chunk_rows + local_rows
            cols = tl.cast(tile_n, tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
            col_mask = cols[None, :] < N
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k_start in range(0, K, BLOCK_K):
                ks = tl.cast(k_start, tl.int64) + tl.arange(0, BLOCK_K)
                a_tile = tl.load(window_ptr + window_rows[:, None] * K + ks[None, :],
                                 mask=row_mask & (ks[None, :] < K), other=0.0)
                b_tile = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                                 mask=(ks[:, None] < K) & col_mask, other=0.0)
                acc += tl.dot(a_tile, b_tile)
            c_rows = tl.cast(src, tl.int64) * M + row0 + local_rows
            tl.store(c_ptr + c_rows[:, None] * stride_cm + cols[None, :] * stride_cn,
                     acc.to(c_ptr.dtype.element_ty), mask=row_mask & col_mask)


def allgather_gemm_two_phase_launch_args(rank: int, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                                         workspace: TwoPhaseWorkspace) -> tuple[tuple, dict]:
    """Positional and keyword arguments of rank ``rank``'s launch (any 1-D core grid)."""
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or k != workspace.k or tuple(c.shape) != (workspace.world_size * m, n):
        raise ValueError(f"shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)}, c {tuple(c.shape)}, "
                         f"window built for K={workspace.k}")
    cfg = workspace.config
    a = a.contiguous()  # one putmem per peer moves the chunk as one byte range
    args = (a, b, c, workspace.window[rank], m, n, k,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    constants = {"PVALUE": cfg.pvalue, "BUFFER_NUM": cfg.buffer_num, "BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n,
                 "BLOCK_K": cfg.block_k, "COPY_M": cfg.copy_m, "COPY_K": cfg.copy_k, "SWIZZLE": cfg.swizzle}
    return args, constants


def allgather_gemm_two_phase_reference(a_shards: list[torch.Tensor], b: torch.Tensor) -> torch.Tensor:
    """``concat(a_0, ..., a_{P-1}) @ b`` in float32."""
    return torch.cat([a.float() for a in a_shards], dim=0) @ b.float()


def allgather_gemm_two_phase_on_npu(a: torch.Tensor, b: torch.Tensor, workspace: TwoPhaseWorkspace,
                                    rank: int) -> torch.Tensor:
    """Launch this process's rank on its NPU over the cube cores; every rank gets the full product."""
    c = torch.empty((workspace.world_size * a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    args, kwargs = allgather_gemm_two_phase_launch_args(rank, a, b, c, workspace)
    allgather_gemm_two_phase_kernel[(cube_core_count(a.device),)](*args, **kwargs)
    return c
