"""Fused AllGather + GEMM for Triton-distributed on Ascend.

Rank ``r`` holds ``a_r [M, K]`` and the full ``b [K, N]``; every rank computes
``C = concat(a_0, ..., a_{P-1}) @ b`` of shape ``[P*M, N]``. The gathered rows of ``a`` pass through
a small double-buffered window of symmetric memory and are consumed there; the full gathered
matrix never exists in device memory.

Layout and protocol (``P`` ranks, ``B = BUFFER_NUM`` window generations, round ``i`` covers rows
``[i*BLOCK_M, (i+1)*BLOCK_M)`` of every shard):

* ``window [B, P, BLOCK_M, K]`` symmetric: ``window[b, src]`` holds a row block of ``a_src``.
* ``signals [B, P]`` int64 slots, each on its own 64-byte line (``SLOT_STRIDE`` elements apart),
  symmetric: slot ``(b, src)`` on rank ``q`` is 0 when free and ``i + 1`` once round ``i`` of
  ``a_src`` has landed in ``q``'s ``window[b, src]``.
* Communication programs (the first ``n_producers``) each own a set of destination ranks,
  ``for pe in range(pid, P, n_producers)``: a pe is always driven by one core, and each slot has a
  single writer that fills it in round order. Per round they wait for the destination's slot to be
  free, then copy: a peer gets one whole-block ``putmem`` (synchronous, so the notify may follow at
  once); the own rank gets an MTE tile copy (a ``putmem`` cannot target local memory) followed by
  ``fence`` before the notify.
* GEMM programs (the rest) take (round, source rank) tasks: wait for the slot, multiply the row
  block by ``b`` for every column tile, store into ``C``, ``fence``, and hand the slot back with
  ``notify(slot, rank, 0)`` (one task per slot and round, so exactly one resetter).
"""

from dataclasses import dataclass

import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

from reference_kernels._cores import cube_core_count
from reference_kernels._dist_common import (
    SIGNAL_SLOT_STRIDE,
    RoleSplit,
    SymmetricAllocator,
    signal_slots,
    tile_matmul,
)


@dataclass(frozen=True)
class AllGatherGemmConfig:
    block_m: int = 128
    block_n: int = 256
    block_k: int = 256
    copy_k: int = 256
    buffer_num: int = 2


@dataclass(frozen=True)
class AllGatherGemmWorkspace:
    """Symmetric buffers of one fused AllGather + GEMM, each indexed by rank, and the role split to launch with."""

    window: object
    signals: object
    world_size: int
    roles: RoleSplit
    config: AllGatherGemmConfig


def allgather_gemm_workspace(alloc: SymmetricAllocator, world_size: int, k: int, dtype: torch.dtype,
                             roles: RoleSplit, config: AllGatherGemmConfig = AllGatherGemmConfig(),
                             ) -> AllGatherGemmWorkspace:
    """Allocate the zeroed gather window and signal slots; the window grows with K, not with M."""
    window = alloc.symmetric_zeros((config.buffer_num, world_size, config.block_m, k), dtype)
    signals = signal_slots(alloc, config.buffer_num * world_size)
    return AllGatherGemmWorkspace(window, signals, world_size, roles, config)


