"""A ring all-gather written for the schedule-exploration tests (not a reference kernel).

Rank ``r`` holds ``x_r [M, N]``; afterwards every rank holds ``concat(x_0, ..., x_{P-1})`` in its
symmetric ``gathered [P * M, N]``. The rows are cut into blocks of ``BLOCK_M``; program ``pid``
handles blocks ``pid, pid + G, ...``. Per block, a rank copies its own chunk into ``gathered`` and
sends it to its right neighbour; at each later step it waits until the chunk its left neighbour sent
has landed and forwards it, ``P - 1`` steps in all, so every chunk travels around the ring.

Signals: one int64 slot per (chunk, block) on every rank, each on its own 64-byte line, set to 1 by
the left neighbour's program for that block once the chunk's rows are there (store, ``fence``,
``notify``), and handed back to 0 by the one program that waited on it. The slot index must name the
block: with the chunk alone, a program's wait is satisfied by the program of another block.
"""

import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

from reference_kernels._dist_common import SIGNAL_SLOT_STRIDE, signal_slots


@triton.jit
def ring_allgather_kernel(x_ptr, gathered_ptr, signal_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          SLOT_STRIDE: tl.constexpr):
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    right = (rank + 1) % n_ranks
    n_blocks = tl.cdiv(M, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    for block in range(pid, n_blocks, n_programs):
        rows = tl.cast(block, tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)
        tl.store(gathered_ptr + (tl.cast(rank, tl.int64) * M + rows)[:, None] * N + cols[None, :], tile, mask=mask)
        chunk = rank
        for step in range(n_ranks - 1):
            slot = signal_ptr + (tl.cast(chunk, tl.int64) * n_blocks + block) * SLOT_STRIDE
            if step > 0:
                token = dl.wait(slot, 1, "gpu", "acquire", waitValue=1)
                src = dl.consume_token(gathered_ptr, token)
                tile = tl.load(src + (tl.cast(chunk, tl.int64) * M + rows)[:, None] * N + cols[None, :], mask=mask)
            dst = dl.symm_at(gathered_ptr, right)
            tl.store(dst + (tl.cast(chunk, tl.int64) * M + rows)[:, None] * N + cols[None, :], tile, mask=mask)
            libshmem_device.fence()
            dl.notify(slot, right, signal=1, sig_op="set")
            if step > 0:
                dl.notify(slot, rank, signal=0, sig_op="set")
            chunk = (chunk + n_ranks - 1) % n_ranks
        # the last chunk to arrive is not forwarded: wait for it, then hand its slot back
        slot = signal_ptr + (tl.cast(chunk, tl.int64) * n_blocks + block) * SLOT_STRIDE
        token = dl.wait(slot, 1, "gpu", "acquire", waitValue=1)
        libshmem_device.fence()
        dl.notify(dl.consume_token(slot, token), rank, signal=0, sig_op="set")


def ring_allgather_workspace(alloc, world_size: int, rows: int, cols: int, dtype: torch.dtype, block_m: int):
    """The symmetric gather buffer and one signal slot per (chunk, block)."""
    gathered = alloc.symmetric_empty((world_size * rows, cols), dtype)
    signals = signal_slots(alloc, world_size * triton.cdiv(rows, block_m))
    return gathered, signals


def ring_allgather_launch_args(rank: int, x: torch.Tensor, gathered, signals, block_m: int) -> tuple[tuple, dict]:
    m, n = x.shape
    return ((x.contiguous(), gathered[rank], signals[rank], m, n),
            {"BLOCK_M": block_m, "BLOCK_N": triton.next_power_of_2(n), "SLOT_STRIDE": SIGNAL_SLOT_STRIDE})
