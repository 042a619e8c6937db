"""A ring reduce-scatter through two inbox slots, with credits returned slot by slot.

At step ``s`` a rank sends its running partial sum of chunk ``rank - s`` to its right neighbour's
inbox slot ``s % 2``, receives the left neighbour's partial of chunk ``rank - s - 1`` in the same
slot of its own inbox, and adds its own piece of that chunk. ``ready[slot]`` counts the messages a
slot has held; ``credit[slot]``, on the sender, counts the messages the receiver has read out of it.
A sender reuses a slot only once the message it put there last has been read. Neither signal is ever
reset: both only grow. Each signal slot sits on its own 64-byte line (eight int64 slots apart).
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def ring_reduce_scatter_kernel(x_ptr, inbox_ptr, ready_ptr, credit_ptr, out_ptr, C: tl.constexpr):
    rank = dl.rank()
    world = dl.num_ranks()
    right = (rank + 1) % world
    left = (rank + world - 1) % world
    offs = tl.arange(0, C)
    partial = tl.load(x_ptr + rank * C + offs)
    for step in range(world - 1):
        slot = step % 2
        laps = step // 2
        freed = dl.wait(credit_ptr + slot * 8, 1, "gpu", "acquire", waitValue=laps)
        send = dl.consume_token(dl.symm_at(inbox_ptr, right), freed)
        tl.store(send + slot * C + offs, partial)
        libshmem_device.fence()
        dl.notify(ready_ptr + slot * 8, right, signal=laps + 1)
        arrived = dl.wait(ready_ptr + slot * 8, 1, "gpu", "acquire", waitValue=laps + 1)
        received = tl.load(dl.consume_token(inbox_ptr, arrived) + slot * C + offs)
        libshmem_device.fence()
        dl.notify(credit_ptr + slot * 8, left, signal=laps + 1)
        chunk = (rank + world - step - 1) % world
        partial = received + tl.load(x_ptr + chunk * C + offs)
    tl.store(out_ptr + offs, partial)
