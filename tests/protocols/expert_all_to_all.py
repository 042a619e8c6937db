"""An all-to-all of tokens by expert, with per-expert counts, placed in arrival order.

Every rank holds ``E`` experts. A sender's tokens are sorted by destination expert, with one count
per expert (``counts``). For each destination rank, the sender reserves rows in that rank's receive
buffer with an atomic add on its cursor (so pieces land in arrival order), copies its tokens there,
records where they went and how many there are per expert; once every peer has its tokens, the sender
fences and counts itself in at every peer. The
receiver waits for every sender, then reads the records and gathers the tokens into its output in
(expert, sender) order, so the output does not depend on the arrival order even though the receive
buffer does.
"""

import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device


@triton.jit
def expert_all_to_all_kernel(tokens_ptr, counts_ptr, recv_ptr, cursor_ptr, meta_ptr, arrived_ptr, out_ptr,
                             E: tl.constexpr, D: tl.constexpr):
    rank = dl.rank()
    world = dl.num_ranks()
    offs_d = tl.arange(0, D)
    sent = 0
    for peer in range(world):
        total = 0
        for expert in range(E):
            total += tl.load(counts_ptr + peer * E + expert)
        base = tl.atomic_add(dl.symm_at(cursor_ptr, peer), total)
        for row in range(total):
            token = tl.load(tokens_ptr + (sent + row) * D + offs_d)
            tl.store(dl.symm_at(recv_ptr, peer) + (base + row) * D + offs_d, token)
        record = dl.symm_at(meta_ptr, peer) + rank * (E + 1)
        tl.store(record, base)
        for expert in range(E):
            tl.store(record + 1 + expert, tl.load(counts_ptr + peer * E + expert))
        sent += total
    libshmem_device.fence()
    for peer in range(world):
        dl.notify(arrived_ptr, peer, signal=1, sig_op="add")
    token = dl.wait(arrived_ptr, 1, "gpu", "acquire", waitValue=world)
    meta = dl.consume_token(meta_ptr, token)
    written = 0
    for expert in range(E):
        for src in range(world):
            start = tl.load(meta + src * (E + 1))
            for before in range(expert):
                start += tl.load(meta + src * (E + 1) + 1 + before)
            count = tl.load(meta + src * (E + 1) + 1 + expert)
            for row in range(count):
                tl.store(out_ptr + (written + row) * D + offs_d, tl.load(recv_ptr + (start + row) * D + offs_d))
            written += count
