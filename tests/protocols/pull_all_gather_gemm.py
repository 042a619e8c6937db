"""A pull-style all-gather + GEMM: each rank fetches the peers' row blocks with ``getmem_nbi``.

Three staging buffers rotate: while the block of step ``s`` is multiplied, the fetches of steps
``s + 1`` and ``s + 2`` are in flight into the other two. ``quiet()`` at the top of every step
completes the fetches issued so far, so the block of step ``s`` has landed before it is read, and a
buffer is refilled only once its block has been read (two steps later). Program 0 does the
fetching and multiplying, so one core drives every pe whatever the grid.
"""

import triton
import triton.language as tl
from triton_dist.language.extra import libshmem_device


@triton.jit
def pull_all_gather_gemm_kernel(a_ptr, staging_ptr, b_ptr, c_ptr, M: tl.constexpr, K: tl.constexpr,
                                N: tl.constexpr):
    if tl.program_id(0) == 0:
        rank = libshmem_device.my_pe()
        world = libshmem_device.n_pes()
        offs_m = tl.arange(0, M)
        offs_k = tl.arange(0, K)
        offs_n = tl.arange(0, N)
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :])
        for ahead in range(1, 3):
            if ahead < world:
                libshmem_device.getmem_nbi(staging_ptr + (ahead % 3) * M * K, a_ptr, M * K * 4, (rank + ahead) % world)
        for step in range(world):
            src = (rank + step) % world
            libshmem_device.quiet()
            if step == 0:
                a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :])
            else:
                a = tl.load(staging_ptr + (step % 3) * M * K + offs_m[:, None] * K + offs_k[None, :])
            if step + 2 < world:
                libshmem_device.getmem_nbi(staging_ptr + ((step + 2) % 3) * M * K, a_ptr, M * K * 4,
                                           (rank + step + 2) % world)
            c = tl.dot(a, b)
            tl.store(c_ptr + (src * M + offs_m[:, None]) * N + offs_n[None, :], c)
