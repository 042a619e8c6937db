import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels, targets_other_backend
from ascendlint.analysis.distributed_calls import CONSUME_TOKEN, MAPPING_CALLS, NOTIFY, WAIT, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import counts_ranks, depends_on_rank
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid

LINE_BYTES = 64
# signal call -> (argument position and names of its slot pointer, slot bytes, whether it writes the slot)
_SIGNAL_SLOTS = {
    NOTIFY: ((0, "ptr"), 8, True),  # `dl.notify` writes int64 / uint64 slots
    WAIT: ((0, "barrierPtrs"), 8, False),
    "shmem.signal_op": ((0, "sig_addr"), 4, True),  # the libshmem_device signal API uses int32 slots
    "shmem.putmem_signal": ((3, "sig_addr"), 4, True),
    "shmem.putmem_signal_nbi": ((3, "sig_addr"), 4, True),
    "shmem.signal_wait_until": ((0, "sig_addr"), 4, False),
}
# where a signal write names the rank whose slot it sets
_TARGET_RANK = {NOTIFY: (1, "rank"), "shmem.signal_op": (3, "pe"), "shmem.putmem_signal": (6, "pe"),
                "shmem.putmem_signal_nbi": (6, "pe")}
_PASS_THROUGH = frozenset({"tl.cast", CONSUME_TOKEN}) | MAPPING_CALLS
_MAX_DEPTH = 12


