import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels, for_kernel
from ascendlint.analysis.distributed_calls import CONSUME_TOKEN, MAPPING_CALLS, PUT_CALLS, SIGNAL_WRITES, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import symmetric_params
from ascendlint.analysis.signal_protocol import credit_return_slot, statement_of
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid

_PUBLISHING = frozenset({"tl.store"}) | PUT_CALLS


class NotifyBeforePublish(Rule):
    """Flags a producer's `dl.notify(slot, peer, v)` (v not 0) that comes before the store or `putmem` of the data
    it announces."""

    decides = """
    The data is a store into symmetric memory (a pointer mapped by `dl.symm_at` / `remote_ptr`, a `putmem`, or a
    buffer the kernel also hands to one of those), or a `triton.jit` helper called on such a pointer, placed after
    the notify in the same loop body, or in the loop that follows a loop of notifies. A credit return
    (`notify(slot, rank, 0)`) announces no data and is not checked. A store into a plain output whose offsets come
    from values read after a wait writes no guarded buffer and announces nothing.
    """

    code = "ASC409"
    name = "notify-before-publish"
    message = (
        "`{call}` announces data that is only written later, by the {what} on line {line}: the consumer may "
        "read first"
    )
    severity = Severity.ERROR
    why = """
        A consumer starts reading as soon as its `dl.wait` sees the signal. When the producer notifies before it
        stores (or `putmem`s) the data, nothing stops the consumer from reading the buffer in between, and it
        computes with the previous round's data or with garbage. The order is store, then `fence()`, then notify;
        a synchronous `putmem` has landed when it returns, so its notify may follow at once.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, signal_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    dl.notify(signal_ptr + row * 8, peer, signal=1, sig_op="set")
                    tl.store(dl.symm_at(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def scatter(buf_ptr, signal_ptr, x_ptr, n_ranks, nbytes):
                rank = dl.rank()
                for pe in range(n_ranks):
                    if pe != rank:
                        dl.notify(signal_ptr + rank * 8, pe, signal=1)
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer, signal=1)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def copy_tile(dst, src, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dst + offs, tl.load(src + offs))

            @triton.jit
            def ring(buf_ptr, signal_ptr, x_ptr, n_steps, peer, BLOCK: tl.constexpr):
                for step in range(n_steps):
                    dl.notify(signal_ptr + step * 8, peer, signal=step + 1)
                    copy_tile(dl.symm_at(buf_ptr, peer) + step * BLOCK, x_ptr + step * BLOCK, BLOCK)
                    libshmem_device.fence()
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, signal_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    dl.notify(signal_ptr + row * 8, peer, signal=1, sig_op="set")
                    tl.store(dl.symm_at(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()

            @triton.jit
            def push_rows_shmem(buf_ptr, sig_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    libshmem_device.signal_op(sig_ptr + row * 16, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
                    tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()
            """,
            count=2,
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
            def exchange_counts(count_ptr, arrived_ptr, out_ptr, n_ranks, rank, D: tl.constexpr):
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(count_ptr, peer) + rank, peer + 1)
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(arrived_ptr, peer, signal=1, sig_op="add")
                token = dl.wait(arrived_ptr, 1, "gpu", "acquire", waitValue=n_ranks)
                counts = dl.consume_token(count_ptr, token)
                written = 0
                for src in range(n_ranks):
                    n = tl.load(counts + src)
                    offs = tl.arange(0, D)
                    tl.store(out_ptr + written + offs, tl.full((D,), src, tl.int32), mask=offs < n)
                    written += n
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, signal_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    tl.store(dl.symm_at(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + row * 8, peer, signal=1, sig_op="set")

            @triton.jit
            def push_rows_shmem(buf_ptr, sig_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()
                    libshmem_device.signal_op(sig_ptr + row * 16, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, signal_ptr, x_ptr, n_rows, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for row in range(n_rows):
                    tl.store(dl.symm_at(buf_ptr, peer) + row * BLOCK + offs, tl.load(x_ptr + row * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + row * 8, peer, signal=1, sig_op="set")
            """,
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def scatter(buf_ptr, signal_ptr, x_ptr, n_ranks, nbytes):
                rank = dl.rank()
                for pe in range(n_ranks):
                    if pe != rank:
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
                        dl.notify(signal_ptr + rank * 8, pe, signal=1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % 2) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % 2) * BLOCK, token) + offs)
                    dl.notify(slot, rank, signal=0, sig_op="set")
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def step_then_report(buf_ptr, signal_ptr, x_ptr, out_ptr, n_steps, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for step in range(n_steps):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + step * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr, peer, signal=step + 1)
                    tl.store(out_ptr + step * BLOCK + offs, tl.load(x_ptr + step * BLOCK + offs) * 2)
            """
        ),
    ]

    def finish(self) -> None:
        storing_helpers = None  # computed once per module, for the first kernel that notifies
        for dist in distributed_kernels(self.context):
            if not dist.has_call(*SIGNAL_WRITES):
                continue
            symmetric = symmetric_params(dist)
            if storing_helpers is None:
                storing_helpers = _storing_helpers(self.context)
            for notify in dist.calls_to(*sorted(SIGNAL_WRITES)):
                if credit_return_slot(dist, notify) is not None:
                    continue
                later = _first_later_publish(dist, notify, symmetric, storing_helpers)
                if later is not None:
                    line = self.context.locator.span(later)[0].row
                    call = (dist.qualname_of(notify) or "").replace("shmem.", "")
                    self.report(notify, self.message.format(call=call, what=_describe(dist, later), line=line))


def _storing_helpers(context) -> dict[str, set[int]]:
    """Local `triton.jit` helpers that store, each with the positions of the parameters it stores through
    (directly or by handing them to a helper that does); an empty set when only its own pointers are written."""
    analyses = {name: for_kernel(context, kernel) for name, kernel in context.facts.kernels.items()}
    callers: dict[str, list[str]] = {}  # helper -> the local jit functions calling it
    for name, dist in analyses.items():
        for called in dist.calls:
            if called.startswith("local."):
                callers.setdefault(called[len("local."):], []).append(name)
    pending = [name for name, dist in analyses.items() if dist.has_call("tl.store", *PUT_CALLS)]
    storing = {name: _stored_params(analyses[name], {}) for name in pending}
    while pending:  # a caller of a storing helper stores: a function is expanded again when it gains parameters
        for caller in callers.get(pending.pop(), ()):
            params = _stored_params(analyses[caller], storing)
            if caller not in storing or params - storing[caller]:
                storing[caller] = storing.get(caller, set()) | params
                pending.append(caller)
    return storing


def _stored_params(dist: DistAnalysis, storing: dict[str, set[int]]) -> set[int]:
    """Positions of ``dist``'s parameters that it stores or puts through, or passes on to a helper that does."""
    params = dist.kernel.params
    found: set[int] = set()
    for call in dist.nodes:
        if type(call) is not cst.Call:
            continue
        name = dist.qualname_of(call) or ""
        if name == "tl.store" or name in PUT_CALLS:
            pointers = [call_argument(call, 0, "pointer", "dest", "dst")]
        elif name.startswith("local.") and name[len("local."):] in storing:
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            pointers = [positional[i] for i in storing[name[len("local."):]] if i < len(positional)]
        else:
            continue
        for pointer in pointers:
            root = dist.pointer_root(pointer) if pointer is not None else None
            if root in params:
                found.add(params.index(root))
    return found


def _first_later_publish(dist: DistAnalysis, notify: cst.Call, symmetric: set[str], helpers: dict):
    """The first store/putmem/storing helper call after ``notify`` in its loop body that writes symmetric data."""
    statement = statement_of(dist, notify)
    block = dist.index.parent(statement)
    owner = dist.index.parent(block) if type(block) is cst.IndentedBlock else None
    # a loop that only notifies: look at what follows the loop
    if type(owner) is cst.For and not _publishes_in(dist, owner, symmetric, helpers):
        statement = owner
        block = dist.index.parent(owner)
    if type(block) is not cst.IndentedBlock:
        return None
    statements = list(block.body)
    for following in statements[statements.index(statement) + 1:]:
        found = _publishes_in(dist, following, symmetric, helpers)
        if found is not None:
            return found
    # the same statement may hold the notify and a later publish (an `if` branch holding both)
    return _publish_after_in(dist, notify, statement, symmetric, helpers)


def _publish_after_in(dist, notify, statement, symmetric, helpers):
    position = dist.index.order(notify)
    for call in _publishing_calls(dist, statement, helpers):
        if dist.index.order(call) > position and _writes_symmetric(dist, call, symmetric, helpers):
            return call
    return None


def _publishes_in(dist: DistAnalysis, node: cst.CSTNode, symmetric: set[str], helpers: dict):
    for call in _publishing_calls(dist, node, helpers):
        if _writes_symmetric(dist, call, symmetric, helpers):
            return call
    return None


def _publishing_calls(dist: DistAnalysis, node: cst.CSTNode, helpers):
    names = _PUBLISHING | {f"local.{h}" for h in helpers}
    nodes = (node, *dist.below(node)) if type(node) is cst.Call else dist.below(node)
    for child in nodes:
        if type(child) is cst.Call and dist.qualname_of(child) in names:
            yield child


def _writes_symmetric(dist: DistAnalysis, call: cst.Call, symmetric: set[str], helpers: dict) -> bool:
    name = dist.qualname_of(call)
    if name in PUT_CALLS:
        return True
    if name == "tl.store":
        pointers, stored = [call_argument(call, 0, "pointer")], True
    else:  # a helper: the arguments it stores through, when they are known
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        written = helpers.get(name[len("local."):])
        stored = bool(written)
        pointers = [positional[i] for i in sorted(written)] if written else [a.value for a in call.args]
    for pointer in pointers:
        if pointer is None:
            continue
        if dist.is_mapped_pointer(pointer) or any(
            type(n) is cst.Call and dist.qualname_of(n) in MAPPING_CALLS for n in (pointer, *dist.below(pointer))
        ):
            return True
        if stored and (dist.pointer_root(pointer) in symmetric or _consumed(dist, pointer)):
            return True
    return False


def _consumed(dist: DistAnalysis, pointer: cst.BaseExpression) -> bool:
    """The pointer's buffer is ordered after a wait (``dl.consume_token(ptr, token)``, directly or through
    names): it addresses a buffer that a signal guards, so writing it publishes data. A consumed value that only
    feeds the offsets (counts read after the wait, placing rows in a plain local output) guards nothing."""
    root = dist.pointer_root(pointer)
    for source in dist._expressions_reaching(pointer):
        for node in (source, *dist.below(source)):
            if type(node) is cst.Call and dist.qualname_of(node) == CONSUME_TOKEN:
                value = call_argument(node, 0, "value")
                if value is not None and dist.pointer_root(value) == root:
                    return True
    return False


def _describe(dist: DistAnalysis, call: cst.Call) -> str:
    name = dist.qualname_of(call) or ""
    if name.startswith("local."):
        return f"call of `{name[len('local.'):]}`"
    return f"`{name.replace('shmem.', '')}`"

