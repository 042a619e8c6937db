"""Tiny multi-rank kernels written against Triton-distributed's device API.

Imported only after ``emulate.install_stand_ins()``.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton.language.extra.cann.extension import sub_vec_id
from triton_dist.language.extra import libshmem_device
from triton_dist.language.extra.ascend.algorithm import dist_swizzle2d_Nz, gemm_swizzle2d_Nz


@triton.jit
def all_gather_kernel(local_ptr, gathered_ptr, M: tl.constexpr, N: tl.constexpr, BLOCK_M: tl.constexpr):
    """Every rank stores its rows into every peer's gathered buffer, then all meet at a barrier."""
    rank = dl.rank()
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    tile = tl.load(local_ptr + rows[:, None] * N + cols[None, :])
    for peer in range(dl.num_ranks()):
        remote = dl.symm_at(gathered_ptr, peer)
        tl.store(remote + (rank * M + rows[:, None]) * N + cols[None, :], tile)
    libshmem_device.barrier_all()


@triton.jit
def put_then_count_kernel(src_ptr, inbox_ptr, arrivals_ptr, out_ptr, N: tl.constexpr):
    """Each rank puts its row into slot ``rank`` of every peer's inbox and bumps the peer's counter.

    Its own slot it fills with an MTE copy (UDMA cannot target the calling rank). After the wait, a rank
    reads all rows and writes their sum into ``out``.
    """
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    for peer in range(n_ranks):
        if peer == rank:
            tl.store(inbox_ptr + rank * N + tl.arange(0, N), tl.load(src_ptr + tl.arange(0, N)))
            libshmem_device.fence()
        else:
            libshmem_device.putmem(inbox_ptr + rank * N, src_ptr, N * 4, peer)
        dl.notify(arrivals_ptr, peer, signal=1, sig_op="add")
    token = dl.wait(arrivals_ptr, 1, "gpu", "acquire", waitValue=n_ranks)
    inbox = dl.consume_token(inbox_ptr, token)
    total = tl.zeros((N,), tl.float32)
    for src in range(n_ranks):
        total += tl.load(inbox + src * N + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), total)


@triton.jit
def ring_wait_kernel(signals_ptr):
    """Each rank marks slot 1 of its right neighbour, then waits on slot 0 that nobody sets."""
    right = (dl.rank() + 1) % dl.num_ranks()
    dl.notify(signals_ptr + 1, right, signal=dl.rank() + 5)
    token = dl.wait(signals_ptr, 1, "gpu", "acquire")
    tl.store(dl.consume_token(signals_ptr + 3, token), 0)


@triton.jit
def unconsumed_wait_kernel(signals_ptr, out_ptr):
    """Waits on a slot nobody sets, but drops the token: the compiler deletes the wait."""
    dl.wait(signals_ptr, 1, "gpu", "acquire")
    tl.store(out_ptr, 1)


@triton.jit
def consumed_wait_kernel(signals_ptr, out_ptr):
    """Waits on slot 0 and ties the token to the store: the wait stays."""
    token = dl.wait(signals_ptr, 1, "gpu", "acquire")
    tl.store(dl.consume_token(out_ptr, token), 1)


@triton.jit
def summed_tokens_kernel(signals_ptr, out_ptr, N: tl.constexpr):
    """Sums the tokens of N waits and consumes the sum once: every wait stays."""
    token = dl.wait(signals_ptr, 1, "gpu", "acquire")
    for i in range(1, N):
        token += dl.wait(signals_ptr + i, 1, "gpu", "acquire")
    tl.store(dl.consume_token(out_ptr, token), 1)


@triton.jit
def symm_at_kernel(ptr):
    remote = dl.symm_at(ptr, 0)
    tl.store(remote, 1.0)


@triton.jit
def putmem_kernel(dest_ptr, src_ptr, NBYTES: tl.constexpr):
    libshmem_device.putmem(dest_ptr, src_ptr, NBYTES, (dl.rank() + 1) % dl.num_ranks())


@triton.jit
def shmem_signal_kernel(data_ptr, copy_ptr, signal_ptr, N: tl.constexpr):
    """Rank 0 pushes data with a signal to rank 1; rank 1 waits on it, then pulls it back with getmem."""
    if libshmem_device.my_pe() == 0:
        libshmem_device.putmem_signal(data_ptr, data_ptr, N * 4, signal_ptr, 3, libshmem_device.SIGNAL_SET, 1)
    else:
        libshmem_device.signal_wait_until(signal_ptr, libshmem_device.CMP_GE, 3)
        libshmem_device.getmem(copy_ptr, data_ptr, N * 4, 0)


@triton.jit
def program_shape_kernel(out_ptr):
    pid = tl.program_id(0)
    tl.store(out_ptr + 2 * pid, pid + 100 * dl.rank())
    tl.store(out_ptr + 2 * pid + 1, tl.num_programs(0))


