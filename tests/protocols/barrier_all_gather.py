"""An all-gather closed by a grid barrier, then a weighted sum over the gathered rows.

Programs split the row into blocks; each writes its block into slot ``rank`` of every rank's
gathered buffer, meets every program of every rank at ``barrier_all`` and only then reads the
gathered rows. A second loop form walks the blocks in a task loop (``range(pid, BLOCKS, grid)``),
with the barrier after the loop so that every program reaches it exactly once.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def barrier_all_gather_kernel(x_ptr, gathered_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr,
                              BLOCKS: tl.constexpr):
    rank = dl.rank()
    world = dl.num_ranks()
    pid = tl.program_id(0)
    for block in range(pid, BLOCKS, tl.num_programs(0)):
        offs = block * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        for peer in range(world):
            tl.store(dl.symm_at(gathered_ptr, peer) + rank * N + offs, x)
    libshmem_device.barrier_all()
    for block in range(pid, BLOCKS, tl.num_programs(0)):
        offs = block * BLOCK + tl.arange(0, BLOCK)
        total = tl.zeros((BLOCK,), tl.float32)
        for src in range(world):
            total += tl.load(gathered_ptr + src * N + offs) * (src + 1)
        tl.store(out_ptr + offs, total)
