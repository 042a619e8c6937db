"""Fused GEMM + one-shot AllReduce for Triton-distributed on Ascend.

Rank ``r`` holds ``a_r [M, K_r]`` and ``b_r [K_r, N]``; every rank ends with ``sum_r a_r @ b_r``.
One-shot: there is a single exchange. Each partial output tile is written straight into every
rank's inbox and each rank reduces the ``P`` partials of a tile locally, instead of a
reduce-scatter followed by an all-gather.

Layout and protocol (``P`` ranks, ``C`` producer programs, ``B = BUFFER_NUM`` generations):

* Producers (the first ``C`` programs) walk output tiles ``t = pid, pid + C, ...``. Each producer
  program owns ``B`` inbox generations, so a slot is only ever written by one program, in order;
  tile ``t`` uses generation ``(t // C) % B`` of program ``t % C``.
* ``inbox [C, B, P, BLOCK_M, BLOCK_N]`` symmetric, in the kernel's dtype (fp16/bf16 partials cross
  ranks at half the bytes of fp32; consumers add them in fp32): ``inbox[c, b, src]`` holds rank ``src``'s
  partial. ``signals [C, B, P]`` int64 slots on their own 64-byte lines, symmetric: a slot is 0 when
  free and ``t + 1`` once tile
  ``t``'s partial from ``src`` has landed; the value names the tile, so a consumer never mistakes
  the previous occupant for its own tile.
* A producer computes the partial, then per peer waits for the slot to be free and stores into the
  peer's inbox; ``fence``; then notifies every peer (the notify loop covers the store loop's range).
* Consumers (the remaining programs) take the ``P`` partials of a tile one by one, each as soon as its
  slot shows it has landed, add them up, store the result, ``fence``, and hand each slot back with
  ``notify(slot, rank, 0)``: one resetter per slot and use.
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
class GemmAllReduceConfig:
    block_m: int = 128
    block_n: int = 256
    block_k: int = 256
    buffer_num: int = 2


@dataclass(frozen=True)
class GemmAllReduceWorkspace:
    """Symmetric buffers of one fused GEMM + AllReduce, each indexed by rank, and the role split they fit."""

    inbox: object
    signals: object
    world_size: int
    roles: RoleSplit
    config: GemmAllReduceConfig


def gemm_allreduce_workspace(alloc: SymmetricAllocator, world_size: int, roles: RoleSplit,
                             config: GemmAllReduceConfig = GemmAllReduceConfig(),
                             dtype: torch.dtype = torch.float32) -> GemmAllReduceWorkspace:
    """Allocate the zeroed inbox and signal slots; they grow with the producer count, not with M or N.

    ``dtype`` is the kernel's (``a``'s): the partials cross ranks in it and are added up in float32.
    """
    groups = roles.n_producers * config.buffer_num
    inbox = alloc.symmetric_zeros((groups, world_size, config.block_m, config.block_n), dtype)
    signals = signal_slots(alloc, groups * world_size)
    return GemmAllReduceWorkspace(inbox, signals, world_size, roles, config)


@triton.jit
def gemm_allreduce_kernel(
    a_ptr, b_ptr, out_ptr, inbox_ptr, signal_ptr,
    M, N, K, n_producers,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BUFFER_NUM: tl.constexpr,
    SLOT_STRIDE: tl.constexpr,
):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    n_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    tile_elems = BLOCK_M * BLOCK_N
    tile_offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    if pid < n_producers:
        for tile in range(pid, n_tiles, n_producers):
            group = tl.cast(pid, tl.int64) * BUFFER_NUM + (tile // n_producers) % BUFFER_NUM
            row0 = tl.cast(tile // tiles_n, tl.int64) * BLOCK_M
            col0 = tl.cast(tile % tiles_n, tl.int64) * BLOCK_N
            partial = tile_matmul(a_ptr + row0 * K, K, b_ptr, N, M - row0, col0, N, K,
                                  BLOCK_M, BLOCK_N, BLOCK_K)
            slot = signal_ptr + (group * n_ranks + rank) * SLOT_STRIDE
            my_inbox = inbox_ptr + (group * n_ranks + rank) * tile_elems
            for peer in range(n_ranks):
                token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                dst = dl.consume_token(dl.symm_at(my_inbox, peer), token)
                tl.store(dst + tile_offs, partial.to(inbox_ptr.dtype.element_ty))
            libshmem_device.fence()
            for peer in range(n_ranks):
                dl.notify(slot, peer, signal=tile + 1, sig_op="set")
    else:
        for tile in range(pid - n_producers, n_tiles, n_programs - n_producers):
            group = tl.cast(tile % n_producers, tl.int64) * BUFFER_NUM + (tile // n_producers) % BUFFER_NUM
            row0 = tl.cast(tile // tiles_n, tl.int64) * BLOCK_M
            col0 = tl.cast(tile % tiles_n, tl.int64) * BLOCK_N
            slots = signal_ptr + group * n_ranks * SLOT_STRIDE
            total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for src in range(n_ranks):  # add each partial as soon as it has landed
                token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=tile + 1)
                partial = dl.consume_token(inbox_ptr + (group * n_ranks + src) * tile_elems, token)
                total += tl.load(partial + tile_offs).to(tl.float32)
            rows = row0 + tl.arange(0, BLOCK_M)
            cols = col0 + tl.arange(0, BLOCK_N)
            tl.store(out_ptr + rows[:, None] * N + cols[None, :], total.to(out_ptr.dtype.element_ty),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))
            libshmem_device.fence()
            for src in range(n_ranks):
                dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")


def gemm_allreduce_launch_args(rank: int, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                               workspace: GemmAllReduceWorkspace) -> tuple[tuple, dict]:
    """Positional and keyword arguments of rank ``rank``'s launch (grid: ``(workspace.roles.n_cores,)``)."""
    m, k = a.shape
    n = b.shape[1]
    if b.shape[0] != k or tuple(out.shape) != (m, n):
        raise ValueError(f"shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)}, out {tuple(out.shape)}")
    if workspace.inbox[rank].dtype != a.dtype:
        raise ValueError(f"the workspace's inbox holds {workspace.inbox[rank].dtype} partials, a is {a.dtype}: "
                         "build the workspace with dtype=a.dtype")
    cfg = workspace.config
    args = (a.contiguous(), b.contiguous(), out, workspace.inbox[rank], workspace.signals[rank],
            m, n, k, workspace.roles.n_producers)
    return args, {"BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_K": cfg.block_k, "BUFFER_NUM": cfg.buffer_num,
                  "SLOT_STRIDE": SIGNAL_SLOT_STRIDE}


def gemm_allreduce_reference(a_shards: list[torch.Tensor], b_shards: list[torch.Tensor]) -> torch.Tensor:
    """``sum_r a_r @ b_r`` in float32, each partial first rounded to the shards' dtype as the inbox holds it."""
    return sum((a.float() @ b.float()).to(a.dtype).float() for a, b in zip(a_shards, b_shards, strict=True))


def gemm_allreduce_on_npu(a: torch.Tensor, b: torch.Tensor, workspace: GemmAllReduceWorkspace,
                          rank: int) -> torch.Tensor:
    """Launch this process's rank on its NPU; every rank calls this with its own shards."""
    out = torch.empty((a.shape[0], b.shape[1]), dtype=a.dtype, device=a.device)
    n_cores = cube_core_count(a.device)
    workspace.roles.check_grid(n_cores)
    args, kwargs = gemm_allreduce_launch_args(rank, a, b, out, workspace)
    gemm_allreduce_kernel[(n_cores,)](*args, **kwargs)
    return out