@triton.jit
def _copy_rows_to_window(dst_ptr, src_ptr, n_rows, K, BLOCK_M: tl.constexpr, COPY_K: tl.constexpr):
    """MTE copy of ``n_rows`` contiguous rows of width ``K`` (at most ``BLOCK_M`` rows)."""
    offs_m = tl.arange(0, BLOCK_M)
    for k_start in range(0, K, COPY_K):
        offs_k = tl.cast(k_start, tl.int64) + tl.arange(0, COPY_K)
        offs = offs_m[:, None] * K + offs_k[None, :]
        mask = (offs_m[:, None] < n_rows) & (offs_k[None, :] < K)
        tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def allgather_gemm_kernel(
    a_ptr, b_ptr, c_ptr, window_ptr, signal_ptr,
    M, N, K, n_producers,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, COPY_K: tl.constexpr,
    BUFFER_NUM: tl.constexpr, SLOT_STRIDE: tl.constexpr,
):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    n_rounds = tl.cdiv(M, BLOCK_M)
    block_elems = BLOCK_M * K
    # `bitwidth // 8` does not compile in triton-ascend 3.2.0's frontend (the int's floor division
    # by a constexpr gives NotImplemented); tl.cdiv folds to the same constant.
    elem_bytes = tl.cdiv(a_ptr.dtype.element_ty.primitive_bitwidth, 8)
    if pid < n_producers:
        for pe in range(pid, n_ranks, n_producers):
            for rnd in range(n_rounds):
                buf = rnd % BUFFER_NUM
                row0 = tl.cast(rnd, tl.int64) * BLOCK_M
                n_rows = tl.minimum(M - row0, BLOCK_M)
                slot = signal_ptr + (tl.cast(buf, tl.int64) * n_ranks + rank) * SLOT_STRIDE
                token = dl.wait(dl.symm_at(slot, pe), 1, "gpu", "acquire", waitValue=0)
                dst = dl.consume_token(window_ptr + (tl.cast(buf, tl.int64) * n_ranks + rank) * block_elems, token)
                if pe == rank:
                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, COPY_K)
                    libshmem_device.fence()
                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
                else:
                    libshmem_device.putmem(dst, a_ptr + row0 * K, n_rows * K * elem_bytes, pe)
                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
    else:
        tiles_n = tl.cdiv(N, BLOCK_N)
        for task in range(pid - n_producers, n_rounds * n_ranks, n_programs - n_producers):
            rnd = task // n_ranks
            src = task % n_ranks
            buf = rnd % BUFFER_NUM
            row0 = tl.cast(rnd, tl.int64) * BLOCK_M
            slot = signal_ptr + (tl.cast(buf, tl.int64) * n_ranks + src) * SLOT_STRIDE
            token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
            a_block = dl.consume_token(window_ptr + (tl.cast(buf, tl.int64) * n_ranks + src) * block_elems, token)
            rows = tl.cast(src, tl.int64) * M + row0 + tl.arange(0, BLOCK_M)
            row_mask = rows[:, None] < tl.cast(src, tl.int64) * M + M
            for tile_n in range(tiles_n):
                col0 = tl.cast(tile_n, tl.int64) * BLOCK_N
                acc = tile_matmul(a_block, K, b_ptr, N, M - row0, col0, N, K, BLOCK_M, BLOCK_N, BLOCK_K)
                cols = col0 + tl.arange(0, BLOCK_N)
                tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(c_ptr.dtype.element_ty),
                         mask=row_mask & (cols[None, :] < N))
            libshmem_device.fence()
            dl.notify(slot, rank, signal=0, sig_op="set")


def allgather_gemm_launch_args(rank: int, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                               workspace: AllGatherGemmWorkspace) -> tuple[tuple, dict]:
    """Positional and keyword arguments of rank ``rank``'s launch (grid: ``(workspace.roles.n_cores,)``)."""
    m, k = a.shape
    n = b.shape[1]
    window_k = workspace.window[rank].shape[-1]
    if b.shape[0] != k or window_k != k or tuple(c.shape) != (workspace.world_size * m, n):
        raise ValueError(f"shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)}, c {tuple(c.shape)}, "
                         f"window width {window_k}")
    cfg = workspace.config
    args = (a.contiguous(), b.contiguous(), c, workspace.window[rank], workspace.signals[rank],
            m, n, k, workspace.roles.n_producers)
    constants = {"BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_K": cfg.block_k, "COPY_K": cfg.copy_k,
                 "BUFFER_NUM": cfg.buffer_num, "SLOT_STRIDE": SIGNAL_SLOT_STRIDE}
    return args, constants


def allgather_gemm_reference(a_shards: list[torch.Tensor], b: torch.Tensor) -> torch.Tensor:
    """``concat(a_0, ..., a_{P-1}) @ b`` in float32."""
    return torch.cat([a.float() for a in a_shards], dim=0) @ b.float()


def allgather_gemm_on_npu(a: torch.Tensor, b: torch.Tensor, workspace: AllGatherGemmWorkspace,
                          rank: int) -> torch.Tensor:
    """Launch this process's rank on its NPU; every rank gets the full ``[P*M, N]`` product."""
    c = torch.empty((workspace.world_size * a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    n_cores = cube_core_count(a.device)
    workspace.roles.check_grid(n_cores)
    args, kwargs = allgather_gemm_launch_args(rank, a, b, c, workspace)
    allgather_gemm_kernel[(n_cores,)](*args, **kwargs)
    return c
