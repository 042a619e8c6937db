import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import SIGNAL_WAITS, signal_argument, signal_is_zero_set
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import advancing_names, ring_loop
from ascendlint.analysis.signal_protocol import credit_returns_in, signal_writes_in, wait_slot, waits_for_zero
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class MissingCreditReturn(Rule):
    """Flags a consumer `dl.wait` on a reused ring slot that its loop never hands back with a zero signal."""

    decides = """
    A consumer is a `dl.wait` (not waiting for 0) whose slot index is `i % buffer_num`, reached through sums and
    products only (`% num_ranks()` picks a peer, not a buffer; a remainder divided again, as in a tile swizzle, is
    a coordinate, not a ring index); its ring loop is the innermost loop `i` advances with. The credit return is a
    `dl.notify(slot, rank, 0)` (or a `tl.store` of 0) into the same signal buffer in the body of that loop,
    inner loops included. Slots reset more than once are ASC413's. A ring index may be a loop variable or a
    counter the loop steps (`msg += 1`).

    A slot that only grows needs no reset: quiet when the wait's value advances with the ring loop (`laps + 1`),
    the loop hands credits back through another signal buffer (a non-zero signal to a different buffer), and no
    wait in the module waits for this buffer to read 0.
    """

    code = "ASC404"
    name = "missing-credit-return"
    message = "ring slot waited on here is never reset to 0 in this loop: the producer's next reuse waits forever"
    severity = Severity.WARNING
    why = """
        With ring reuse (`buffer_id = i % buffer_num`) the producer waits for a slot to read 0 before it writes
        the buffer again. `dl.wait` does not consume the signal, so unless the consumer stores 0 back into the
        slot after reading, the producer blocks forever on the second reuse. Small shapes that never wrap around
        the ring pass, large ones hang.
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
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, BUFFER_NUM: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    buf = rnd % BUFFER_NUM
                    slot = signal_ptr + buf
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + buf * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)

            @triton.jit
            def consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, BUFFER_NUM: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    buf = rnd % BUFFER_NUM
                    slot = sig_ptr + buf * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
            """,
            count=2,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                msg = 0
                for rnd in range(n_rounds):
                    token = dl.wait(signal_ptr + msg % RING, 1, "gpu", "acquire")
                    tile = tl.load(dl.consume_token(buf_ptr + (msg % RING) * BLOCK, token) + offs)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile)
                    msg += 1
            """
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def ring_step(inbox_ptr, ready_ptr, credit_ptr, out_ptr, n_steps, left, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for step in range(n_steps):
                    slot = step % 2
                    token = dl.wait(ready_ptr + slot, 1, "gpu", "acquire", waitValue=step // 2 + 1)
                    tile = tl.load(dl.consume_token(inbox_ptr + slot * BLOCK, token) + offs)
                    tl.store(out_ptr + step * BLOCK + offs, tile)
                    dl.notify(credit_ptr + slot, left, signal=step // 2 + 1)
            """
        ),
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

            @triton.jit
            def consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, BUFFER_NUM: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                rank = libshmem_device.my_pe()
                for rnd in range(n_rounds):
                    buf = rnd % BUFFER_NUM
                    slot = sig_ptr + (tl.program_id(0) * BUFFER_NUM + buf) * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
                    libshmem_device.fence()
                    libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
            """,
            doc=True,
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
        for dist in distributed_kernels(self.context):
            for wait in dist.calls_to(*sorted(SIGNAL_WAITS)):
                self._check(dist, wait)

    def _check(self, dist: DistAnalysis, wait: cst.Call) -> None:
        name = dist.qualname_of(wait)
        slot = wait_slot(wait, name)
        if slot is None or waits_for_zero(wait, name):
            return
        loop = ring_loop(dist, wait, slot)
        if loop is None:
            return  # not a ring index that advances with a loop
        root = dist.pointer_root(slot)
        if any(dist.pointer_root(reset) == root for _, reset in credit_returns_in(dist, loop)):
            return
        if self._only_grows(dist, wait, name, loop, root):
            return
        self.report(wait)

    def _only_grows(self, dist: DistAnalysis, wait: cst.Call, name: str, loop, root: str | None) -> bool:
        """The slot counts laps (its wait value advances with the loop) and credits go back elsewhere."""
        value = signal_argument(wait, name, "value")
        if root is None or value is None or not dist.depends_on(value, advancing_names(dist, loop)):
            return False
        credits_elsewhere = any(
            dist.pointer_root(signal_argument(write, dist.qualname_of(write), "slot")) not in (None, root)
            and not signal_is_zero_set(write, dist.qualname_of(write))
            for write in signal_writes_in(dist, loop))
        return credits_elsewhere and not self._someone_waits_for_zero(root)

    def _someone_waits_for_zero(self, root: str) -> bool:
        for dist in distributed_kernels(self.context):
            for wait in dist.calls_to(*sorted(SIGNAL_WAITS)):
                name = dist.qualname_of(wait)
                slot = wait_slot(wait, name)
                if slot is not None and waits_for_zero(wait, name) and dist.pointer_root(slot) == root:
                    return True
        return False
