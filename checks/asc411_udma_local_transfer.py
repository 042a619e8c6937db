import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import UDMA_CALLS, udma_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import counts_ranks, depends_on_rank, is_rank_identity
from ascendlint.analysis.syntax import is_integer
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class UdmaLocalTransfer(Rule):
    """Flags a `putmem` / `getmem` whose pe can be the calling rank."""

    decides = """
    That is a pe that is the rank itself (`dl.rank()`, `libshmem_device.my_pe()`, a kernel parameter named
    `rank`), or the variable of a loop over every rank (a `range` up to the rank count) with no `pe != rank` guard
    around the transfer (an `if pe != rank:`, the `else` of `if pe == rank:`, or an earlier `if pe == rank:
    continue`). A pe computed as `(rank + off) % n` whose offset is 0 on the first pass of its loops (`i`,
    `i // chunks_per_rank` with `i` from 0) can be the rank too. A pe computed as `(rank + i) % n` with `i` from
    1, or loaded from data, is not flagged.
    """

    code = "ASC411"
    name = "udma-local-transfer"
    message = "`{call}` can run with the calling rank as pe: UDMA cannot copy local symmetric memory <-> local memory"
    severity = Severity.ERROR
    why = """
        UDMA moves data between ranks. A transfer between this rank's symmetric memory and its own device memory
        is not something the engine does; on the device it fails or moves nothing. The local share of an
        all-gather goes through the MTE path instead: `tl.load` from the source and `tl.store` into the local
        symmetric buffer.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def scatter_chunks(buf_ptr, x_ptr, n_chunks, chunks_per_rank, nbytes):
                rank = dl.rank()
                for i in range(n_chunks):
                    pe = (rank + i // chunks_per_rank) % dl.num_ranks()
                    libshmem_device.putmem(buf_ptr + i * nbytes, x_ptr + i * nbytes, nbytes, pe)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                for pe in range(tl.program_id(0), dl.num_ranks(), tl.num_programs(0)):
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """,
        ),
        Invalid(
            """
            import triton
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def pull_own(buf_ptr, y_ptr, nbytes):
                shmem.getmem(y_ptr, buf_ptr, nbytes, shmem.my_pe())
            """
        ),
        Invalid(
            """
            import triton
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_all(buf_ptr, x_ptr, nbytes, rank, world_size):
                for pe in range(world_size):
                    if pe > 0:
                        libshmem_device.putmem_nbi(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                for pe in range(tl.program_id(0), dl.num_ranks(), tl.num_programs(0)):
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)

            @triton.jit
            def scatter_shmem(buf_ptr, x_ptr, nbytes, n_work, WORLD_SIZE: tl.constexpr, LOCAL_RANK: tl.constexpr):
                for work_id in range(tl.program_id(0), n_work, tl.num_programs(0)):
                    dst = work_id % WORLD_SIZE
                    libshmem_device.putmem(buf_ptr + LOCAL_RANK * nbytes, x_ptr + work_id * nbytes, nbytes, dst)
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
            def all_gather(buf_ptr, x_ptr, nbytes, BLOCK: tl.constexpr):
                rank = dl.rank()
                for pe in range(tl.program_id(0), dl.num_ranks(), tl.num_programs(0)):
                    if pe != rank:
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
                    else:
                        offs = tl.arange(0, BLOCK)
                        tl.store(buf_ptr + rank * BLOCK + offs, tl.load(x_ptr + offs))

            @triton.jit
            def scatter_shmem(buf_ptr, x_ptr, nbytes, n_work, WORLD_SIZE: tl.constexpr, LOCAL_RANK: tl.constexpr,
                              BLOCK: tl.constexpr):
                for work_id in range(tl.program_id(0), n_work, tl.num_programs(0)):
                    dst = work_id % WORLD_SIZE
                    if dst != LOCAL_RANK:
                        libshmem_device.putmem(buf_ptr + LOCAL_RANK * nbytes, x_ptr + work_id * nbytes, nbytes, dst)
                    else:
                        offs = tl.arange(0, BLOCK)
                        tl.store(buf_ptr + LOCAL_RANK * BLOCK + offs, tl.load(x_ptr + work_id * BLOCK + offs))
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
            def all_gather(buf_ptr, x_ptr, nbytes, BLOCK: tl.constexpr):
                rank = dl.rank()
                for pe in range(tl.program_id(0), dl.num_ranks(), tl.num_programs(0)):
                    if pe != rank:
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
                    else:
                        offs = tl.arange(0, BLOCK)
                        tl.store(buf_ptr + rank * BLOCK + offs, tl.load(x_ptr + offs))
            """,
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def ring_push(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                n_ranks = dl.num_ranks()
                for step in range(1, n_ranks):
                    pe = (rank + step) % n_ranks
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def skip_self(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                for pe in range(dl.num_ranks()):
                    if pe == rank:
                        continue
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def routed(buf_ptr, x_ptr, dest_ptr, n_tasks, nbytes):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    pe = tl.load(dest_ptr + task)
                    libshmem_device.putmem(buf_ptr, x_ptr + task * nbytes, nbytes, pe)
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            for call in dist.calls_to(*UDMA_CALLS):
                pe = udma_argument(call, dist.qualname_of(call), "pe")
                if pe is not None and _can_be_own_rank(dist, call, pe):
                    short = (dist.qualname_of(call) or "").replace("shmem.", "")
                    self.report(call, self.message.format(call=short))


def _can_be_own_rank(dist: DistAnalysis, call: cst.Call, pe: cst.BaseExpression) -> bool:
    if is_rank_identity(dist, pe):
        return True
    if _rank_plus_offset_from_zero(dist, pe):
        scope = dist.enclosing_loops(call)
        name = pe.value if type(pe) is cst.Name else ""
        return not name or not _guarded(dist, call, scope[-1] if scope else dist.kernel.node, name)
    if type(pe) is not cst.Name:
        return False
    loop = next((l for l in dist.enclosing_loops(call) if type(l) is cst.For and type(l.target) is cst.Name
                 and l.target.value == pe.value), None)
    if loop is not None:
        return _over_every_rank(dist, loop.iter) and not _guarded(dist, call, loop, pe.value)
    if _computed_over_every_rank(dist, pe):
        scope = dist.enclosing_loops(call)
        return not _guarded(dist, call, scope[-1] if scope else dist.kernel.node, pe.value)
    return False


def _rank_plus_offset_from_zero(dist: DistAnalysis, pe: cst.BaseExpression) -> bool:
    """``pe`` is ``(rank + off) % n`` (directly or through names) where ``off`` is 0 on a loop's first pass:
    ``(rank + i // chunks_per_rank) % n`` with ``i`` from 0 is the own rank for the first chunks."""
    values = dist.assigned_values(pe) if type(pe) is cst.Name else [pe]
    if not values:
        return False
    for value in values:
        while type(value) is cst.Call and dist.qualname_of(value) == "tl.cast" and value.args:
            value = value.args[0].value
        if type(value) is not cst.BinaryOperation or type(value.operator) is not cst.Modulo:
            return False
        total = value.left
        if type(total) is not cst.BinaryOperation or type(total.operator) is not cst.Add:
            return False
        sides = (total.left, total.right)
        ranks = [side for side in sides if is_rank_identity(dist, side)]
        if len(ranks) != 1:
            return False
        offset = sides[1] if ranks[0] is sides[0] else sides[0]
        if not _zero_on_first_pass(dist, offset, frozenset()):
            return False
    return True


def _zero_on_first_pass(dist: DistAnalysis, expr: cst.BaseExpression, seen: frozenset) -> bool:
    """``expr`` is 0 when the loops it comes from are on their first pass: a loop variable from 0, scaled or
    divided (``i // k``, ``i * k``, ``i % k``), or a sum of such terms; a constant other than 0 is not."""
    if type(expr) is cst.Integer:
        return expr.evaluated_value == 0
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) in (cst.FloorDivide, cst.Multiply, cst.Modulo, cst.RightShift):
            return _zero_on_first_pass(dist, expr.left, seen)
        if type(expr.operator) in (cst.Add, cst.Subtract):
            return _zero_on_first_pass(dist, expr.left, seen) and _zero_on_first_pass(dist, expr.right, seen)
        return False
    if type(expr) is not cst.Name or id(expr) in seen:
        return False
    definitions = dist.values.definitions(expr)
    if not definitions:
        return False
    for definition in definitions:
        if definition.kind == "loop":
            if not _range_from_zero(dist, definition.value):
                return False
        elif definition.kind == "assign" and definition.value is not None:
            if not _zero_on_first_pass(dist, definition.value, seen | {id(expr)}):
                return False
        else:
            return False
    return True


def _range_from_zero(dist: DistAnalysis, iterable: cst.BaseExpression | None) -> bool:
    if iterable is None or not dist.is_range(iterable):
        return False
    positional = [a.value for a in iterable.args if a.keyword is None]
    return len(positional) == 1 or (len(positional) > 1 and is_integer(positional[0], 0))


def _computed_over_every_rank(dist: DistAnalysis, pe: cst.Name) -> bool:
    """``pe`` is only ever ``x % n`` with ``x`` a loop variable (or derived from one) not offset from the calling
    rank, e.g. ``dst = work_id % W``: as ``x`` runs, ``pe`` takes every value below ``n``, rank 0's own among
    them whatever ``n`` is. ``(rank + 1 + i) % n`` names a peer and a pe loaded from data is the data's business:
    neither is flagged."""
    values = dist.assigned_values(pe)
    if not values:
        return False
    for value in values:
        while type(value) is cst.Call and dist.qualname_of(value) == "tl.cast" and value.args:
            value = value.args[0].value
        if type(value) is not cst.BinaryOperation or type(value.operator) is not cst.Modulo:
            return False
        left = value.left
        if depends_on_rank(dist, left) or depends_on_rank(dist, value.right):
            return False
        if dist.derives_from_call(left, {"tl.load"}):
            return False
        if not any(d.kind == "loop" for d in dist.definitions_reaching(left)):
            return False
    return True


def _over_every_rank(dist: DistAnalysis, iterable: cst.BaseExpression) -> bool:
    """``range(start, stop[, step])`` with ``stop`` the rank count and ``start`` 0 or program-id based."""
    if not dist.is_range(iterable):
        return False
    positional = [a.value for a in iterable.args if a.keyword is None]
    if not positional:
        return False
    stop = positional[0] if len(positional) == 1 else positional[1]
    if not counts_ranks(dist, stop):
        return False
    if len(positional) == 1:
        return True
    start = positional[0]
    return is_integer(start, 0) or dist.depends_on_program_id(start)


def _guarded(dist: DistAnalysis, call: cst.Call, loop: cst.For, pe_name: str) -> bool:
    """An `if pe != rank` around ``call`` inside ``loop``, the `else` of `if pe == rank`, or an earlier
    `if pe == rank: continue`."""
    child = call
    for ancestor in dist.index.ancestors(call):
        if ancestor is loop:
            break
        if type(ancestor) is cst.If and child is not ancestor.test:
            comparisons = _rank_comparisons(dist, ancestor.test, pe_name)
            in_body = child is ancestor.body
            if "ne" in comparisons and in_body or comparisons == {"eq"} and not in_body:
                return True
        child = ancestor
    for statement in loop.body.body if type(loop.body) is cst.IndentedBlock else ():
        if dist.index.order(statement) > dist.index.order(call):
            break
        if type(statement) is cst.If and _rank_comparison(dist, statement.test, pe_name) == "eq" and any(
            type(n) is cst.Continue for n in dist.below(statement.body)
        ):
            return True
    return False


def _rank_comparisons(dist: DistAnalysis, test: cst.BaseExpression, pe_name: str) -> set[str]:
    """The pe-versus-rank comparisons that must all hold for ``test``: one comparison, or the terms of an
    ``and`` / ``&`` (``(dst != rank) & (count > 0)``)."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And or (
        type(test) is cst.BinaryOperation and type(test.operator) is cst.BitAnd
    ):
        return _rank_comparisons(dist, test.left, pe_name) | _rank_comparisons(dist, test.right, pe_name)
    found = _rank_comparison(dist, test, pe_name)
    return {found} if found else set()


def _rank_comparison(dist: DistAnalysis, test: cst.BaseExpression, pe_name: str) -> str | None:
    """"eq" / "ne" when ``test`` compares the pe variable with the calling rank."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    names = [s for s in sides if type(s) is cst.Name and s.value == pe_name]
    others = [s for s in sides if not (type(s) is cst.Name and s.value == pe_name)]
    if len(names) != 1 or len(others) != 1 or not is_rank_identity(dist, others[0]):
        return None
    if type(target.operator) is cst.NotEqual:
        return "ne"
    if type(target.operator) is cst.Equal:
        return "eq"
    return None
