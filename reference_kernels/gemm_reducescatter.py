"""Fused GEMM + ReduceScatter for Triton-distributed on Ascend.

Rank ``r`` holds ``a_r [M, K_r]`` and ``b_r [K_r, N]`` (K sharded); the sum ``C = sum_r a_r @ b_r`` is
scattered by rows, so rank ``q`` keeps ``C[q*M/P : (q+1)*M/P]``. No rank ever materialises the full
partial product: each partial tile goes straight to the rank that owns its rows.

Layout and protocol (``P`` ranks, ``C`` producer programs, ``B = BUFFER_NUM`` generations):

* Producers (the first ``C`` programs) walk the work items ``w = t * P + owner`` (tile ``t`` of the
  owner's row block), ``w = pid, pid + C, ...``. Each producer program owns ``B`` inbox generations
  on every rank, so a slot is only ever written by one program, in order; item ``w`` uses
  generation ``(w // C) % B`` of program ``w % C``, the same for every source rank.
* ``inbox [C, B, P, BLOCK_M, BLOCK_N]`` symmetric, in the kernel's dtype (fp16/bf16 partials cross
  ranks at half the bytes of fp32; consumers add them in fp32): ``inbox[c, b, src]`` holds rank ``src``'s
  partial. ``signals [C, B, P]`` int64 slots on their own 64-byte lines, symmetric: a slot is 0 when
  free and ``w + 1`` once the
  partial of item ``w`` from ``src`` has landed on the owner.
* A producer computes the partial, waits for the owner's slot to be free, stores into the owner's
  inbox, ``fence``, and notifies the owner.
* Consumers (the remaining programs) walk the tiles of their own row block: add the ``P`` partials
  of a tile one by one, each as soon as its slot shows it has landed, store, ``fence``, and hand every
  slot back with ``notify(slot, rank, 0)`` (one resetter per slot and use).
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
class GemmReduceScatterConfig:
    block_m: int = 128
    # 128 x 128: the reducer's fp32 sum and a landed fp16 partial fit the Unified Buffer under multi-buffering
    # (BiShengIR needs 224 KB of 192 KB at 128 x 256, with or without its retries).
    block_n: int = 128
    block_k: int = 256
    buffer_num: int = 2


@dataclass(frozen=True)
class GemmReduceScatterWorkspace:
    """Symmetric buffers of one fused GEMM + ReduceScatter, each indexed by rank, and the role split they fit."""

    inbox: object
    signals: object
    world_size: int
    roles: RoleSplit
    config: GemmReduceScatterConfig


def gemm_reducescatter_workspace(alloc: SymmetricAllocator, world_size: int, roles: RoleSplit,
                                 config: GemmReduceScatterConfig = GemmReduceScatterConfig(),
                                 dtype: torch.dtype = torch.float32) -> GemmReduceScatterWorkspace:
    """Allocate the zeroed inbox and signal slots; they grow with the producer count, not with M or N.

    ``dtype`` is the kernel's (``a``'s): the partials cross ranks in it and are added up in float32.
    """
    groups = roles.n_producers * config.buffer_num
    inbox = alloc.symmetric_zeros((groups, world_size, config.block_m, config.block_n), dtype)
    signals = signal_slots(alloc, groups * world_size)
    return GemmReduceScatterWorkspace(inbox, signals, world_size, roles, config)


@triton.jit
def gemm_reducescatter_kernel(
    a_ptr, b_ptr, out_ptr, inbox_ptr, signal_ptr,
    rows_per_rank, N, K, n_producers,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BUFFER_NUM: tl.constexpr,
    SLOT_STRIDE: tl.constexpr,
):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    n_tiles = tl.cdiv(rows_per_rank, BLOCK_M) * tiles_n
    tile_elems = BLOCK_M * BLOCK_N
    tile_offs = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    if pid < n_producers:
        for work in range(pid, n_tiles * n_ranks, n_producers):
            tile = work // n_ranks
            owner = work % n_ranks
            group = tl.cast(pid, tl.int64) * BUFFER_NUM + (work // n_producers) % BUFFER_NUM
            row0 = tl.cast(tile // tiles_n, tl.int64) * BLOCK_M
            col0 = tl.cast(tile % tiles_n, tl.int64) * BLOCK_N
            a_rows = a_ptr + (tl.cast(owner, tl.int64) * rows_per_rank + row0) * K
            partial = tile_matmul(a_rows, K, b_ptr, N, rows_per_rank - row0, col0, N, K,
                                  BLOCK_M, BLOCK_N, BLOCK_K)
            slot = signal_ptr + (group * n_ranks + rank) * SLOT_STRIDE
            token = dl.wait(dl.symm_at(slot, owner), 1, "gpu", "acquire", waitValue=0)
            my_inbox = inbox_ptr + (group * n_ranks + rank) * tile_elems
            dst = dl.consume_token(dl.symm_at(my_inbox, owner), token)
            tl.store(dst + tile_offs, partial.to(inbox_ptr.dtype.element_ty))
            libshmem_device.fence()
            dl.notify(slot, owner, signal=work + 1, sig_op="set")
    else:
        for tile in range(pid - n_producers, n_tiles, n_programs - n_producers):
            work = tile * n_ranks + rank
            group = tl.cast(work % n_producers, tl.int64) * BUFFER_NUM + (work // n_producers) % BUFFER_NUM
            row0 = tl.cast(tile // tiles_n, tl.int64) * BLOCK_M
            col0 = tl.cast(tile % tiles_n, tl.int64) * BLOCK_N
            slots = signal_ptr + group * n_ranks * SLOT_STRIDE
            total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for src in range(n_ranks):  # add each partial as soon as it has landed
                token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=work + 1)
                partial = dl.consume_token(inbox_ptr + (group * n_ranks + src) * tile_elems, token)
                total += tl.load(partial + tile_offs).to(tl.float32)
            rows = row0 + tl.arange(0, BLOCK_M)
            cols = col0 + tl.arange(0, BLOCK_N)
            tl.store(out_ptr + rows[:, None] * N + cols[None, :], total.to(out_ptr.dtype.element_ty),
                     mask=(rows[:, None] < rows_per_rank) & (cols[None, :] < N))
            libshmem_device.fence()
            for src in range(n_ranks):
                dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")


def gemm_reducescatter_launch_args(rank: int, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor,
                                   workspace: GemmReduceScatterWorkspace) -> tuple[tuple, dict]:
    """Positional and keyword arguments of rank ``rank``'s launch (grid: ``(workspace.roles.n_cores,)``)."""
    m, k = a.shape
    n = b.shape[1]
    world = workspace.world_size
    if m % world:
        raise ValueError(f"M={m} is not divisible by the world size {world}")
    if b.shape[0] != k or tuple(out.shape) != (m // world, n):
        raise ValueError(f"shapes do not match: a {tuple(a.shape)}, b {tuple(b.shape)}, out {tuple(out.shape)}")
    if workspace.inbox[rank].dtype != a.dtype:
        raise ValueError(f"the workspace's inbox holds {workspace.inbox[rank].dtype} partials, a is {a.dtype}: "
                         "build the workspace with dtype=a.dtype")
    cfg = workspace.config
    args = (a.contiguous(), b.contiguous(), out, workspace.inbox[rank], workspace.signals[rank],
            m // world, n, k, workspace.roles.n_producers)
    return args, {"BLOCK_M": cfg.block_m, "BLOCK_N": cfg.block_n, "BLOCK_K": cfg.block_k, "BUFFER_NUM": cfg.buffer_num,
                  "SLOT_STRIDE": SIGNAL_SLOT_STRIDE}


def gemm_reducescatter_reference(a_shards: list[torch.Tensor], b_shards: list[torch.Tensor]) -> list[torch.Tensor]:
    """Each rank's row block of ``sum_r a_r @ b_r`` in float32, each partial first rounded to the shards' dtype as
    the kernel's inbox holds it."""
    total = sum((a.float() @ b.float()).to(a.dtype).float() for a, b in zip(a_shards, b_shards, strict=True))
    return list(total.chunk(len(a_shards), dim=0))


def gemm_reducescatter_on_npu(a: torch.Tensor, b: torch.Tensor, workspace: GemmReduceScatterWorkspace,
                              rank: int) -> torch.Tensor:
    """Launch this process's rank on its NPU; returns this rank's ``[M / P, N]`` row block."""
    out = torch.empty((a.shape[0] // workspace.world_size, b.shape[1]), dtype=a.dtype, device=a.device)
    n_cores = cube_core_count(a.device)
    workspace.roles.check_grid(n_cores)
    args, kwargs = gemm_reducescatter_launch_args(rank, a, b, out, workspace)
    gemm_reducescatter_kernel[(n_cores,)](*args, **kwargs)
    return out