class SignalSlotsShareCacheline(Rule):
    """Flags a signal call whose slot index puts slots of different writers closer than 64 bytes."""

    decides = """
    The calls are `dl.notify` / `dl.wait` (int64 slots: 8 per line) and `signal_op` / `putmem_signal` /
    `signal_wait_until` (int32 slots: 16 per line). The slot offset is split into terms; a term that differs
    between programs or ranks (it derives from the program id, from the rank for a write, from a loop whose range
    is split by program id, or for a wait from a loop over the ranks) and is multiplied by a known factor below
    the slots per line puts two writers on one line. Terms with a runtime or unknown factor (`x * n_ranks`,
    `x * SLOT_STRIDE`) are not judged. Slots that one program owns alone (a loop variable that is the same for
    every program) are not flagged; nor is a rank-indexed slot that each rank sets on a single peer (the rank it
    writes to is not picked by a loop); nor are modules written for a GPU backend (CUDA, HIP, MACA imports or
    paths), whose caches keep such writes coherent.
    """

    code = "ASC412"
    name = "signal-slots-share-cacheline"
    message = (
        "signal slots indexed by `{term}` are {stride} byte(s) apart: slots written by different {who} share a "
        "64-byte line; space them {spacing} slots apart (`* {spacing}`)"
    )
    severity = Severity.WARNING
    default = False
    opt_in_reason = (
        "not shown precise on real code: 1 finding right on the public Triton-distributed tests it was written"
        " from, and 2 debatable on a MoE training stack read later (arrival words 8 bytes apart that the"
        " repository reports landing every time); see docs/precision-distributed.md"
    )
    why = """
        The NPU's DataCache does not keep concurrent writes from different cores (or ranks) to one 64-byte line
        coherent: when two programs set neighbouring slots of one line, one write can overwrite the other and a
        signal is lost, so a consumer waits forever or reads too early. Give every slot that another program or
        rank writes a line of its own: int64 slots 8 elements apart.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def producer(buf_ptr, signal_ptr, x_ptr, n_tasks, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    tl.store(dl.symm_at(buf_ptr, peer) + task * BLOCK + offs, tl.load(x_ptr + task * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + task, peer, signal=1)
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather(buf_ptr, signal_ptr, x_ptr, nbytes, n_buffers):
                rank = dl.rank()
                for pe in range(dl.num_ranks()):
                    if pe != rank:
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
                        dl.notify(signal_ptr + (n_buffers - 1) * dl.num_ranks() + rank, pe, signal=1)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def reduce(inbox_ptr, signal_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                total = tl.zeros((BLOCK,), dtype=tl.float32)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 4, 1, "gpu", "acquire")
                    total += tl.load(dl.consume_token(inbox_ptr + src * BLOCK, token) + offs)
                tl.store(out_ptr + offs, total)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def epoch_barrier(sync_ptr, epoch, world_size: tl.constexpr, my_rank: tl.constexpr):
                for peer in range(world_size):
                    if peer != my_rank:
                        libshmem_device.putmem_signal(sync_ptr + my_rank, sync_ptr + my_rank, 4, sync_ptr + my_rank,
                                                      epoch, libshmem_device.SIGNAL_SET, peer)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def producer(buf_ptr, signal_ptr, x_ptr, n_tasks, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    tl.store(dl.symm_at(buf_ptr, peer) + task * BLOCK + offs, tl.load(x_ptr + task * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + task, peer, signal=1)

            SIGNAL_SLOT_STRIDE = 1

            @triton.jit
            def signal_tasks_shmem(sig_ptr, n_tasks, peer):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    libshmem_device.signal_op(sig_ptr + task * SIGNAL_SLOT_STRIDE, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
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
            def producer(buf_ptr, signal_ptr, x_ptr, n_tasks, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    tl.store(dl.symm_at(buf_ptr, peer) + task * BLOCK + offs, tl.load(x_ptr + task * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + task * 8, peer, signal=1)

            SIGNAL_SLOT_STRIDE = 16  # int32 slots: 16 of them fill one 64-byte line

            @triton.jit
            def signal_tasks_shmem(sig_ptr, n_tasks, peer):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    libshmem_device.signal_op(sig_ptr + task * SIGNAL_SLOT_STRIDE, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
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
            def producer(buf_ptr, signal_ptr, x_ptr, n_tasks, peer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    tl.store(dl.symm_at(buf_ptr, peer) + task * BLOCK + offs, tl.load(x_ptr + task * BLOCK + offs))
                    libshmem_device.fence()
                    dl.notify(signal_ptr + task * 8, peer, signal=1)
            """,
        ),
        Valid(
            """
            import nvshmem.core
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def gpu_producer(signal_ptr, n_tasks, peer):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    dl.notify(signal_ptr + task, peer, signal=1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def flags_of_one_program(signal_ptr, n_flags, peer):
                if tl.program_id(0) == 0:
                    for flag in range(n_flags):
                        dl.notify(signal_ptr + flag, peer, signal=1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def strided(signal_ptr, n_tasks, peer, SLOT_STRIDE: tl.constexpr):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    dl.notify(signal_ptr + (task * dl.num_ranks() + dl.rank()) * SLOT_STRIDE, peer, signal=1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(inbox_ptr, signal_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                total = tl.zeros((BLOCK,), dtype=tl.float32)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 16, 1, "gpu", "acquire")
                    total += tl.load(dl.consume_token(inbox_ptr + src * BLOCK, token) + offs)
                tl.store(out_ptr + offs, total)
            """
        ),
    ]

    def finish(self) -> None:
        if targets_other_backend(self.context):
            return
        for dist in distributed_kernels(self.context):
            for call in dist.calls_to(*_SIGNAL_SLOTS):
                (position, keyword), slot_bytes, writes = _SIGNAL_SLOTS[dist.qualname_of(call)]
                slot = call_argument(call, position, keyword)
                if slot is not None:
                    self._check(dist, call, slot, slot_bytes, writes)

    def _check(self, dist: DistAnalysis, call: cst.Call, slot: cst.BaseExpression, slot_bytes: int,
               writes: bool) -> None:
        root = dist.pointer_root(slot)
        if root is None:
            return
        per_line = LINE_BYTES // slot_bytes
        for coefficient, term in _terms(dist, slot, root, 1, 0):
            if coefficient is None or abs(coefficient) >= per_line:
                continue
            who = _writers(dist, term, writes)
            if who == "ranks" and writes and not _fans_out(dist, call):
                continue  # each rank sets its slot on one peer: nothing says several ranks write one line
            if who is None:
                continue
            text = " ".join(dist.facts.module.code_for_node(term).split())
            self.report(call, self.message.format(term=text, stride=abs(coefficient) * slot_bytes, who=who,
                                                  spacing=per_line))
            return


def _writers(dist: DistAnalysis, term: cst.BaseExpression, is_notify: bool) -> str | None:
    """What differs between the slots the term spreads: "programs", "ranks", or None (one owner)."""
    if dist.depends_on_program_id(term):
        return "programs"
    for definition in dist.definitions_reaching(term):
        if definition.kind == "loop" and definition.value is not None:
            if dist.depends_on_program_id(definition.value):
                return "programs"
            if not is_notify and _loops_over_ranks(dist, definition.value):
                return "ranks"
    if is_notify and depends_on_rank(dist, term):
        return "ranks"
    return None


