"""A producer kernel and a consumer kernel that hand a message round a ring, step after step.

Each step is two launches on every rank: ``produce_kernel`` sends the rank's row to its right
neighbour's inbox, ``consume_kernel`` copies the row that arrived from the left into the output. The
signals are reused by every step and never reset: ``ready`` carries the step number the inbox holds,
``ack`` the number of steps the right neighbour has read, so a producer waits until its previous
message has been read before it overwrites the inbox.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def produce_kernel(src_ptr, inbox_ptr, ready_ptr, ack_ptr, step, N: tl.constexpr):
    rank = dl.rank()
    right = (rank + 1) % dl.num_ranks()
    token = dl.wait(ack_ptr, 1, "gpu", "acquire", waitValue=step)
    inbox = dl.consume_token(dl.symm_at(inbox_ptr, right), token)
    offs = tl.arange(0, N)
    tl.store(inbox + offs, tl.load(src_ptr + step * N + offs))
    libshmem_device.fence()
    dl.notify(ready_ptr, right, signal=step + 1)


@triton.jit
def consume_kernel(inbox_ptr, out_ptr, ready_ptr, ack_ptr, step, N: tl.constexpr):
    rank = dl.rank()
    left = (rank + dl.num_ranks() - 1) % dl.num_ranks()
    token = dl.wait(ready_ptr, 1, "gpu", "acquire", waitValue=step + 1)
    offs = tl.arange(0, N)
    row = tl.load(dl.consume_token(inbox_ptr, token) + offs)
    tl.store(out_ptr + step * N + offs, row)
    libshmem_device.fence()
    dl.notify(ack_ptr, left, signal=step + 1)
