import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.distributed import distributed_kernels, for_kernel
from ascendlint.analysis.distributed_calls import (
    FENCE,
    FUSED_PUTS,
    NONBLOCKING_PUTS,
    NOTIFY,
    PUT_CALLS,
    QUIET,
    SIGNAL_OP,
    SIGNAL_WRITES,
    signal_argument,
)
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import is_rank_identity
from ascendlint.analysis.signal_protocol import credits_returned_early
from ascendlint.analysis.module_facts import normalise
from ascendlint.rule import Invalid, Rule, Valid

# What some path has pending where a signal is written, as bits (paths join by `|`): an MTE store not yet ordered
# by a fence, a blocking `putmem` (its data is complete for `dl.notify`, not for `signal_op`), a non-blocking put.
CLEAN, STORE, PUT, PUT_NBI = 0, 1, 2, 4
_STORES = frozenset({"tl.store"})
# Which pending work each signal write is not ordered after.
_UNORDERED = {NOTIFY: STORE | PUT_NBI, SIGNAL_OP: STORE | PUT | PUT_NBI}
_UNORDERED.update({name: PUT | PUT_NBI for name in FUSED_PUTS})
_PUT_MESSAGE = (
    "`{call}` after a `{put}` with no `{quiet}()` in between: a fence does not order the put before a separate "
    "signal, the peer may see the signal first"
)
_DEVICE_MODULE = "libshmem_device"