def _fans_out(dist: DistAnalysis, call: cst.Call) -> bool:
    """The write goes to a rank chosen by a loop (every peer in turn), so every rank writes into every peer."""
    position, keyword = _TARGET_RANK.get(dist.qualname_of(call), (None, None))
    target = call_argument(call, position, keyword) if position is not None else None
    if target is None:
        return False
    loops = {id(loop) for loop in dist.enclosing_loops(call)}
    for definition in dist.definitions_reaching(target):
        if definition.kind == "loop":
            return True
        statement = definition.statement
        if statement is not None and any(id(a) in loops for a in dist.index.ancestors(statement)):
            return True  # stepped inside a loop around the write (`peer += 1` in a `while`)
    return False


def _loops_over_ranks(dist: DistAnalysis, iterable: cst.BaseExpression) -> bool:
    if not dist.is_range(iterable):
        return False
    positional = [a.value for a in iterable.args if a.keyword is None]
    stop = positional[0] if len(positional) == 1 else positional[1] if positional else None
    return stop is not None and counts_ranks(dist, stop)


def _known_factor(dist: DistAnalysis, factor: cst.BaseExpression) -> int | None:
    """The integer a stride factor holds: a literal, a module constant (``SIGNAL_SLOT_STRIDE = 1``), or a constexpr
    parameter to which this module's launches give only known values (the widest of them counts)."""
    if type(factor) is cst.Integer:
        return factor.evaluated_value
    if type(factor) is not cst.Name:
        return None
    name = factor.value
    if name in dist.kernel.params:
        if name not in dist.kernel.constexpr or dist.assigned_values(factor) is not None:
            return None
        values = dist.values.constexpr_values.get(name)
        return max(values, key=abs) if values else None
    if dist.values.definitions(factor):
        return None  # a local of the kernel
    return dist.facts.module_constants.get(name)


def _terms(dist: DistAnalysis, expr: cst.BaseExpression, root: str, coefficient, depth: int) -> list:
    """(known integer factor or None, term) of every non-constant additive term of a slot pointer's offset."""
    if depth > _MAX_DEPTH:
        return [(None, expr)]
    if type(expr) is cst.Integer:
        return []
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) in (cst.Add, cst.Subtract):
            left = _terms(dist, expr.left, root, coefficient, depth + 1)
            return left + _terms(dist, expr.right, root, coefficient, depth + 1)
        if type(expr.operator) is cst.Multiply:
            for factor, other in ((expr.left, expr.right), (expr.right, expr.left)):
                known = _known_factor(dist, factor)
                if known is not None:
                    scaled = None if coefficient is None else coefficient * known
                    return _terms(dist, other, root, scaled, depth + 1)
            # a runtime factor: the terms inside keep their variables but lose a known stride
            return [(None, t) for _, t in _terms(dist, expr.left, root, None, depth + 1)] + [
                (None, t) for _, t in _terms(dist, expr.right, root, None, depth + 1)]
        return [(coefficient, expr)]  # `i % n`, `i // n`: a value of its own
    if type(expr) is cst.Call:
        name = dist.qualname_of(expr)
        if name in _PASS_THROUGH and expr.args:
            return _terms(dist, expr.args[0].value, root, coefficient, depth + 1)
        if type(expr.func) is cst.Attribute and expr.func.attr.value == "to":
            return _terms(dist, expr.func.value, root, coefficient, depth + 1)
        return [(coefficient, expr)]
    if type(expr) is cst.Name:
        values = dist.assigned_values(expr)
        if values is None:  # a kernel argument: the base pointer, or a runtime value
            return [] if expr.value == root else [(coefficient, expr)]
        if len(values) == 1 and not any(d.kind == "loop" for d in dist.values.definitions(expr)):
            found = _terms(dist, values[0], root, coefficient, depth + 1)
            if len(found) == 1 and found[0][1] is values[0]:
                return [(found[0][0], expr)]  # report the name the slot expression uses
            return found
        return [(coefficient, expr)]
    return [(None, expr)]

