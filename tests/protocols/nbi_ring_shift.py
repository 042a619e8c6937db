"""A ring shift with non-blocking puts: every rank puts its row into its right neighbour's inbox.

``putmem_nbi`` only starts the transfer; ``quiet()`` waits for it, and only then may the signal
tell the neighbour that the row is there. Ranks use ``libshmem_device`` alone (``my_pe``,
``signal_op``, ``signal_wait_until``), with int32 signal slots.
"""

import triton
import triton.language as tl
from triton_dist.language.extra import libshmem_device


@triton.jit
def nbi_ring_shift_kernel(src_ptr, inbox_ptr, arrived_ptr, out_ptr, N: tl.constexpr):
    if tl.program_id(0) == 0:
        rank = libshmem_device.my_pe()
        right = (rank + 1) % libshmem_device.n_pes()
        libshmem_device.putmem_nbi(inbox_ptr, src_ptr, N * 4, right)
        libshmem_device.quiet()
        libshmem_device.signal_op(arrived_ptr, 1, libshmem_device.SIGNAL_SET, right)
        libshmem_device.signal_wait_until(arrived_ptr, libshmem_device.CMP_EQ, 1)
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, tl.load(inbox_ptr + offs))
