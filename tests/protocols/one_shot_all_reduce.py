"""A one-shot all-reduce launched again and again on the same symmetric staging buffer.

Every program pushes its block of ``x`` into slot ``rank`` of every rank's staging buffer, flags it
with the launch's epoch (each flag on its own 64-byte line, eight int64 slots apart), waits for all
ranks' flags of its block and sums the slots. The closing
barrier keeps a fast rank's next launch from overwriting a slow rank's staging buffer before it has
been read; the epoch keeps a launch from taking the previous launch's flags for its own.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def one_shot_all_reduce_kernel(x_ptr, staging_ptr, flags_ptr, out_ptr, epoch, N: tl.constexpr,
                               BLOCK: tl.constexpr):
    rank = dl.rank()
    world = dl.num_ranks()
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for peer in range(world):
        tl.store(dl.symm_at(staging_ptr, peer) + rank * N + offs, x)
    libshmem_device.fence()
    for peer in range(world):
        dl.notify(flags_ptr + (pid * world + rank) * 8, peer, signal=epoch)
    slots = flags_ptr + pid * world * 8
    tokens = dl.wait(slots, 1, "gpu", "acquire", waitValue=epoch)
    for src in range(1, world):
        tokens += dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=epoch)
    token = tokens
    staging = dl.consume_token(staging_ptr, token)
    total = tl.zeros((BLOCK,), tl.float32)
    for src in range(world):
        total += tl.load(staging + src * N + offs)
    tl.store(out_ptr + offs, total)
    libshmem_device.barrier_all()
