import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import CONSUME_TOKEN, SIGNAL_WAIT_UNTIL
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.signal_protocol import credit_returns_in, read_after_credit_return
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class CreditReturnedBeforeRead(Rule):
    """Flags a consumer's credit return (`dl.notify(slot, rank, 0)` or a store of 0 to the slot) placed before
    its loads from the buffer that slot guards."""

    decides = """
    The guarded buffer is the pointer passed through `dl.consume_token` with the token of a wait on the same
    slot (the same expression), in the same loop body; its loads are `tl.load`s of it, or `triton.jit` helpers
    called on it, that come after the credit return.
    """

    code = "ASC410"
    name = "credit-returned-before-read"
    message = (
        "the credit goes back before the guarded buffer is read (line {line}): the producer may overwrite it first"
    )
    severity = Severity.ERROR
    why = """
        Handing the slot back to 0 tells the producer that the buffer is free. A producer waiting for that credit
        starts writing the next round into the buffer at once, while this consumer has not read it yet: the
        consumer then reads the next round's data, or a mix of both. The order on the consumer side is
        wait, consume_token, load, store, `fence()`, then the credit return.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile_ptr = dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token)
                    dl.notify(slot, rank, signal=0, sig_op="set")
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(tile_ptr + offs))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def sum_tile(tile_ptr, BLOCK: tl.constexpr):
                return tl.sum(tl.load(tile_ptr + tl.arange(0, BLOCK)))

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, RING: tl.constexpr):
                for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tl.store(slot, 0)
                    total = sum_tile(dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token), BLOCK)
                    tl.store(out_ptr + rnd, total)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def reducer(inbox_ptr, signal_ptr, out_ptr, n_tiles, n_ranks, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(n_tiles):
                    slots = signal_ptr + (tile % 2) * n_ranks * 8
                    for src in range(n_ranks):
                        dl.notify(slots + src * 8, rank, 0)
                    total = tl.zeros((BLOCK,), dtype=tl.float32)
                    for src in range(n_ranks):
                        token = dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=tile + 1)
                        part = dl.consume_token(inbox_ptr + ((tile % 2) * n_ranks + src) * BLOCK, token)
                        total += tl.load(part + offs)
                    tl.store(out_ptr + tile * BLOCK + offs, total)
            """,
            count=1,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile_ptr = dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token)
                    dl.notify(slot, rank, signal=0, sig_op="set")
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(tile_ptr + offs))

            @triton.jit
            def consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                me = libshmem_device.my_pe()
                for rnd in range(n_rounds):
                    buf = rnd % RING
                    slot = sig_ptr + buf * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, me)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
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
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                pid = tl.program_id(0)
                for rnd in range(n_rounds):
                    ring = pid * RING + rnd % RING  # each program its own slots: one resetter per slot
                    slot = signal_ptr + ring * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile_ptr = dl.consume_token(buf_ptr + ring * BLOCK, token)
                    tl.store(out_ptr + (pid * n_rounds + rnd) * BLOCK + offs, tl.load(tile_ptr + offs))
                    libshmem_device.fence()
                    dl.notify(slot, rank, signal=0, sig_op="set")

            @triton.jit
            def consumer_shmem(buf_ptr, sig_ptr, out_ptr, n_rounds, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                me = libshmem_device.my_pe()
                pid = tl.program_id(0)
                for rnd in range(n_rounds):
                    buf = pid * RING + rnd % RING
                    slot = sig_ptr + buf * 16
                    libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, rnd + 1)
                    tl.store(out_ptr + (pid * n_rounds + rnd) * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
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
            def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % RING) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile_ptr = dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(tile_ptr + offs))
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
            def consumer(buf_ptr, signal_ptr, out_ptr, other_ptr, n_rounds, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % 2) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tile = tl.load(dl.consume_token(buf_ptr + (rnd % 2) * BLOCK, token) + offs)
                    dl.notify(slot, rank, 0)
                    tl.store(out_ptr + rnd * BLOCK + offs, tile + tl.load(other_ptr + offs))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def two_slots(buf_ptr, signal_ptr, out_ptr, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                first = tl.load(dl.consume_token(buf_ptr, token) + offs)
                dl.notify(signal_ptr, rank, 0)
                token = dl.wait(signal_ptr + 8, 1, "gpu", "acquire")
                second = tl.load(dl.consume_token(buf_ptr + BLOCK, token) + offs)
                dl.notify(signal_ptr + 8, rank, 0)
                tl.store(out_ptr + offs, first + second)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def producer(buf_ptr, signal_ptr, x_ptr, n_rounds, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % 2) * 8
                    token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                    dst = dl.consume_token(dl.symm_at(buf_ptr + (rnd % 2) * BLOCK, peer), token)
                    tl.store(dst + offs, tl.load(x_ptr + rnd * BLOCK + offs))
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            if not dist.has_call(CONSUME_TOKEN, SIGNAL_WAIT_UNTIL):
                continue
            for reset, slot in credit_returns_in(dist, dist.kernel.node):
                self._check(dist, reset, slot)

    def _check(self, dist: DistAnalysis, reset: cst.Call, slot: cst.BaseExpression) -> None:
        read = read_after_credit_return(dist, reset, slot)
        if read is not None:
            self.report(reset, self.message.format(line=self.context.locator.span(read)[0].row))