class NotifyWithoutFence(Rule):
    """Flags a signal that can reach the peer before the data it announces: a `tl.store` with no `fence()` before a
    `dl.notify` / `signal_op`, or a `putmem` with no `quiet()` before a `signal_op`."""

    decides = """
    Reported: a signal write (`dl.notify`, `libshmem_device.signal_op`) reached by a `tl.store` with no
    `libshmem_device.fence()` in between on some path, and a `signal_op` (or a fused `putmem_signal`) reached by a
    `putmem` / `putmem_nbi` with no `quiet()` in between.

    A synchronous `libshmem_device.putmem` orders what came before it for a `dl.notify` (the catalog's
    exemption); `barrier_all()` orders nothing here. `quiet()` completes every pending store and put. Stores and
    puts in `triton.jit` helpers count where the helper is called. Branches of a constexpr `if` never meet: a
    store under `if not FLAG:` does not reach a notify under `if FLAG:`, not even in the next loop iteration.

    A `putmem` is another matter. The device library makes `putmem`, `fence`, `quiet` and `signal_op`
    separate calls (`aclshmem_<type>_putmem`, `aclshmem_fence`, `aclshmem_quiet`, `aclshmemx_signal_op`) and
    states nothing about how a fence orders a put against a later separate signal; the performance guide
    says `putmem` returns once the data has arrived, so a `dl.notify` after it needs no fence. Real MoE
    kernels on this backend report the opposite for `signal_op`: with `putmem -> fence -> signal_op` the SET
    reached the peer before the payload (the signal rides another channel than the put stream), and the
    authors fixed it by one of the orderings below. This rule therefore reads:

    - safe: `tl.store` through the mapped address (`remote_ptr` / `dl.symm_at`) -> `fence()` -> signal;
    - safe: one `putmem_signal` / `putmem_signal_nbi`, the signal carried by the same request as its data
      (earlier `putmem_nbi` chunks of the same payload drained by `quiet()` before it);
    - safe: `putmem` / `putmem_nbi` -> `quiet()` -> signal (`quiet()` completes every pending put);
    - safe, by the catalog and the guide: blocking `putmem` -> `dl.notify`;
    - unsafe, reported: `putmem` (or `putmem_nbi`) -> `fence()` (or nothing) -> `signal_op`, and
      `putmem_nbi` -> signal of any kind with no `quiet()` in between.
    """

    code = "ASC403"
    name = "notify-without-fence"
    message = "`{call}` after a store with no `{fence}()` in between: the peer may see the signal first"
    severity = Severity.ERROR
    fix_safety = FixSafety.SAFE
    why = """
        Stores issued on the MTE path are not ordered with a signal write (`dl.notify`, `signal_op`): the peer
        can observe the signal before the data lands and read a stale buffer. `libshmem_device.fence()` orders
        the earlier stores before the signal (store -> fence -> signal).
    """
    fix_notes = """
        Only the store case has a fix; after a `putmem` the message names the missing `quiet()`, to be placed
        (or the put and its signal fused into one `putmem_signal_nbi`) by hand. The fix inserts the device fence on its own line before the notify, or before the loop that only
        notifies, spelled with the module's own name for `triton_dist.language.extra.libshmem_device` (`fence()`
        when `fence` itself is imported). The host-side package (`import shmem as ash`, which allocates symmetric
        memory) is not that module and has no device fence: when the file does not import `libshmem_device`,
        the fix adds `from triton_dist.language.extra import libshmem_device` after the last top-level import.
        A name imported only inside a function, or bound to something else anywhere in the module, is not used:
        the kernel would raise `NameError` or call the wrong object. When the file already binds the name
        `libshmem_device` to something else, the fix is only shown, and so it is when a store on the notify's own
        line runs before it (`dl.notify(sig, tl.store(...))`), which no fence before the line can order.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                tl.store(remote + offs, tl.load(x_ptr + offs))
                dl.notify(signal_ptr, peer, signal=1, sig_op="set")
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                tl.store(remote + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer, signal=1, sig_op="set")
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                shmem.barrier_all()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def broadcast(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tile = tl.load(x_ptr + offs)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tile)
                shmem.barrier_all()
                shmem.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr, peer)
            """,
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
            def ring(buf_ptr, signal_ptr, x_ptr, peer, n_steps, fast, BLOCK: tl.constexpr):
                for step in range(n_steps):
                    if fast:
                        libshmem_device.putmem(buf_ptr, x_ptr, BLOCK * 4, peer)
                    else:
                        copy_tile(dl.symm_at(buf_ptr, peer), x_ptr, BLOCK)
                    dl.notify(signal_ptr + step, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def copy_tile(dst, src, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dst + offs, tl.load(src + offs))

            @triton.jit
            def ring(buf_ptr, signal_ptr, x_ptr, peer, n_steps, fast, BLOCK: tl.constexpr):
                for step in range(n_steps):
                    if fast:
                        libshmem_device.putmem(buf_ptr, x_ptr, BLOCK * 4, peer)
                    else:
                        copy_tile(dl.symm_at(buf_ptr, peer), x_ptr, BLOCK)
                    libshmem_device.fence()
                    dl.notify(signal_ptr + step, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                dl.notify(signal_ptr, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language import notify, symm_at
            from triton_dist.language.extra.libshmem_device import fence

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                if peer >= 0:
                    tl.store(symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                notify(signal_ptr, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            from triton_dist.language import notify, symm_at
            from triton_dist.language.extra.libshmem_device import fence

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                if peer >= 0:
                    tl.store(symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                fence()
                notify(signal_ptr, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def maybe_push(out_ptr, signal_ptr, x_ptr, n_tiles, peer, PUSH: tl.constexpr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for t in range(n_tiles):
                    if PUSH:
                        tl.store(dl.symm_at(out_ptr, peer) + t * BLOCK + offs, tl.load(x_ptr + t * BLOCK + offs))
                    dl.notify(signal_ptr + t, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def maybe_push(out_ptr, signal_ptr, x_ptr, n_tiles, peer, PUSH: tl.constexpr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for t in range(n_tiles):
                    if PUSH:
                        tl.store(dl.symm_at(out_ptr, peer) + t * BLOCK + offs, tl.load(x_ptr + t * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + t, peer)
            """,
        ),
        Invalid(
            """
            import shmem as ash
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                dl.notify(signal_ptr, peer)

            def symmetric_buffer(n, dtype):
                return ash.aclshmem_create_tensor([n], dtype=dtype, device_id=0)
            """,
            fixed="""
            import shmem as ash
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer)

            def symmetric_buffer(n, dtype):
                return ash.aclshmem_create_tensor([n], dtype=dtype, device_id=0)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                tl.store(remote + offs, tl.load(x_ptr + offs))
                dl.notify(signal_ptr, peer, signal=1, sig_op="set")

            @triton.jit
            def publish_shmem(buf_ptr, sig_ptr, x_ptr, nbytes, peer, epoch):
                # putmem, then fence, then a separate signal: the fence does not order the put before the signal
                libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
                libshmem_device.fence()
                libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
            """,
            count=2,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            def device_module():
                from triton_dist.language.extra import libshmem_device
                return libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                dl.notify(signal_ptr, peer)
            """,
            fixed="""
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            def device_module():
                from triton_dist.language.extra import libshmem_device
                return libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer)
            """,
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
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                tl.store(remote + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer, signal=1, sig_op="set")

            @triton.jit
            def publish_shmem(buf_ptr, sig_ptr, x_ptr, nbytes, peer, epoch):
                # one request carries the data and its signal, issued by one program
                if tl.program_id(0) == 0:
                    libshmem_device.putmem_signal_nbi(buf_ptr, x_ptr, nbytes, sig_ptr, epoch,
                                                      libshmem_device.ACLSHMEM_SIGNAL_SET, peer)

            @triton.jit
            def publish_stores_shmem(buf_ptr, sig_ptr, x_ptr, peer, epoch, BLOCK: tl.constexpr):
                # MTE stores through the mapped address, fence, then the signal
                offs = tl.arange(0, BLOCK)
                tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
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
            def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                remote = dl.symm_at(buf_ptr, peer)
                tl.store(remote + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer, signal=1, sig_op="set")
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, n_ranks, BLOCK: tl.constexpr):
                for peer in range(n_ranks):
                    libshmem_device.putmem(buf_ptr, x_ptr, BLOCK * 4, peer)
                    dl.notify(signal_ptr, peer, signal=1, sig_op="set")
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language import notify, symm_at
            from triton_dist.language.extra.libshmem_device import fence

            @triton.jit
            def copy_tile(dst, src, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(dst + offs, tl.load(src + offs))

            @triton.jit
            def ring(buf_ptr, signal_ptr, x_ptr, n_ranks, n_steps, BLOCK: tl.constexpr):
                for step in range(n_steps):
                    for peer in range(n_ranks):
                        copy_tile(symm_at(buf_ptr, peer), x_ptr, BLOCK)
                    fence()
                    for peer in range(n_ranks):
                        notify(
                            signal_ptr + step,
                            peer,
                        )
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish(buf_ptr, signal_ptr, x_ptr, peer, use_copy, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                if use_copy:
                    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                    libshmem_device.fence()
                else:
                    libshmem_device.putmem(buf_ptr, x_ptr, BLOCK * 4, peer)
                dl.notify(signal_ptr, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def announce(signal_ptr, n_ranks):
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
            def scatter_tiles(out_ptr, signal_ptr, x_ptr, n_tiles, peer, ATOMIC: tl.constexpr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for t in range(n_tiles):
                    tile = tl.load(x_ptr + t * BLOCK + offs)
                    if ATOMIC:
                        tl.atomic_add(dl.symm_at(out_ptr, peer) + t * BLOCK + offs, tile, sem="release")
                        dl.notify(signal_ptr + t, peer)
                    else:
                        tl.store(dl.symm_at(out_ptr, peer) + t * BLOCK + offs, tile)
                if not ATOMIC:
                    libshmem_device.fence()
                    for t in range(n_tiles):
                        dl.notify(signal_ptr + t, peer)
            """
        ),
    ]

    def finish(self) -> None:
        helper_effects: dict = {}
        for dist in distributed_kernels(self.context):
            if not dist.has_call(*_UNORDERED):
                continue
            unfenced: dict[int, int] = {}
            for choices in _constexpr_choices(self.context.analysis(dist.kernel), dist):
                order = _FenceOrder(self.context, dist, helper_effects, choices)
                order.run(dist.kernel.node.body, CLEAN)
                for key, pending in order.unfenced.items():
                    unfenced[key] = unfenced.get(key, CLEAN) | pending
            for signal in dist.calls_to(*sorted(_UNORDERED)):
                pending = unfenced.get(id(signal), CLEAN)
                if pending & STORE and dist.qualname_of(signal) in SIGNAL_WRITES:
                    self._report(dist, signal)
                elif pending & (PUT | PUT_NBI) and not _signals_own_rank(dist, signal):
                    self._report_put(dist, signal, pending)

    def _report_put(self, dist: DistAnalysis, signal: cst.Call, pending: int) -> None:
        quiet = _device_spelling(self.context.facts, "quiet") or f"{_DEVICE_MODULE}.quiet"
        put = "putmem_nbi" if pending & PUT_NBI else "putmem"
        call = (dist.qualname_of(signal) or "").replace("shmem.", "")
        self.report(signal, _PUT_MESSAGE.format(call=call, put=put, quiet=quiet))

    def _report(self, dist: DistAnalysis, notify: cst.Call) -> None:
        fence, imported = _fence_spelling(self.context.facts)
        module = self.context.module
        if fence is not None and not _bound_only_by_top_level_imports(self.context, fence.split(".")[0]):
            # the name is imported inside a function only (NameError in the kernel) or is rebound somewhere:
            # fall back to the module's own top-level import, when that name is free
            fence, imported = f"{_DEVICE_MODULE}.fence", False
            if _bound_anywhere(self.context, _DEVICE_MODULE, imports_of_the_module_too=False):
                fence = None
        anchor = _insertion_statement(dist, notify)
        if anchor is not None and _store_first_in_statement(dist, anchor, notify):
            anchor = None  # a fence before the line cannot order a store evaluated inside it before the notify
        message = self.message.format(fence=fence or f"{_DEVICE_MODULE}.fence",
                                      call=(dist.qualname_of(notify) or "").replace("shmem.", ""))
        if id(notify) in credits_returned_early(dist):
            # a credit returned before the buffer is read (ASC410): the notify must move after the reads, and a
            # fence put here would leave that bug behind a finding that looks fixed
            self.report(notify, message + _MOVE_FIRST)
            return

        def build(loc):
            if anchor is None or fence is None:
                return []
            row = loc.span(anchor)[0].row
            indent = edits.indentation_of_line(loc, row)
            found = [edits.insert_before_line(loc, row, f"{indent}{fence}(){loc.newline}")]
            if not imported:
                found.append(_import_edit(loc, module))
            return found

        shown = fence or f"{_DEVICE_MODULE}.fence"
        self.report(notify, message, fix_message=f"Insert `{shown}()` before the notify", edits=build)


_MOVE_FIRST = (
    "; it also returns a credit before the buffer is read (ASC410), so move it after the reads and a fence: "
    "no fix is offered, since a fence alone would leave the producer overwriting the buffer"
)


class _FenceOrder:
    """Forward pass over the statements of a kernel: is an unfenced store pending where each notify runs?"""

    def __init__(self, context, dist: DistAnalysis, helper_effects: dict, choices: dict | None = None) -> None:
        self.context = context
        self.dist = dist
        self.kernels = context.facts.kernels
        self.helper_effects = helper_effects
        self.choices = choices or {}  # constexpr condition text -> the value this compile gives it
        self.unfenced: dict[int, int] = {}  # signal call -> the pending work (bits) some path brings to it
        self.recording = True

    def run(self, block: cst.BaseSuite, state: bool) -> bool:
        if type(block) is cst.SimpleStatementSuite:
            for small in block.body:
                state = self._expression_effects(small, state)
            return state
        for statement in block.body:
            state = self._statement(statement, state)
        return state

    def _statement(self, statement: cst.CSTNode, state: bool) -> bool:
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                state = self._expression_effects(small, state)
            return state
        if type(statement) is cst.If:
            state = self._expression_effects(statement.test, state)
            if statement.orelse is None and _only_orders(self.dist, statement):
                # `if NUM_CHUNKS > 1: quiet()`: a compile-time guard that orders exactly when the configuration
                # has something to order (the puts before it run under the same constants): taken as ordering
                return self.run(statement.body, state)
            chosen = _chosen_branch(self.dist, statement.test, self.choices)
            if chosen is True:
                return self.run(statement.body, state)
            if chosen is False:
                return self._else(statement.orelse, state)
            taken = self.run(statement.body, state)
            other = self._else(statement.orelse, state)
            return taken | other
        if type(statement) in (cst.For, cst.While):
            head = statement.iter if type(statement) is cst.For else statement.test
            state = self._expression_effects(head, state)
            entry = state
            for _ in range(4):  # the state only gains bits: three bits reach the fixed point within four rounds
                end = self.run(statement.body, entry)
                if entry | end == entry:
                    break
                entry = state | end | entry
            after = entry
            if statement.orelse is not None:
                after = self.run(statement.orelse.body, after)
            return after
        if type(statement) in (cst.With, cst.Try):
            return self.run(statement.body, state)
        return state  # nested definitions run elsewhere

    def _else(self, orelse, state: bool) -> bool:
        if orelse is None:
            return state
        if type(orelse) is cst.If:
            return self._statement(orelse, state)
        return self.run(orelse.body, state)

    def _expression_effects(self, node: cst.CSTNode, state: bool) -> bool:
        dist = self.dist
        for child in _calls_in_evaluation_order(dist, node):
            name = dist.qualname_of(child) or ""
            if name in _UNORDERED:
                pending = state & _UNORDERED[name]
                if pending and self.recording:
                    self.unfenced[id(child)] = self.unfenced.get(id(child), CLEAN) | pending
            if name in _STORES:
                state |= STORE
            elif name == FENCE:
                state &= ~STORE
            elif name == QUIET:
                state = CLEAN
            elif name in FUSED_PUTS:  # its data travels with its own signal: nothing left pending for later ones
                state = state & ~STORE if name not in NONBLOCKING_PUTS else state
            elif name in NONBLOCKING_PUTS:
                state |= PUT_NBI
            elif name in PUT_CALLS:  # putmem: synchronous, it orders the stores before it
                state = (state & ~STORE) | PUT
            elif name.startswith("local."):
                state = self._helper(name[len("local."):], state)
        return state

    def _helper(self, name: str, state: bool) -> bool:
        kernel = self.kernels.get(name)
        if kernel is None or kernel is self.dist.kernel:
            return state
        key = (id(kernel.node), state)
        if key not in self.helper_effects:
            self.helper_effects[key] = state  # a recursive call sees no effect
            helper = for_kernel(self.context, kernel)
            inner = _FenceOrder(self.context, helper, self.helper_effects)
            inner.recording = False
            self.helper_effects[key] = inner.run(kernel.node.body, state)
        return self.helper_effects[key]


_MAX_CONSTEXPR_CONDITIONS = 4  # 2**4 compiles at most; further conditions are left open (both branches)


def _constexpr_choices(values, dist: DistAnalysis) -> list[dict[str, bool]]:
    """One assignment of values to the kernel's constexpr `if` conditions per compile variant.

    A compile takes one side of each constexpr condition, so a store under `if not FLAG:` and a notify under
    `if FLAG:` never meet, not even across loop iterations.
    """
    conditions: list[str] = []
    for node in dist.nodes:
        if type(node) is cst.If and values.is_constexpr(node.test):
            key = _condition_key(dist, node.test)[0]
            if key not in conditions:
                conditions.append(key)
    conditions = conditions[:_MAX_CONSTEXPR_CONDITIONS]
    return [
        {key: bool(bits >> position & 1) for position, key in enumerate(conditions)}
        for bits in range(2 ** len(conditions))
    ]


def _condition_key(dist: DistAnalysis, test: cst.BaseExpression) -> tuple[str, bool]:
    """The condition's source text without leading `not`s, and whether an odd number of them was stripped."""
    negated = False
    while type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        test, negated = test.expression, not negated
    return " ".join(dist.facts.module.code_for_node(test).split()), negated


def _chosen_branch(dist: DistAnalysis, test: cst.BaseExpression, choices: dict[str, bool]) -> bool | None:
    """True/False when this compile variant fixes the condition, None when it is a runtime test."""
    if not choices:
        return None
    key, negated = _condition_key(dist, test)
    if key not in choices:
        return None
    return choices[key] != negated


def _signals_own_rank(dist: DistAnalysis, signal: cst.Call) -> bool:
    """A `signal_op` to the calling rank itself: the puts still pending went to peers (a put to the own rank is
    ASC411's finding), so they are not the data this signal announces."""
    name = dist.qualname_of(signal)
    pe = signal_argument(signal, name, "pe")
    return pe is not None and is_rank_identity(dist, pe)


def _only_orders(dist: DistAnalysis, statement: cst.If) -> bool:
    """A constexpr ``if`` whose body does nothing but ``fence()`` / ``quiet()``."""
    if not dist.values.is_constexpr(statement.test):
        return False
    calls = [c for c in dist.below(statement.body) if type(c) is cst.Call]
    return bool(calls) and all(dist.qualname_of(c) in (FENCE, QUIET) for c in calls)


def _insertion_statement(dist: DistAnalysis, notify: cst.Call) -> cst.CSTNode | None:
    """The statement to put the fence before: the notify's own line, or the loop(s) that only notify."""
    statement = next((a for a in dist.index.ancestors(notify) if type(a) is cst.SimpleStatementLine), None)
    if statement is None or len(statement.body) != 1:
        return None  # a line holding several statements is left to the user
    parent = dist.index.parent(statement)
    while type(parent) is cst.IndentedBlock:
        owner = dist.index.parent(parent)
        if type(owner) not in (cst.For, cst.While) or owner.orelse is not None:
            break
        if any(dist.calls_in(owner, _STORES | {"shmem.putmem"})) or _calls_helper(dist, owner.body):
            break
        statement = owner
        parent = dist.index.parent(owner)
    return statement


def _calls_in_evaluation_order(dist: DistAnalysis, node: cst.CSTNode) -> list[cst.Call]:
    """The calls under ``node`` in the order they run: a call after its own arguments (and callee), so that
    ``tl.store(p, dl.notify(...))`` notifies before it stores. Nested calls are rare: one sort of the source-order
    list by where each call ends puts every call after the calls inside it."""
    calls = [child for child in (node, *dist.below(node)) if type(child) is cst.Call]
    if len(calls) < 2:
        return calls
    inside = {id(call): position for position, call in enumerate(calls)}
    ends: dict[int, int] = {}
    for position in range(len(calls) - 1, -1, -1):  # a call ends after the last call it contains
        call = calls[position]
        last = position
        for below in dist.below(call):
            if id(below) in inside:
                last = max(last, ends.get(id(below), inside[id(below)]))
        ends[id(call)] = last
    return sorted(calls, key=lambda call: (ends[id(call)], -inside[id(call)]))


def _store_first_in_statement(dist: DistAnalysis, statement: cst.CSTNode, notify: cst.Call) -> bool:
    """Whether the statement runs a store (or a helper that may store) before ``notify``."""
    for call in _calls_in_evaluation_order(dist, statement):
        if call is notify:
            return False
        name = dist.qualname_of(call) or ""
        if name in _STORES or (name.startswith("local.") and name[len("local."):] in dist.facts.kernels):
            return True
    return False


def _bound_names(context, name: str):
    """Every node binding ``name`` in the module: imports, assignments, loop and with targets, definitions,
    parameters (scopes are not told apart: a rebinding anywhere makes a fix's use of the name unsafe)."""
    for node in context.index.of_type(cst.Name):
        if node.value != name:
            continue
        parent = context.index.parent(node)
        if type(parent) in (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr,
                            cst.AsName, cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias,
                            cst.Tuple, cst.List, cst.Element, cst.StarredElement, cst.Global, cst.Nonlocal):
            if type(parent) in (cst.Tuple, cst.List, cst.Element, cst.StarredElement):
                owner = next((a for a in context.index.ancestors(node)
                              if type(a) in (cst.AssignTarget, cst.For, cst.CompFor, cst.AsName)), None)
                if owner is None:
                    continue
            if type(parent) is cst.AnnAssign and parent.target is not node:
                continue
            if type(parent) is cst.AugAssign and parent.target is not node:
                continue
            if type(parent) is cst.For and parent.target is not node:
                continue
            if type(parent) is cst.CompFor and parent.target is not node:
                continue
            if type(parent) is cst.NamedExpr and parent.target is not node:
                continue
            if type(parent) is cst.ImportAlias and (parent.asname is not None or parent.name is not node):
                continue  # `import a as name` binds through its AsName; `from x import name as y` binds y
            yield parent


def _import_of(context, binding) -> cst.CSTNode | None:
    """The import statement a binding belongs to, or None when it is no import."""
    owner = binding if type(binding) is cst.ImportAlias else context.index.parent(binding)
    if type(owner) is not cst.ImportAlias:
        return None
    return next((a for a in context.index.ancestors(owner) if type(a) in (cst.Import, cst.ImportFrom)), None)


def _top_level(context, node: cst.CSTNode) -> bool:
    return not any(type(a) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) for a in context.index.ancestors(node))


def _bound_only_by_top_level_imports(context, name: str) -> bool:
    """The kernel can use ``name``: a module-level import binds it and nothing else does."""
    bindings = list(_bound_names(context, name))
    imports = [_import_of(context, b) for b in bindings]
    return bool(bindings) and all(i is not None for i in imports) and any(_top_level(context, i) for i in imports) \
        and all(_imports_the_device_module(context, i, name) for i in imports)


def _imports_the_device_module(context, statement, name: str) -> bool:
    full = context.facts.aliases.get(name, "")
    return "libshmem_device" in full.split(".")


def _bound_anywhere(context, name: str, imports_of_the_module_too: bool = True) -> bool:
    """Whether ``name`` is bound to anything but ``triton_dist.language.extra.libshmem_device`` itself."""
    for binding in _bound_names(context, name):
        statement = _import_of(context, binding)
        if statement is None or not _imports_the_device_module(context, statement, name) or imports_of_the_module_too:
            return True
    return False


def _calls_helper(dist: DistAnalysis, node: cst.CSTNode) -> bool:
    return any(
        type(c) is cst.Call and (dist.qualname_of(c) or "").startswith("local.")
        for c in dist.below(node)
    )


def _fence_spelling(facts) -> tuple[str | None, bool]:
    """How this module names the device `fence` (`fence`, `shmem.fence`...), and whether that name is imported.

    Only names bound to `triton_dist.language.extra.libshmem_device` count: `import shmem as ash` is the host-side
    package, whose `ash.fence()` does not exist in a kernel. (None, False) when the import the fix would add
    clashes with a name the module already binds to something else.
    """
    for local, full in facts.aliases.items():
        if "libshmem_device" in full.split(".") and normalise(full) == FENCE:
            return local, True
    module = facts.module_alias("shmem")
    if module is not None:
        return f"{module}.fence", True
    if _DEVICE_MODULE in facts.imported_names:
        return None, False
    return f"{_DEVICE_MODULE}.fence", False


def _import_edit(loc, module: cst.Module):
    """Add `from triton_dist.language.extra import libshmem_device` after the module's last top-level import."""
    last = None
    for statement in module.body:
        if type(statement) is cst.SimpleStatementLine and any(
            type(s) in (cst.Import, cst.ImportFrom) for s in statement.body
        ):
            last = statement
    line = f"from triton_dist.language.extra import {_DEVICE_MODULE}{loc.newline}"
    if last is None:
        return edits.insert_before_line(loc, 1, line)
    row = loc.span(last)[1].row
    return edits.insert_before_line(loc, row + 1, line)


def _device_spelling(facts, function: str) -> str | None:
    """How this module names a libshmem_device function (``quiet``, ``libshmem_device.quiet``...), or None."""
    for local, full in facts.aliases.items():
        if "libshmem_device" in full.split(".") and normalise(full) == f"shmem.{function}":
            return local
    module = facts.module_alias("shmem")
    return f"{module}.{function}" if module is not None else None
