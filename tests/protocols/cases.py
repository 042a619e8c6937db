"""Host side of the protocol kernels: buffers, a launch sequence per rank, and the torch check.

Each case takes the emulator, the kernel module (the correct one or a variant's) and a world size,
runs the whole sequence under the options given (default: the default exploration) and raises on a
wrong result. Importing this module needs torch, not the kernel modules.
"""

from __future__ import annotations

import torch

HEAP = 1 << 20


def _close(actual, expected) -> None:
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)


def _in_lockstep(emulate, launches: list, lockstep: bool) -> list:
    """With ``lockstep``, a host barrier between every two launches: no rank runs ahead of another."""
    if not lockstep:
        return launches
    spaced = []
    for launch in launches:
        spaced += [emulate.HOST_BARRIER, launch] if spaced else [launch]
    return spaced


def stream_pair(emulate, mod, world_size, steps=3, n=16, lockstep=False, **options):
    """Producer and consumer kernels, alternating, ``steps`` times on every rank; no host barrier."""
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(1)
    src = [torch.randn(steps, n, generator=gen) for _ in range(world_size)]
    out = [torch.zeros(steps, n) for _ in range(world_size)]
    inbox = world.symmetric_empty((n,), torch.float32)
    ready, ack = world.signal_zeros(1), world.signal_zeros(1)
    launches = []
    for step in range(steps):
        launches.append(emulate.Launch(mod.produce_kernel, (1,), lambda r, step=step: (
            (src[r], inbox[r], ready[r], ack[r], step), {"N": n})))
        launches.append(emulate.Launch(mod.consume_kernel, (1,), lambda r, step=step: (
            (inbox[r], out[r], ready[r], ack[r], step), {"N": n})))

    def check():
        for rank in range(world_size):
            _close(out[rank], src[(rank - 1) % world_size])

    world.launch_sequence(_in_lockstep(emulate, launches, lockstep), check=check, **options)


