import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import (
    BARRIERS,
    CONSUME_TOKEN,
    SIGNAL_WAITS,
    SIGNAL_WRITES,
    call_argument,
    signal_argument,
)
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.signal_protocol import statement_of, waits_for_zero
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class ReusedBufferWithoutRelease(Rule):
    """Flags a kernel that reads a buffer published by an epoch wait and tells no one when it is done reading."""

    decides = """
    A kernel that waits for a value passed in per launch (an epoch, a step or call count) is meant to be launched
    again on the same buffers without a reset in between. Its peers then write the next launch's data into those
    buffers as soon as their own next launch starts, and a device stream lets a fast rank start its next launch while
    a slow rank is still in this one. Unless the consumer says when it has finished reading (a `barrier_all()` after
    its last read, or a signal back to the writers that they wait for before writing: an acknowledgement or a
    credit), the next launch overwrites the buffer under the reads. Trigger: a wait whose value comes from kernel
    arguments, reads through `dl.consume_token` of the buffer it publishes, and neither a barrier nor a signal write
    after the last of those reads. Non-triggers: a closing `barrier_all()`; an acknowledgement `dl.notify` /
    `signal_op` after the reads; waits for a constant (ASC414 covers those).
    """

    code = "ASC419"
    name = "reused-buffer-without-release"
    message = "`{buffer}` is read after a wait for a per-launch value, and nothing after the reads tells its " \
              "writers it is free: a rank's next launch can overwrite it while this one still reads"
    severity = Severity.WARNING
    default = False
    opt_in_reason = "New: it reports nothing on the real Ascend kernels we could read, so its precision is not measured"
    why = """
        Waiting for an epoch instead of resetting the signal is how a kernel is made relaunchable without host
        work between launches. The signal is then safe, but the data buffer is not: nothing stops a peer that
        has finished this launch from starting the next one and storing into the buffer this rank is still
        reading. Device streams order launches on one rank only, not across ranks. End the kernel with
        `barrier_all()` after the reads, or send the writers an acknowledgement they wait for before their next
        write.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_reduce(x_ptr, staging_ptr, flags_ptr, out_ptr, epoch, BLOCK: tl.constexpr):
                rank = dl.rank()
                world = dl.num_ranks()
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs)
                for peer in range(world):
                    tl.store(dl.symm_at(staging_ptr, peer) + rank * BLOCK + offs, x)
                libshmem_device.fence()
                for peer in range(world):
                    dl.notify(flags_ptr + rank * 8, peer, signal=epoch)  # one 64-byte line per rank
                token = dl.wait(flags_ptr, 1, "gpu", "acquire", waitValue=epoch)
                for src in range(1, world):
                    token += dl.wait(flags_ptr + src * 8, 1, "gpu", "acquire", waitValue=epoch)
                staging = dl.consume_token(staging_ptr, token)
                total = tl.zeros((BLOCK,), tl.float32)
                for src in range(world):
                    total += tl.load(staging + src * BLOCK + offs)
                tl.store(out_ptr + offs, total)
            """,
            doc=True,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_reduce(x_ptr, staging_ptr, flags_ptr, out_ptr, epoch, BLOCK: tl.constexpr):
                rank = dl.rank()
                world = dl.num_ranks()
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs)
                for peer in range(world):
                    tl.store(dl.symm_at(staging_ptr, peer) + rank * BLOCK + offs, x)
                libshmem_device.fence()
                for peer in range(world):
                    dl.notify(flags_ptr + rank * 8, peer, signal=epoch)  # one 64-byte line per rank
                token = dl.wait(flags_ptr, 1, "gpu", "acquire", waitValue=epoch)
                for src in range(1, world):
                    token += dl.wait(flags_ptr + src * 8, 1, "gpu", "acquire", waitValue=epoch)
                staging = dl.consume_token(staging_ptr, token)
                total = tl.zeros((BLOCK,), tl.float32)
                for src in range(world):
                    total += tl.load(staging + src * BLOCK + offs)
                tl.store(out_ptr + offs, total)
                libshmem_device.barrier_all()
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consume(inbox_ptr, out_ptr, ready_ptr, ack_ptr, step, left, N: tl.constexpr):
                token = dl.wait(ready_ptr, 1, "gpu", "acquire", waitValue=step + 1)
                row = tl.load(dl.consume_token(inbox_ptr, token) + tl.arange(0, N))
                tl.store(out_ptr + step * N + tl.arange(0, N), row)
                dl.notify(ack_ptr, left, signal=step + 1)
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            releases = [dist.index.order(c) for name in BARRIERS | SIGNAL_WRITES for c in dist.calls_to(name)]
            reported: set[str] = set()
            for wait in (w for name in sorted(SIGNAL_WAITS) for w in dist.calls_to(name)):
                if not _waits_for_launch_value(dist, wait):
                    continue
                for root, last_read in _reads_published_by(dist, wait).items():
                    if root not in reported and not any(order > last_read for order in releases):
                        reported.add(root)  # once per buffer: the first wait that publishes it
                        self.report(wait, self.message.format(buffer=root))


def _waits_for_launch_value(dist: DistAnalysis, wait: cst.Call) -> bool:
    name = dist.qualname_of(wait)
    value = signal_argument(wait, name, "value")
    if value is None or waits_for_zero(wait, name):
        return False
    reads = dist.reads_in(value)
    return bool(reads) and all(
        all(d.kind == "param" for d in dist.values.definitions(read)) for read in reads)


def _reads_published_by(dist: DistAnalysis, wait: cst.Call) -> dict[str, int]:
    """Buffer root -> position of the last load through a pointer consumed on ``wait``'s token."""
    statement = statement_of(dist, wait)
    if type(statement) is not cst.SimpleStatementLine:
        return {}
    tokens = {n.value for n in dist.below(statement) if type(n) is cst.Name} - {
        n.value for n in dist.below(wait) if type(n) is cst.Name}
    found: dict[str, int] = {}
    for load in dist.calls_to("tl.load"):
        pointer = call_argument(load, 0, "pointer")
        if pointer is None or not dist.derives_from_call(pointer, {CONSUME_TOKEN}):
            continue
        if not _consumes(dist, pointer, tokens):
            continue
        root = dist.pointer_root(pointer)
        if root is not None:
            found[root] = max(found.get(root, 0), dist.index.order(load))
    return found


def _consumes(dist: DistAnalysis, pointer: cst.BaseExpression, tokens: set[str]) -> bool:
    """A `dl.consume_token(..., token)` feeding ``pointer`` takes one of ``tokens``."""
    for source in dist._expressions_reaching(pointer):
        for node in (source, *dist.below(source)):
            if type(node) is cst.Call and dist.qualname_of(node) == CONSUME_TOKEN:
                token = call_argument(node, 1, "token")
                if token is not None and dist.names_feeding(token) & tokens:
                    return True
    return False
