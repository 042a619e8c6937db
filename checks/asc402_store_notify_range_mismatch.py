import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import (
    BARRIERS,
    MAPPING_CALLS,
    PUT_CALLS,
    SIGNAL_WAITS,
    SIGNAL_WRITES,
    call_argument,
    signal_argument,
    signal_is_zero_set,
    udma_argument,
)
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.signal_protocol import wait_slot, waits_for_zero
from ascendlint.rule import Invalid, Rule, Valid

_STORES = frozenset({"tl.store"}) | PUT_CALLS


class StoreNotifyRangeMismatch(Rule):
    """Flags a notify loop whose range differs from the store loop right before it that it publishes."""

    decides = """
    The loops are paired when their variables play the same part (the peer rank, or the slot written and
    signalled). `range` and `tl.range` with the same start, stop and step match; a `barrier_all()` between the
    loops ends the pairing. A loop of credit returns (`dl.notify(slot, rank, 0)`) is paired the same way with the
    earlier loop that waits on those slots: every slot waited on must be handed back.
    """

    code = "ASC402"
    name = "store-notify-range-mismatch"
    message = "notify loop iterates `{notify}` but the store loop it publishes iterates `{store}`"
    credit_message = "credit-return loop iterates `{notify}` but the loop that waits on those slots iterates `{store}`"
    severity = Severity.ERROR
    fix_safety = FixSafety.UNSAFE
    why = """
        Each signal tells a consumer that its slot has been written. When the notify loop covers a different
        space than the store loop, some written slots are never signalled (their consumers spin forever) or some
        signals announce slots that were never written (consumers read garbage).
    """
    fix_notes = """
        The fix copies the store loop's range into the notify loop. It is unsafe: when the store loop is the
        wrong one, the fix makes the signals match the wrong space.
    """
    INVALID = [
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
                for peer in range(1, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(1, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(1, n_ranks):
                    dl.notify(signal_ptr, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def publish_slots(buf_ptr, signal_ptr, x_ptr, peer, n_slots, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                for slot in tl.range(0, n_slots, 2):
                    tl.store(remote + slot * BLOCK + offs, tl.load(x_ptr + slot * BLOCK + offs))
                shmem.fence()
                for slot in range(0, n_slots):
                    dl.notify(signal_ptr + slot, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def publish_slots(buf_ptr, signal_ptr, x_ptr, peer, n_slots, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                for slot in tl.range(0, n_slots, 2):
                    tl.store(remote + slot * BLOCK + offs, tl.load(x_ptr + slot * BLOCK + offs))
                shmem.fence()
                for slot in tl.range(0, n_slots, 2):
                    dl.notify(signal_ptr + slot, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def scatter(buf_ptr, signal_ptr, x_ptr, n_ranks, nbytes):
                for pe in range(n_ranks - 1):
                    libshmem_device.putmem(buf_ptr, x_ptr + pe * nbytes, nbytes, pe)
                for pe in range(
                    n_ranks,
                ):
                    dl.notify(signal_ptr, pe)
            """,
            fixed="""
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def scatter(buf_ptr, signal_ptr, x_ptr, n_ranks, nbytes):
                for pe in range(n_ranks - 1):
                    libshmem_device.putmem(buf_ptr, x_ptr + pe * nbytes, nbytes, pe)
                for pe in range(n_ranks - 1):
                    dl.notify(signal_ptr, pe)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def reducer(inbox_ptr, signal_ptr, out_ptr, n_tiles, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    slots = signal_ptr + (tile % 2) * n_ranks * 8
                    total = tl.zeros((BLOCK,), dtype=tl.float32)
                    for src in range(n_ranks):
                        token = dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=tile + 1)
                        total += tl.load(dl.consume_token(inbox_ptr + src * BLOCK, token) + offs)
                    tl.store(out_ptr + tile * BLOCK + offs, total)
                    for src in range(1, n_ranks):
                        dl.notify(slots + src * 8, rank, 0)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def reducer(inbox_ptr, signal_ptr, out_ptr, n_tiles, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    slots = signal_ptr + (tile % 2) * n_ranks * 8
                    total = tl.zeros((BLOCK,), dtype=tl.float32)
                    for src in range(n_ranks):
                        token = dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=tile + 1)
                        total += tl.load(dl.consume_token(inbox_ptr + src * BLOCK, token) + offs)
                    tl.store(out_ptr + tile * BLOCK + offs, total)
                    for src in range(n_ranks):
                        dl.notify(slots + src * 8, rank, 0)
            """,
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
                for peer in range(1, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer)

            @triton.jit
            def broadcast_shmem(buf_ptr, sig_ptr, x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(1, libshmem_device.n_pes()):
                    tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(libshmem_device.n_pes()):
                    libshmem_device.signal_op(sig_ptr, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
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
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(1, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(1, n_ranks):
                    dl.notify(signal_ptr, peer)

            @triton.jit
            def broadcast_shmem(buf_ptr, sig_ptr, x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(1, libshmem_device.n_pes()):
                    tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(1, libshmem_device.n_pes()):
                    libshmem_device.signal_op(sig_ptr, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
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
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(1, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                libshmem_device.fence()
                for peer in range(1, n_ranks):
                    dl.notify(signal_ptr, peer)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish_slots(buf_ptr, signal_ptr, x_ptr, peer, n_slots, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                for slot in tl.range(0, n_slots, 1):
                    tl.store(remote + slot * BLOCK + offs, tl.load(x_ptr + slot * BLOCK + offs))
                libshmem_device.fence()
                for slot in range(n_slots):
                    dl.notify(signal_ptr + slot, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def two_phase(buf_ptr, signal_ptr, x_ptr, rank, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for peer in range(rank, n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.barrier_all()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def chunked(buf_ptr, signal_ptr, x_ptr, peer, n_ranks, K, CHUNK: tl.constexpr):
                remote = dl.symm_at(buf_ptr, peer)
                for k in range(0, K, CHUNK):
                    offs = k + tl.arange(0, CHUNK)
                    tl.store(remote + offs, tl.load(x_ptr + offs), mask=offs < K)
                libshmem_device.fence()
                for other in range(n_ranks):
                    dl.notify(signal_ptr, other)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def nested(buf_ptr, signal_ptr, x_ptr, n_ranks, n_steps, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for step in range(n_steps):
                    for peer in range(n_ranks):
                        for half in range(2):
                            tl.store(dl.symm_at(buf_ptr, peer) + half * BLOCK + offs, tl.load(x_ptr + offs))
                    libshmem_device.fence()
                    for peer in tl.range(0, n_ranks, 1):
                        dl.notify(signal_ptr + step, peer)
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            if not dist.has_call(*SIGNAL_WRITES):
                continue
            for loop in dist.nodes:
                if not (type(loop) is cst.For and _is_notify_loop(dist, loop)):
                    continue
                if _is_credit_loop(dist, loop):
                    wait_loop = _wait_loop_before(dist, loop)
                    if wait_loop is not None:
                        self._compare(dist, wait_loop, loop, _wait_roles, self.credit_message)
                    continue
                store_loop = _store_loop_before(dist, loop)
                if store_loop is not None:
                    self._compare(dist, store_loop, loop, _store_roles, self.message)

    def _compare(self, dist: DistAnalysis, store_loop: cst.For, notify_loop: cst.For, roles_of_call,
                 message: str) -> None:
        store_space, notify_space = _space(dist, store_loop.iter), _space(dist, notify_loop.iter)
        if store_space is None or notify_space is None or store_space == notify_space:
            return
        if not _roles(dist, store_loop, roles_of_call) & _roles(dist, notify_loop, _notify_roles):
            return
        module = self.context.module
        store_text, notify_text = module.code_for_node(store_loop.iter), module.code_for_node(notify_loop.iter)
        self.report(
            notify_loop,
            message.format(notify=_one_line(notify_text), store=_one_line(store_text)),
            fix_message=f"Iterate the notify loop over `{_one_line(store_text)}`",
            edits=lambda loc: [edits.replace(loc, notify_loop.iter, store_loop.iter)],
        )


def _is_notify_loop(dist: DistAnalysis, loop: cst.For) -> bool:
    return any(dist.calls_in(loop, SIGNAL_WRITES)) and not any(dist.calls_in(loop, _STORES))


def _is_credit_loop(dist: DistAnalysis, loop: cst.For) -> bool:
    notifies = list(dist.calls_in(loop, SIGNAL_WRITES))
    return bool(notifies) and all(signal_is_zero_set(n, dist.qualname_of(n)) for n in notifies)


def _wait_loop_before(dist: DistAnalysis, credit_loop: cst.For) -> cst.For | None:
    """The closest earlier sibling loop that waits on the slots this loop hands back (a barrier ends the search)."""
    block = dist.index.parent(credit_loop)
    if type(block) is not cst.IndentedBlock:
        return None
    roots = {dist.pointer_root(signal_argument(n, dist.qualname_of(n), "slot"))
             for n in dist.calls_in(credit_loop, SIGNAL_WRITES)}
    statements = list(block.body)
    for statement in reversed(statements[: statements.index(credit_loop)]):
        if any(dist.calls_in(statement, BARRIERS)):
            return None
        waits = [w for w in dist.calls_in(statement, SIGNAL_WAITS)
                 if not waits_for_zero(w, dist.qualname_of(w))]
        if waits and type(statement) is cst.For and any(
            dist.pointer_root(wait_slot(w, dist.qualname_of(w))) in roots for w in waits
        ):
            return statement
    return None


def _wait_roles(dist: DistAnalysis, call: cst.Call):
    name = dist.qualname_of(call)
    if name not in SIGNAL_WAITS:
        return []
    return [("slot", wait_slot(call, name))]


def _store_loop_before(dist: DistAnalysis, notify_loop: cst.For) -> cst.For | None:
    """The closest earlier sibling loop that stores, unless a barrier, a notify or a bare store comes first."""
    block = dist.index.parent(notify_loop)
    if type(block) is not cst.IndentedBlock:
        return None
    statements = list(block.body)
    for statement in reversed(statements[: statements.index(notify_loop)]):
        if any(dist.calls_in(statement, BARRIERS | SIGNAL_WRITES)):
            return None
        if any(dist.calls_in(statement, _STORES)):
            return statement if type(statement) is cst.For else None
    return None


def _space(dist: DistAnalysis, iterable: cst.BaseExpression) -> tuple[str, str, str] | None:
    """(start, stop, step) source text of `range(...)` / `tl.range(...)`, or None for other iterables."""
    if not dist.is_range(iterable):
        return None
    positional = [a.value for a in iterable.args if a.keyword is None and not a.star]
    if not 1 <= len(positional) <= 3 or len(positional) != len([a for a in iterable.args if not a.keyword]):
        return None
    code = dist.facts.module.code_for_node
    texts = ["".join(code(p).split()) for p in positional]
    if len(texts) == 1:
        return ("0", texts[0], "1")
    return (texts[0], texts[1], texts[2] if len(texts) == 3 else "1")


def _roles(dist: DistAnalysis, loop: cst.For, roles_of_call) -> set[str]:
    """What the loop variable selects in the loop's communication calls: the peer ("rank") or the slot ("slot")."""
    if type(loop.target) is not cst.Name:
        return set()
    variable = {loop.target.value}
    found: set[str] = set()
    for call in dist.calls_in(loop, _STORES | MAPPING_CALLS | SIGNAL_WRITES | SIGNAL_WAITS):
        for role, expr in roles_of_call(dist, call):
            if expr is not None and dist.depends_on(expr, variable):
                found.add(role)
    return found


def _store_roles(dist: DistAnalysis, call: cst.Call):
    name = dist.qualname_of(call)
    if name in MAPPING_CALLS:
        return [("rank", call_argument(call, 1, "rank", "pe"))]
    if name in PUT_CALLS:
        return [("rank", udma_argument(call, name, "pe")), ("slot", call_argument(call, 0, "dest"))]
    if name == "tl.store":
        return [("slot", call_argument(call, 0, "pointer"))]
    return []


def _notify_roles(dist: DistAnalysis, call: cst.Call):
    name = dist.qualname_of(call)
    if name not in SIGNAL_WRITES:
        return []
    return [("slot", signal_argument(call, name, "slot")),
            ("rank", signal_argument(call, name, "pe"))]


def _one_line(text: str) -> str:
    return " ".join(text.split()).replace("( ", "(").replace(", )", ")").replace(",)", ")")
