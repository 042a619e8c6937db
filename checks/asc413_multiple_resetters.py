import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels, kernels_launched_on_one_program
from ascendlint.analysis.distributed_calls import SIGNAL_WAITS, SIGNAL_WAIT_UNTIL, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import iteration_names, ring_loop
from ascendlint.analysis.signal_protocol import credit_returns_in, same_code, statement_of, wait_slot, waits_for_zero
from ascendlint.analysis.syntax import is_integer
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class MultipleResetters(Rule):
    """Flags a ring slot's credit return that more than one reset, or more than one program, performs."""

    decides = """
    A credit return (`dl.notify(slot, rank, 0)` or a store of 0) counts when its ring loop (the loop the slot's
    `i % buffer_num` index advances with) also waits on that signal buffer. It is flagged when the same slot is
    reset again in that loop body, when every program runs the wait and the reset on the same slots (nothing
    partitions them by program id), or when it sits in an inner loop that resets a range of slots while the
    consumer waited for a single one.
    """

    code = "ASC413"
    name = "multiple-resetters"
    message = "this slot is already reset on line {line} of the same loop body: keep exactly one resetter per slot"
    shared_message = (
        "every program waits on this ring slot and resets it: the first reset frees the buffer while the others "
        "still read it; partition the slots by program id so each has one resetter"
    )
    range_message = (
        "this loop resets a range of slots but the consumer waited for one: it erases credits that belong to "
        "other consumers; reset only the slot it waited on"
    )
    severity = Severity.WARNING
    why = """
        A credit return tells the producer that a buffer may be overwritten. With more than one resetter per slot,
        a second reset can land after the producer has already published the next round into that slot: the
        signal is erased and its consumer waits forever ("hangs from the second round of buffer reuse"), or a
        reset arrives while another consumer still reads the buffer. Exactly one consumer returns each credit.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def column_consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, N, rank, BLOCK: tl.constexpr,
                                RING: tl.constexpr):
                cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * N, token) + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    dl.notify(slot, rank, 0)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist import language as tdl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, n_buffers, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                rnd = tl.program_id(0)
                while rnd < n_rounds:
                    token = tdl.wait(signal_ptr + (rnd % n_buffers) * 8, 1, "gpu", "acquire")
                    tile = tl.load(tdl.consume_token(buf_ptr + (rnd % n_buffers) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    tdl.notify(signal_ptr + (rnd % n_buffers) * 8, rank, 0)
                    tdl.notify(signal_ptr + (rnd % n_buffers) * 8, rank, 0)
                    rnd += tl.num_programs(0)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_tasks, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    ring = (task // n_ranks) % 2
                    slot = signal_ptr + (ring * n_ranks + task % n_ranks) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=task + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + task * BLOCK, token) + offs)
                    tl.store(out_ptr + task * BLOCK + offs, tile)
                    libshmem_device.fence()
                    for src in range(n_ranks):
                        dl.notify(signal_ptr + (ring * n_ranks + src) * 8, rank, 0)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def column_consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, N, rank, BLOCK: tl.constexpr,
                                RING: tl.constexpr):
                cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * N, token) + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    dl.notify(slot, rank, 0)

            @triton.jit
            def column_consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, N, BLOCK: tl.constexpr, RING: tl.constexpr):
                cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                me = libshmem_device.my_pe()
                for rnd in range(n_rounds):
                    slot = sig_ptr + (rnd % RING) * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    tile = tl.load(buf_ptr + (rnd % RING) * N + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, me)
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
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, N, rank, BLOCK: tl.constexpr,
                         RING: tl.constexpr):
                cols = tl.arange(0, BLOCK)
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * N, token) + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    libshmem_device.fence()
                    dl.notify(slot, rank, 0)

            @triton.jit
            def consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, N, BLOCK: tl.constexpr, RING: tl.constexpr):
                cols = tl.arange(0, BLOCK)
                me = libshmem_device.my_pe()
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slot = sig_ptr + (rnd % RING) * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    tile = tl.load(buf_ptr + (rnd % RING) * N + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    libshmem_device.fence()
                    libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, me)
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
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, N, rank, BLOCK: tl.constexpr,
                         RING: tl.constexpr):
                cols = tl.arange(0, BLOCK)
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * N, token) + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    libshmem_device.fence()
                    dl.notify(slot, rank, 0)
            """,
        ),
        Valid(
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
                        part = dl.consume_token(inbox_ptr + ((tile % 2) * n_ranks + src) * BLOCK, token)
                        total += tl.load(part + offs)
                    tl.store(out_ptr + tile * BLOCK + offs, total)
                    for src in range(n_ranks):
                        dl.notify(slots + src * 8, rank, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slots = signal_ptr + (rnd % 2) * n_ranks * 8
                    token = dl.wait(slots, n_ranks, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % 2) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    for src in range(n_ranks):
                        dl.notify(slots + src * 8, rank, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def single_consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % 2) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))
                    dl.notify(slot, rank, 0)

            def run(buf, signal, out, n_rounds, rank):
                single_consumer[(1,)](buf, signal, out, n_rounds, rank, BLOCK=128)
            """
        ),
    ]

    def finish(self) -> None:
        single_program = kernels_launched_on_one_program(self.context.facts)
        for dist in distributed_kernels(self.context):
            if not dist.has_call(*SIGNAL_WAITS):
                continue
            for loop, waits in _ring_loops(dist).items():
                self._check_loop(dist, loop, waits, dist.kernel.name in single_program)

    def _check_loop(self, dist: DistAnalysis, loop: cst.CSTNode, waits: list, single_program: bool) -> None:
        roots = {dist.pointer_root(_slot(dist, w)) for w in waits}
        resets = [(call, slot) for call, slot in credit_returns_in(dist, loop)
                  if dist.pointer_root(slot) in roots]
        seen: dict[tuple, cst.Call] = {}
        for call, slot in resets:
            key = (id(dist.index.parent(statement_of(dist, call))), _text(dist, slot))
            if key in seen:
                line = self.context.locator.span(seen[key])[0].row
                self.report(call, self.message.format(line=line))
                continue
            seen[key] = call
            if self._resets_a_range(dist, loop, call, slot, waits):
                self.report(call, self.range_message)
            elif not single_program and _shared(dist, call, slot, waits):
                self.report(call, self.shared_message)

    def _resets_a_range(self, dist, loop, call, slot, waits) -> bool:
        inner = [l for l in dist.enclosing_loops(call) if l is not loop and _inside(dist, l, loop)]
        if not inner or not all(_single_slot(dist, w) for w in waits):
            return False
        if any(l is not loop for w in waits for l in dist.enclosing_loops(w) if _inside(dist, l, loop)):
            return False  # the consumer waits on a range of slots in a loop of its own
        for reset_loop in inner:
            if any(dist.calls_in(reset_loop, SIGNAL_WAITS)):
                return False
            variables = iteration_names(dist, [reset_loop])
            if dist.depends_on(slot, variables):
                return True
        return False


def _ring_loops(dist: DistAnalysis) -> dict:
    """ring loop -> the consumer waits (not for 0) whose ring index advances with it."""
    found: dict = {}
    for wait in dist.calls_to(*sorted(SIGNAL_WAITS)):
        slot = _slot(dist, wait)
        if slot is None or waits_for_zero(wait, dist.qualname_of(wait)):
            continue
        loop = ring_loop(dist, wait, slot)
        if loop is not None:
            found.setdefault(loop, []).append(wait)
    return found


def _shared(dist: DistAnalysis, call: cst.Call, slot, waits) -> bool:
    """Every program runs this reset on a slot it waited on, and nothing splits the slots between programs."""
    same = [w for w in waits if same_code(dist, _slot(dist, w), slot)]
    return bool(same) and not any(dist.partitioned_by_program(w, _slot(dist, w)) for w in same) \
        and not dist.partitioned_by_program(call, slot)


def _slot(dist: DistAnalysis, wait: cst.Call):
    return wait_slot(wait, dist.qualname_of(wait))


def _single_slot(dist: DistAnalysis, wait: cst.Call) -> bool:
    """The wait polls one slot: `dl.wait(p, 1, ...)`, or any `signal_wait_until`."""
    return dist.qualname_of(wait) == SIGNAL_WAIT_UNTIL or is_integer(call_argument(wait, 1, "numBarriers"), 1)


def _inside(dist: DistAnalysis, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    return any(a is outer for a in dist.index.ancestors(node))


def _text(dist: DistAnalysis, node: cst.CSTNode) -> str:
    return "".join(dist.facts.module.code_for_node(node).split())
