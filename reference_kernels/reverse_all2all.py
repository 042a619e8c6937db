"""Reverse All2All (the exchange after Ulysses-style sequence-parallel attention) for Ascend.

Rank ``r`` holds the whole sequence for its head group, ``x_r [S, H/P, D]``; afterwards rank ``q``
holds its sequence block for all heads, ``y_q [S/P, H, D]``, with
``y_q[s, r*H/P + h] = x_r[q*S/P + s, h]``.

A pure communication pipeline, so it uses fine-grained signals rather than barriers: a consumer
starts on a tile as soon as that tile's producer is done, never waiting for the slowest producer.

Layout and protocol (``P`` ranks, ``C`` producer programs, ``B = BUFFER_NUM`` generations):

* Work is flattened over (sequence block, peer, head, d tile) into one id ``w``, so that even few
  heads give every core work. The peer is rotated by rank: for a given ``w`` every rank sends to a
  different destination, so each rank receives exactly one tile per ``w``.
* Producers (the first ``C`` programs) take ``w = pid, pid + C, ...``. Each producer program owns
  ``B`` inbox generations on every rank, so a slot has a single writer that fills it in order:
  ``inbox [P, C, B, BLOCK_S, BLOCK_D]`` and ``signals [P, C, B]`` (source rank, program,
  generation; int64 slots on their own 64-byte lines), symmetric. A slot is 0 when free and ``w + 1``
  once tile ``w`` has landed.
* A producer loads its tile, waits until the destination's slot is free, stores the tile into the
  destination's inbox, ``fence``, and notifies the destination with ``w + 1``.
* Consumers (the remaining programs) walk the same ids in increasing order: wait for ``w + 1``,
  copy the tile into ``y``, ``fence``, and hand the slot back with ``notify(slot, rank, 0)``; each
  use of a slot has exactly one waiter and one resetter.
"""

from dataclasses import dataclass

import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

from reference_kernels._cores import vector_core_count
from reference_kernels._dist_common import SIGNAL_SLOT_STRIDE, RoleSplit, SymmetricAllocator, signal_slots


@dataclass(frozen=True)
class ReverseAll2AllConfig:
    block_s: int = 16
    block_d: int = 256
    buffer_num: int = 2


@dataclass(frozen=True)
class ReverseAll2AllWorkspace:
    """Symmetric buffers of one Reverse All2All, each indexed by rank, and the role split they fit."""

    inbox: object
    signals: object
    world_size: int
    heads_per_rank: int
    head_dim: int
    roles: RoleSplit
    config: ReverseAll2AllConfig


def reverse_all2all_workspace(alloc: SymmetricAllocator, world_size: int, heads_per_rank: int, head_dim: int,
                              dtype: torch.dtype, roles: RoleSplit,
                              config: ReverseAll2AllConfig = ReverseAll2AllConfig()) -> ReverseAll2AllWorkspace:
    """Allocate the zeroed inbox and its signal slots; their size does not grow with the sequence."""
    tiles = world_size * roles.n_producers * config.buffer_num
    inbox = alloc.symmetric_zeros((tiles, config.block_s, config.block_d), dtype)
    signals = signal_slots(alloc, tiles)
    return ReverseAll2AllWorkspace(inbox, signals, world_size, heads_per_rank, head_dim, roles, config)