def one_shot_all_reduce(emulate, mod, world_size, launches=3, n=32, block=16, lockstep=False, **options):
    """The all-reduce launched ``launches`` times back to back on one staging buffer and one flag set."""
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(2)
    x = [[torch.randn(n, generator=gen) for _ in range(world_size)] for _ in range(launches)]
    out = [[torch.zeros(n) for _ in range(world_size)] for _ in range(launches)]
    staging = world.symmetric_empty((world_size * n,), torch.float32)
    flags = world.signal_zeros((n // block) * world_size * 8)
    sequence = [
        emulate.Launch(mod.one_shot_all_reduce_kernel, (n // block,), lambda r, e=epoch: (
            (x[e][r], staging[r], flags[r], out[e][r], e + 1), {"N": n, "BLOCK": block}))
        for epoch in range(launches)
    ]

    def check():
        for epoch in range(launches):
            expected = torch.stack(x[epoch]).sum(0)
            for rank in range(world_size):
                _close(out[epoch][rank], expected)

    world.launch_sequence(_in_lockstep(emulate, sequence, lockstep), check=check, **options)


def barrier_all_gather(emulate, mod, world_size, n=48, block=16, grid=2, **options):
    """One launch; three blocks over two programs, so the programs' task loops differ in length."""
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(3)
    x = [torch.randn(n, generator=gen) for _ in range(world_size)]
    out = [torch.zeros(n) for _ in range(world_size)]
    gathered = world.symmetric_empty((world_size * n,), torch.float32)

    def check():
        expected = sum((src + 1) * x[src] for src in range(world_size))
        for rank in range(world_size):
            _close(out[rank], expected)

    world.launch(mod.barrier_all_gather_kernel, (grid,), lambda r: (
        (x[r], gathered[r], out[r]), {"N": n, "BLOCK": block, "BLOCKS": n // block}), check=check, **options)


def nbi_ring_shift(emulate, mod, world_size, n=32, **options):
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(4)
    src = [torch.randn(n, generator=gen) for _ in range(world_size)]
    out = [torch.zeros(n) for _ in range(world_size)]
    inbox = world.symmetric_empty((n,), torch.float32)
    arrived = world.signal_zeros(1, dtype=torch.int32)

    def check():
        for rank in range(world_size):
            _close(out[rank], src[(rank - 1) % world_size])

    world.launch(mod.nbi_ring_shift_kernel, (1,), lambda r: ((src[r], inbox[r], arrived[r], out[r]), {"N": n}),
                 check=check, **options)


def pull_all_gather_gemm(emulate, mod, world_size, m=16, k=16, n=16, **options):
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(5)
    a = world.symmetric_empty((m, k), torch.float32)
    for shard in a:
        shard.copy_(torch.randn(m, k, generator=gen))
    b = [torch.randn(k, n, generator=gen) for _ in range(world_size)]
    staging = [torch.zeros(3, m, k) for _ in range(world_size)]
    c = [torch.zeros(world_size * m, n) for _ in range(world_size)]

    def check():
        gathered = torch.cat(list(a))
        for rank in range(world_size):
            torch.testing.assert_close(c[rank], gathered @ b[rank], rtol=1e-4, atol=1e-4)

    world.launch(mod.pull_all_gather_gemm_kernel, (1,), lambda r: (
        (a[r], staging[r], b[r], c[r]), {"M": m, "K": k, "N": n}), check=check, **options)


def ring_reduce_scatter(emulate, mod, world_size, c=16, **options):
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(6)
    x = [torch.randn(world_size * c, generator=gen) for _ in range(world_size)]
    out = [torch.zeros(c) for _ in range(world_size)]
    inbox = world.symmetric_empty((2 * c,), torch.float32)
    ready, credit = world.signal_zeros(16), world.signal_zeros(16)

    def check():
        total = torch.stack(x).sum(0).view(world_size, c)
        for rank in range(world_size):
            _close(out[rank], total[(rank + 1) % world_size])

    world.launch(mod.ring_reduce_scatter_kernel, (1,), lambda r: (
        (x[r], inbox[r], ready[r], credit[r], out[r]), {"C": c}), check=check, **options)


def expert_all_to_all(emulate, mod, world_size, experts=2, d=8, compare_schedules=None, **options):
    """Per-expert counts drawn at random; the receive buffer's layout depends on the arrival order, so the
    schedules are compared on the outputs alone unless ``compare_schedules`` says otherwise."""
    world = emulate.World(world_size, heap_bytes=HEAP)
    gen = torch.Generator().manual_seed(7)
    counts = [torch.randint(0, 3, (world_size, experts), generator=gen, dtype=torch.int32)
              for _ in range(world_size)]
    tokens = [torch.randn(max(1, int(cnt.sum())), d, generator=gen) for cnt in counts]
    incoming = [sum(int(counts[s][p].sum()) for s in range(world_size)) for p in range(world_size)]
    capacity = max(1, max(incoming))
    recv = world.symmetric_empty((capacity, d), torch.float32)
    cursor = world.symmetric_zeros((1,), torch.int32)
    meta = world.symmetric_zeros((world_size * (experts + 1),), torch.int32)
    arrived = world.signal_zeros(1)
    out = [torch.zeros(capacity, d) for _ in range(world_size)]

    def expected(peer):
        rows = []
        for expert in range(experts):
            for src in range(world_size):
                start = int(counts[src][:peer].sum()) + int(counts[src][peer][:expert].sum())
                rows.append(tokens[src][start:start + int(counts[src][peer][expert])])
        return torch.cat(rows)

    def check():
        for peer in range(world_size):
            _close(out[peer][:incoming[peer]], expected(peer))

    if compare_schedules is None:
        compare_schedules = lambda: list(out)  # noqa: E731 - the output alone is arrival-order free
    world.launch(mod.expert_all_to_all_kernel, (1,), lambda r: (
        (tokens[r], counts[r], recv[r], cursor[r], meta[r], arrived[r], out[r]), {"E": experts, "D": d}),
        check=check, compare_schedules=compare_schedules, **options)


CASES = {
    "stream_pair": stream_pair,
    "one_shot_all_reduce": one_shot_all_reduce,
    "barrier_all_gather": barrier_all_gather,
    "nbi_ring_shift": nbi_ring_shift,
    "pull_all_gather_gemm": pull_all_gather_gemm,
    "ring_reduce_scatter": ring_reduce_scatter,
    "expert_all_to_all": expert_all_to_all,
}
