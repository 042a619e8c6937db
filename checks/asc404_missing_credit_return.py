import libcst as cst

from ascendlint.analysis import distributed as dist_analysis
from ascendlint.diagnostics import Severity
from ascendlint.analysis.distributed import (
    NOTIFY,
    RANK_COUNTS,
    WAIT,
    DistAnalysis,
    call_argument,
    is_integer,
    signal_is_zero_set,
)
from ascendlint.rule import Invalid, Rule, Valid


class MissingCreditReturn(Rule):
    """Flags a consumer `dl.wait` on a reused ring slot that its loop never hands back with a zero signal.

    A consumer is a `dl.wait` (not waiting for 0) inside a loop whose slot index is `i % buffer_num`, `i`
    advancing with the loop, reached through sums and products only (`% num_ranks()` picks a peer, not a buffer;
    a remainder divided again, as in a tile swizzle, is a coordinate, not a ring index).
    The credit return is a `dl.notify(slot, rank, 0)` (or a `tl.store` of 0) into the same signal buffer in the
    same loop body. Exactly one resetter per slot: resetting it twice in one body is flagged, and so is a
    consumer that every program runs on the same slots (not partitioned by program id).
    """

    code = "ASC404"
    name = "missing-credit-return"
    message = "ring slot waited on here is never reset to 0 in this loop: the producer's next reuse waits forever"
    duplicate_message = "ring slot waited on here is reset {count} times in this loop: keep exactly one resetter"
    shared_message = (
        "every program waits on this ring slot and resets it: the first reset frees the buffer while the other "
        "programs still read it; keep exactly one resetter per slot"
    )
    severity = Severity.WARNING
    why = """
        With ring reuse (`buffer_id = i % buffer_num`) the producer waits for a slot to read 0 before it writes
        the buffer again. `dl.wait` does not consume the signal, so unless the consumer stores 0 back into the
        slot after reading, the producer blocks forever on the second reuse. Small shapes that never wrap around
        the ring pass, large ones hang. A slot reset twice can hand the buffer back while it is still in use.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, BUFFER_NUM: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    buf = rnd % BUFFER_NUM
                    slot = signal_ptr + buf
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + buf * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist import language as tdl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, n_buffers, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                rnd = 0
                while rnd < n_rounds:
                    token = tdl.wait(signal_ptr + rnd % n_buffers, 1, "gpu", "acquire")
                    tile = tl.load(tdl.consume_token(buf_ptr + (rnd % n_buffers) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    tdl.notify(signal_ptr + rnd % n_buffers, rank, 0)
                    tdl.notify(signal_ptr + rnd % n_buffers, rank, 0)
                    rnd += 1
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + rnd % RING
                    token = dl.wait(slot, 1, "gpu", "acquire")
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    dl.notify(slot, rank, signal=1, sig_op="add")
            """
        ),
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
                    slot = signal_ptr + rnd % RING
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * N, token) + cols, mask=cols < N)
                    tl.store(out_ptr + rnd * N + cols, tile, mask=cols < N)
                    dl.notify(slot, rank, 0)
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
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr,
                         BUFFER_NUM: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    buf = rnd % BUFFER_NUM
                    slot = signal_ptr + tl.program_id(0) * BUFFER_NUM + buf
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + buf * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    libshmem_device.fence()
                    dl.notify(slot, rank, signal=0, sig_op="set")
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, n_ranks, rank, BLOCK: tl.constexpr,
                         RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slots = signal_ptr + (tl.program_id(0) * RING + rnd % RING) * n_ranks
                    token = dl.wait(slots, n_ranks, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    for src in range(n_ranks):
                        dl.notify(slots + src, rank, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def producer(buf_ptr, signal_ptr, x_ptr, n_rounds, peer, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + rnd % RING
                    token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                    dst = dl.consume_token(dl.symm_at(buf_ptr + (rnd % RING) * BLOCK, peer), token)
                    tl.store(dst + offs, tl.load(x_ptr + rnd * BLOCK + offs))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slot = signal_ptr + rnd % RING
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    if rnd >= 0:
                        tl.store(slot, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def one_shot(buf_ptr, signal_ptr, out_ptr, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr + rank % RING, 1, "gpu", "acquire")
                tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def ring_steps(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                rank = dl.rank()
                n_ranks = dl.num_ranks()
                offs = tl.arange(0, BLOCK)
                for step in range(1, n_ranks):
                    src = (rank - step + n_ranks) % n_ranks
                    token = dl.wait(signal_ptr + src, 1, "gpu", "acquire")
                    tile = tl.load(dl.consume_token(buf_ptr + src * BLOCK, token) + offs)
                    tl.store(out_ptr + src * BLOCK + offs, tile)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def gathered_rows(a_ptr, signal_ptr, out_ptr, n_tiles, n_groups, tiles_per_chunk, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    row_tile = (tile % n_groups) * (n_tiles // n_groups) + tile // n_groups
                    chunk = row_tile // tiles_per_chunk
                    token = dl.wait(signal_ptr + chunk, 1, "gpu", "acquire")
                    rows = dl.consume_token(a_ptr, token) + row_tile * BLOCK
                    tl.store(out_ptr + row_tile * BLOCK + offs, tl.load(rows + offs))
            """
        ),
    ]

    def finish(self) -> None:
        single_program = dist_analysis.kernels_launched_on_one_program(self.context.facts)
        for dist in dist_analysis.distributed_kernels(self.context):
            for wait in dist.calls_to(WAIT):
                self._check(dist, wait, dist.kernel.name in single_program)

    def _check(self, dist: DistAnalysis, wait: cst.Call, single_program: bool) -> None:
        slot = call_argument(wait, 0, "barrierPtrs")
        if slot is None or is_integer(call_argument(wait, 4, "waitValue"), 0):
            return
        loops = dist.enclosing_loops(wait)
        if not loops:
            return
        iteration = _iteration_names(dist, loops)
        if not any(
            dist.depends_on(index, iteration) and not dist.derives_from_call(size, RANK_COUNTS)
            for index, size in dist.modulo_operands(slot)
        ):
            return  # not a ring index that advances with the loop (`% n_ranks` picks a peer, not a buffer)
        root = dist.pointer_root(slot)
        resets = [r for r in _resets(dist, loops[0]) if dist.pointer_root(r[1]) == root]
        if not resets:
            self.report(wait)
            return
        module = dist.facts.module
        by_slot: dict[tuple, int] = {}
        for statement, pointer in resets:
            key = (id(dist.index.parent(statement)), "".join(module.code_for_node(pointer).split()))
            by_slot[key] = by_slot.get(key, 0) + 1
        repeated = max(by_slot.values())
        if repeated > 1:
            self.report(wait, self.duplicate_message.format(count=repeated))
        elif not single_program and not dist.partitioned_by_program(wait, slot):
            self.report(wait, self.shared_message)


def _iteration_names(dist: DistAnalysis, loops: list) -> set[str]:
    """Names that change from one iteration to the next: `for` targets and names assigned in `while` bodies."""
    names: set[str] = set()
    for loop in loops:
        if isinstance(loop, cst.For):
            names.update(n.value for n in (loop.target, *dist.below(loop.target)) if isinstance(n, cst.Name))
        else:
            for node in dist.below(loop.body):
                if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


def _resets(dist: DistAnalysis, loop: cst.CSTNode) -> list[tuple[cst.CSTNode, cst.BaseExpression]]:
    """(statement, slot pointer) of every zero-signal notify or zero store in the loop body."""
    found = []
    for call in dist.calls_in(loop, {NOTIFY, "tl.store"}):
        if dist.qualname_of(call) == NOTIFY:
            zero = signal_is_zero_set(call)
        else:
            zero = is_integer(call_argument(call, 1, "value"), 0)
        pointer = call_argument(call, 0, "ptr", "pointer")
        if zero and pointer is not None:
            statement = next((a for a in dist.index.ancestors(call) if isinstance(a, cst.SimpleStatementLine)), call)
            found.append((statement, pointer))
    return found