@triton.jit
def publish_kernel(data_ptr, flag_ptr, out_ptr, N: tl.constexpr, FENCE: tl.constexpr, NOTIFY_FIRST: tl.constexpr):
    """Program 0 of rank 0 stores a row into rank 1's buffer and raises rank 1's flag; rank 1 waits and copies."""
    offs = tl.arange(0, N)
    if dl.rank() == 0:
        if NOTIFY_FIRST:
            dl.notify(flag_ptr, 1, signal=1)
        tl.store(dl.symm_at(data_ptr, 1) + offs, offs.to(tl.float32) + 1.0)
        if FENCE:
            libshmem_device.fence()
        if not NOTIFY_FIRST:
            dl.notify(flag_ptr, 1, signal=1)
    else:
        token = dl.wait(flag_ptr, 1, "gpu", "acquire")
        tl.store(out_ptr + offs, tl.load(dl.consume_token(data_ptr, token) + offs))


@triton.jit
def udma_kernel(dest_ptr, src_ptr, NBYTES: tl.constexpr, MODE: tl.constexpr):
    """Rank 0 moves NBYTES with UDMA: MODE 0 to rank 1 (right), 1 to itself, 2 through a mapped pointer,
    3 a getmem from a mapped source."""
    if dl.rank() == 0:
        if MODE == 0:
            libshmem_device.putmem(dest_ptr, src_ptr, NBYTES, 1)
        elif MODE == 1:
            libshmem_device.putmem(dest_ptr, src_ptr, NBYTES, 0)
        elif MODE == 2:
            libshmem_device.putmem(dl.symm_at(dest_ptr, 1), src_ptr, NBYTES, 1)
        else:
            libshmem_device.getmem(src_ptr, dl.symm_at(dest_ptr, 1), NBYTES, 1)


@triton.jit
def sub_block_kernel(out_ptr, shared_ptr):
    """Each sub-block of each program records its id; sub-block 1 leaves a value that, after the barrier,
    sub-block 0 of the next program reads."""
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    sub = sub_vec_id()
    tl.store(out_ptr + pid * 2 + sub, sub + 10 * pid)
    if sub == 1:
        tl.store(shared_ptr + pid, pid + 100)
    libshmem_device.barrier_all()
    if sub == 0:
        tl.store(out_ptr + 2 * n + pid, tl.load(shared_ptr + (pid + 1) % n))


@triton.jit
def grid_barrier_kernel(out_ptr):
    """Every program meets the others at barrier_all."""
    libshmem_device.barrier_all()
    tl.store(out_ptr + tl.program_id(0), 1)


@triton.jit
def swizzle_kernel(gemm_ptr, dist_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, TILE: tl.constexpr,
                   GROUP: tl.constexpr, RANKS: tl.constexpr):
    """Records the tile each iteration id of the two Nz swizzles maps to."""
    n_tiles = tl.cdiv(ROWS, TILE) * tl.cdiv(COLS, TILE)
    for i in range(n_tiles):
        row, col = gemm_swizzle2d_Nz(i, ROWS, COLS, TILE, TILE, GROUP)
        tl.store(gemm_ptr + 2 * i, row)
        tl.store(gemm_ptr + 2 * i + 1, col)
    for i in range(n_tiles * RANKS):
        row, col, rank, rows, cols = dist_swizzle2d_Nz(i, RANKS, ROWS, COLS, TILE, TILE)
        tl.store(dist_ptr + 5 * i, row)
        tl.store(dist_ptr + 5 * i + 1, col)
        tl.store(dist_ptr + 5 * i + 2, rank)
        tl.store(dist_ptr + 5 * i + 3, rows)
        tl.store(dist_ptr + 5 * i + 4, cols)


@triton.jit
def wait_for_peer_launch_kernel(flag_ptr, out_ptr, WAITER: tl.constexpr):
    """Rank WAITER waits for a flag that a later launch sets; the other ranks do nothing."""
    if dl.rank() == WAITER:
        token = dl.wait(flag_ptr, 1, "gpu", "acquire")
        tl.store(dl.consume_token(out_ptr, token), 1)


@triton.jit
def set_flag_kernel(flag_ptr, SETTER: tl.constexpr, TARGET: tl.constexpr):
    """Rank SETTER sets the flag on rank TARGET."""
    if dl.rank() == SETTER:
        dl.notify(flag_ptr, TARGET, signal=1)


@triton.jit
def strided_wait_kernel(flags_ptr, out_ptr, STRIDE: tl.constexpr):
    """Slots sit STRIDE elements apart: each rank sets logical slot 0 on its neighbour and waits on slot 1."""
    peer = (dl.rank() + 1) % dl.num_ranks()
    dl.notify(flags_ptr, peer, signal=1)
    token = dl.wait(flags_ptr + STRIDE, 1, "gpu", "acquire")
    tl.store(dl.consume_token(out_ptr, token), 1)


@triton.jit
def put_nbi_kernel(dest_ptr, src_ptr, arrived_ptr, out_ptr, N: tl.constexpr, QUIET: tl.constexpr):
    """Rank 0 puts a row into rank 1 without blocking, then signals; rank 1 copies what arrived."""
    if libshmem_device.my_pe() == 0:
        libshmem_device.putmem_nbi(dest_ptr, src_ptr, N * 4, 1)
        if QUIET:
            libshmem_device.quiet()
        libshmem_device.signal_op(arrived_ptr, 1, libshmem_device.SIGNAL_SET, 1)
    else:
        libshmem_device.signal_wait_until(arrived_ptr, libshmem_device.CMP_EQ, 1)
        tl.store(out_ptr + tl.arange(0, N), tl.load(dest_ptr + tl.arange(0, N)))