@triton.jit
def reverse_all2all_kernel(
    x_ptr, y_ptr, inbox_ptr, signal_ptr,
    seq_per_rank, heads_per_rank, D, n_producers,
    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr, BUFFER_NUM: tl.constexpr, SLOT_STRIDE: tl.constexpr,
):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    d_tiles = tl.cdiv(D, BLOCK_D)
    tasks_per_peer = heads_per_rank * d_tiles
    tasks = n_ranks * tasks_per_peer
    n_work = tl.cdiv(seq_per_rank, BLOCK_S) * tasks
    tile_offs = tl.arange(0, BLOCK_S)[:, None] * BLOCK_D + tl.arange(0, BLOCK_D)[None, :]
    if pid < n_producers:
        for work in range(pid, n_work, n_producers):
            s_block = work // tasks
            task = work % tasks
            dst_rank = (rank + task // tasks_per_peer) % n_ranks
            head = (task // d_tiles) % heads_per_rank
            d_tile = task % d_tiles
            seq = tl.cast(s_block, tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
            cols = tl.cast(d_tile, tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
            src_rows = tl.cast(dst_rank, tl.int64) * seq_per_rank + seq
            tile = tl.load(x_ptr + (src_rows[:, None] * heads_per_rank + head) * D + cols[None, :],
                           mask=(seq[:, None] < seq_per_rank) & (cols[None, :] < D), other=0.0)
            generation = (work // n_producers) % BUFFER_NUM
            slot_id = (tl.cast(rank, tl.int64) * n_producers + pid) * BUFFER_NUM + generation
            slot = signal_ptr + slot_id * SLOT_STRIDE
            token = dl.wait(dl.symm_at(slot, dst_rank), 1, "gpu", "acquire", waitValue=0)
            dst = dl.consume_token(dl.symm_at(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), dst_rank), token)
            tl.store(dst + tile_offs, tile)
            libshmem_device.fence()
            dl.notify(slot, dst_rank, signal=work + 1, sig_op="set")
    else:
        for work in range(pid - n_producers, n_work, n_programs - n_producers):
            s_block = work // tasks
            task = work % tasks
            src_rank = (rank + n_ranks - task // tasks_per_peer) % n_ranks
            head = (task // d_tiles) % heads_per_rank
            d_tile = task % d_tiles
            generation = (work // n_producers) % BUFFER_NUM
            slot_id = (tl.cast(src_rank, tl.int64) * n_producers + work % n_producers) * BUFFER_NUM + generation
            slot = signal_ptr + slot_id * SLOT_STRIDE
            token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)
            src = dl.consume_token(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), token)
            tile = tl.load(src + tile_offs)
            seq = tl.cast(s_block, tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
            cols = tl.cast(d_tile, tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
            out_head = tl.cast(src_rank, tl.int64) * heads_per_rank + head
            tl.store(y_ptr + (seq[:, None] * (n_ranks * heads_per_rank) + out_head) * D + cols[None, :], tile,
                     mask=(seq[:, None] < seq_per_rank) & (cols[None, :] < D))
            libshmem_device.fence()
            dl.notify(slot, rank, signal=0, sig_op="set")


def reverse_all2all_launch_args(rank: int, x: torch.Tensor, y: torch.Tensor,
                                workspace: ReverseAll2AllWorkspace) -> tuple[tuple, dict]:
    """Positional and keyword arguments of rank ``rank``'s launch (grid: ``(workspace.roles.n_cores,)``)."""
    seq, heads_per_rank, head_dim = x.shape
    world = workspace.world_size
    if seq % world:
        raise ValueError(f"sequence length {seq} is not divisible by the world size {world}")
    expected_y = (seq // world, world * heads_per_rank, head_dim)
    if (heads_per_rank, head_dim) != (workspace.heads_per_rank, workspace.head_dim) or tuple(y.shape) != expected_y:
        raise ValueError(f"shapes do not match: x {tuple(x.shape)}, y {tuple(y.shape)} (expected {expected_y}), "
                         f"workspace built for {workspace.heads_per_rank} heads of size {workspace.head_dim}")
    cfg = workspace.config
    args = (x.contiguous(), y, workspace.inbox[rank], workspace.signals[rank],
            seq // world, heads_per_rank, head_dim, workspace.roles.n_producers)
    return args, {"BLOCK_S": cfg.block_s, "BLOCK_D": cfg.block_d, "BUFFER_NUM": cfg.buffer_num,
                  "SLOT_STRIDE": SIGNAL_SLOT_STRIDE}


def reverse_all2all_reference(x_shards: list[torch.Tensor]) -> list[torch.Tensor]:
    """Each rank's ``[S/P, H, D]`` block: the sequence split over ranks, the heads concatenated."""
    world = len(x_shards)
    full = torch.cat(x_shards, dim=1)
    return list(full.chunk(world, dim=0))


def reverse_all2all_on_npu(x: torch.Tensor, workspace: ReverseAll2AllWorkspace, rank: int) -> torch.Tensor:
    """Launch this process's rank on its NPU; returns this rank's ``[S/P, H, D]`` block."""
    seq, heads_per_rank, head_dim = x.shape
    world = workspace.world_size
    y = torch.empty((seq // world, world * heads_per_rank, head_dim), dtype=x.dtype, device=x.device)
    n_cores = vector_core_count(x.device)
    workspace.roles.check_grid(n_cores)
    args, kwargs = reverse_all2all_launch_args(rank, x, y, workspace)
    reverse_all2all_kernel[(n_cores,)](*args, **kwargs)
    return y
