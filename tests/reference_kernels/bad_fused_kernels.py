"""Fused distributed kernels broken on purpose, each in one protocol detail.

They take the same arguments as their references (so the references' launch-argument builders
serve them too) and show what the emulator reports when the protocol is wrong, and what
ascendlint flags statically. Import only after ``emulate.install_stand_ins()``.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

from reference_kernels._dist_common import sum_inbox_tiles, tile_matmul


@triton.jit
def reverse_all2all_without_credit_kernel(
    x_ptr, y_ptr, inbox_ptr, signal_ptr,
    seq_per_rank, heads_per_rank, D, n_producers,
    BLOCK_S: tl.constexpr, BLOCK_D: tl.constexpr, BUFFER_NUM: tl.constexpr,
):
    """``reference_kernels.reverse_all2all`` whose consumers never hand a slot back.

    Fine while no producer program needs a generation twice; once its ring wraps, the producer
    waits forever for a slot that still holds the id of the tile it sent before.
    """
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
            slot = signal_ptr + slot_id
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
            slot = signal_ptr + slot_id
            token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)
            src = dl.consume_token(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), token)
            tile = tl.load(src + tile_offs)
            seq = tl.cast(s_block, tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
            cols = tl.cast(d_tile, tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
            out_head = tl.cast(src_rank, tl.int64) * heads_per_rank + head
            tl.store(y_ptr + (seq[:, None] * (n_ranks * heads_per_rank) + out_head) * D + cols[None, :], tile,
                     mask=(seq[:, None] < seq_per_rank) & (cols[None, :] < D))


@triton.jit
def gemm_allreduce_short_notify_kernel(
    a_ptr, b_ptr, out_ptr, inbox_ptr, signal_ptr,
    M, N, K, n_producers,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BUFFER_NUM: tl.constexpr,
):
    """``reference_kernels.gemm_allreduce`` whose notify loop skips rank 0.

    The partials still land in rank 0's inbox, but rank 0 is never told: its consumers wait forever.
    """
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
            slot = signal_ptr + group * n_ranks + rank
            my_inbox = inbox_ptr + (group * n_ranks + rank) * tile_elems
            for peer in range(n_ranks):
                token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                dst = dl.consume_token(dl.symm_at(my_inbox, peer), token)
                tl.store(dst + tile_offs, partial)
            libshmem_device.fence()
            for peer in range(1, n_ranks):
                dl.notify(slot, peer, signal=tile + 1, sig_op="set")
    else:
        for tile in range(pid - n_producers, n_tiles, n_programs - n_producers):
            group = tl.cast(tile % n_producers, tl.int64) * BUFFER_NUM + (tile // n_producers) % BUFFER_NUM
            row0 = tl.cast(tile // tiles_n, tl.int64) * BLOCK_M
            col0 = tl.cast(tile % tiles_n, tl.int64) * BLOCK_N
            slots = signal_ptr + group * n_ranks
            token = dl.wait(slots, n_ranks, "gpu", "acquire", waitValue=tile + 1)
            tiles = dl.consume_token(inbox_ptr + group * n_ranks * tile_elems, token)
            total = sum_inbox_tiles(tiles, n_ranks, BLOCK_M, BLOCK_N)
            rows = row0 + tl.arange(0, BLOCK_M)
            cols = col0 + tl.arange(0, BLOCK_N)
            tl.store(out_ptr + rows[:, None] * N + cols[None, :], total.to(out_ptr.dtype.element_ty),
                     mask=(rows[:, None] < M) & (cols[None, :] < N))
            libshmem_device.fence()
            for src in range(n_ranks):
                dl.notify(slots + src, rank, signal=0, sig_op="set")
