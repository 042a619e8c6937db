"""A Triton-distributed all-gather producer/consumer with protocol mistakes: run ``ascendlint check examples/``."""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def gather_rows_kernel(x_ptr, gathered_ptr, signal_ptr, M, N, BLOCK: tl.constexpr):
    rank = dl.rank()
    world = dl.num_ranks()
    offs = tl.arange(0, BLOCK)
    rows = tl.load(x_ptr + offs, mask=offs < M * N)
    for peer in range(world):
        remote = dl.symm_at(gathered_ptr, peer)
        tl.store(remote + rank * M * N + offs, rows, mask=offs < M * N)
    # The notify publishes the stores without a fence: on the MTE path the data may land after the signal (ASC403).
    for peer in range(world):
        dl.notify(signal_ptr + rank, peer, signal=1, sig_op="set", comm_scope="intra_node")
    # The token is never consumed, so nothing depends on the wait and the compiler may drop it (ASC401).
    dl.wait(signal_ptr, world, "gpu", "acquire")
    data = tl.load(gathered_ptr + offs)
    tl.store(x_ptr + offs, data)


def gather_rows(x, gathered, signals, n_rows, n_cols):
    gather_rows_kernel[(64,)](x, gathered, signals, n_rows, n_cols, BLOCK=1024)
