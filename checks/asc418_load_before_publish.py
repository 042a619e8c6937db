import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import BARRIERS, CONSUME_TOKEN, PUT_CALLS, SIGNAL_WAITS, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.signal_protocol import statement_of
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid

_SYNC = SIGNAL_WAITS | BARRIERS


class LoadBeforePublish(Rule):
    """Flags a `tl.load` of a buffer that peers write, placed before the wait or barrier that publishes it."""

    decides = """
    A buffer the peers fill (the kernel stores into it through `dl.symm_at` / `remote_ptr` or `putmem`s into it, or
    reads it through `dl.consume_token` after a wait) holds the peers' data only once the wait or barrier that orders
    their writes has returned. Trigger: a local `tl.load` of such a buffer that comes after the kernel's writes to
    the peers' copies with no wait or barrier in between but before a later one (the barrier was placed after the
    compute that reads the buffer), or that comes before a wait whose token is consumed on that same buffer (the
    counts were read before the wait that publishes them). Non-triggers: reads after the wait or barrier; reads of
    the rank's own data before it pushes it to the peers; reads of other buffers.
    """

    code = "ASC418"
    name = "load-before-publish"
    message = "`tl.load` of `{buffer}` before the {sync} on line {line} that publishes it: it can read the " \
              "previous contents"
    severity = Severity.ERROR
    default = False
    opt_in_reason = "New: it reports nothing on the real Ascend kernels we could read, so its precision is not measured"
    why = """
        The peers' writes into a rank's copy of a symmetric buffer are only guaranteed to be there once the wait
        for their signal, or the barrier after their stores, has returned. A load placed before that point
        reads whatever the buffer held: the previous launch's data, or garbage on the first launch. Typical
        forms are a barrier moved below the compute that reads the gathered rows, and counts or offsets read
        before the wait that announces them, then used after it.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_then_sum(x_ptr, gathered_ptr, out_ptr, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(gathered_ptr, peer) + rank * BLOCK + offs, x)
                total = tl.zeros((BLOCK,), tl.float32)
                for src in range(n_ranks):
                    total += tl.load(gathered_ptr + src * BLOCK + offs)
                libshmem_device.barrier_all()
                tl.store(out_ptr + offs, total)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def receive(counts_ptr, rows_ptr, arrived_ptr, out_ptr, n_ranks, D: tl.constexpr):
                first = tl.load(counts_ptr)
                token = dl.wait(arrived_ptr, 1, "gpu", "acquire", waitValue=n_ranks)
                counts = dl.consume_token(counts_ptr, token)
                for src in range(n_ranks):
                    n = tl.load(counts + src) + first
                    tl.store(out_ptr + src * D + tl.arange(0, D), tl.load(rows_ptr + tl.arange(0, D)), mask=n > 0)
            """
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
            def gather_then_sum(x_ptr, gathered_ptr, out_ptr, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(gathered_ptr, peer) + rank * BLOCK + offs, x)
                libshmem_device.barrier_all()
                total = tl.zeros((BLOCK,), tl.float32)
                for src in range(n_ranks):
                    total += tl.load(gathered_ptr + src * BLOCK + offs)
                tl.store(out_ptr + offs, total)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def push_own_slice(gathered_ptr, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                mine = tl.load(gathered_ptr + rank * BLOCK + offs)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(gathered_ptr, peer) + rank * BLOCK + offs, mine)
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            syncs = sorted((dist.index.order(c), c) for name in _SYNC for c in dist.calls_to(name))
            if not syncs:
                continue
            written = _remote_writes(dist)
            guarded = _guarded_by_wait(dist)
            for load in dist.calls_to("tl.load"):
                pointer = call_argument(load, 0, "pointer")
                if pointer is None or dist.is_mapped_pointer(pointer) or dist.derives_from_call(
                        pointer, {CONSUME_TOKEN}):
                    continue
                root = dist.pointer_root(pointer)
                if root is None:
                    continue
                found = _publisher_after(dist, load, root, written, guarded, syncs)
                if found is not None:
                    sync = (dist.qualname_of(found) or "").replace("shmem.", "")
                    line = self.context.locator.span(found)[0].row
                    self.report(load, self.message.format(buffer=root, sync=f"`{sync}`", line=line))


def _remote_writes(dist: DistAnalysis) -> dict[str, list[int]]:
    """Buffer root -> source positions of the kernel's writes into the peers' copies of it."""
    found: dict[str, list[int]] = {}
    for call in dist.calls_to("tl.store"):
        pointer = call_argument(call, 0, "pointer")
        if pointer is not None and dist.is_mapped_pointer(pointer):
            root = dist.pointer_root(pointer)
            if root is not None:
                found.setdefault(root, []).append(dist.index.order(call))
    for name in PUT_CALLS:
        for call in dist.calls_to(name):
            dest = call_argument(call, 0, "dest", "dst", "dest_ptr")
            root = dist.pointer_root(dest) if dest is not None else None
            if root is not None:
                found.setdefault(root, []).append(dist.index.order(call))
    return found


def _guarded_by_wait(dist: DistAnalysis) -> dict[str, list[cst.Call]]:
    """Buffer root -> the waits whose token is consumed on a pointer into it."""
    found: dict[str, list[cst.Call]] = {}
    waits = [w for name in SIGNAL_WAITS for w in dist.calls_to(name)]
    for consume in dist.calls_to(CONSUME_TOKEN):
        value, token = call_argument(consume, 0, "value"), call_argument(consume, 1, "token")
        root = dist.pointer_root(value) if value is not None else None
        if root is None or token is None:
            continue
        token_names = dist.names_feeding(token)
        for wait in waits:
            statement = statement_of(dist, wait)
            targets = {n.value for n in dist.below(statement) if type(n) is cst.Name}
            if type(statement) is cst.SimpleStatementLine and token_names & targets:
                found.setdefault(root, []).append(wait)
    return found


def _publisher_after(dist: DistAnalysis, load: cst.Call, root: str, written, guarded, syncs):
    """The wait or barrier after ``load`` that publishes ``root``, when ``load`` comes too early; else None."""
    at = dist.index.order(load)
    for wait in guarded.get(root, ()):
        if dist.index.order(wait) > at and not dist.enclosing_loops(wait):
            return wait
    writes = [w for w in written.get(root, ()) if w < at]
    if not writes:
        return None
    last_write = max(writes)
    if any(last_write < order < at for order, _ in syncs):
        return None
    if dist.enclosing_loops(load) and any(order < at for order, _ in syncs):
        return None  # inside a loop an earlier iteration's sync may order it; not judged
    later = [call for order, call in syncs if order > at and dist.qualname_of(call) in BARRIERS]
    return later[0] if later else None
