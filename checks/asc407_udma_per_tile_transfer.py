import libcst as cst

from ascendlint.diagnostics import Severity
from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import PIPELINE_SYNC, UDMA_CALLS, call_argument, udma_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.syntax import is_integer
from ascendlint.rule import Invalid, Rule, Valid


class UdmaPerTileTransfer(Rule):
    """Flags `putmem`/`getmem` issued once per tile inside a loop over tiles of a known range."""

    decides = """
    A tile loop steps by a constexpr (`range(0, K, BLOCK)`) or counts `tl.cdiv(...)` tiles, and the transfer's
    address or size follows the loop variable. Loops that wait or notify each iteration are pipelines, not
    tile loops, and a loop over pes is not a tile loop. A transfer whose address comes from an index loaded in
    the loop (a gather of scattered rows) is left alone: no single call covers it.
    """

    code = "ASC407"
    name = "udma-per-tile-transfer"
    message = "`{call}` once per tile of this loop: move the whole range with one call"
    severity = Severity.ADVISORY
    default = False
    opt_in_reason = "a performance advisory"
    why = """
        Every UDMA call pays a fixed cost to start the transfer and poll for its completion, independent of its
        size. Splitting a contiguous range into tile-sized `putmem`/`getmem` calls pays that cost per tile; one
        call over the whole known range moves the same bytes at full link bandwidth.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, x_ptr, K, BLOCK: tl.constexpr):
                peer = (dl.rank() + 1) % dl.num_ranks()
                for k in range(0, K, BLOCK):
                    libshmem_device.putmem(buf_ptr + k, x_ptr + k, BLOCK * 4, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def pull_tiles(buf_ptr, y_ptr, N, peer, BLOCK: tl.constexpr):
                n_tiles = tl.cdiv(N, BLOCK)
                for tile in tl.range(n_tiles):
                    offset = tile * BLOCK
                    shmem.getmem_nbi(
                        y_ptr + offset,
                        buf_ptr + offset,
                        BLOCK * 2,
                        peer,
                    )
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_segment(buf_ptr, x_ptr, starts_ptr, segment, n, peer, BLOCK: tl.constexpr):
                start = tl.load(starts_ptr + segment)
                for k in range(0, n, BLOCK):
                    libshmem_device.putmem(buf_ptr + start + k, x_ptr + start + k, BLOCK * 2, peer)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_rows(buf_ptr, x_ptr, K, BLOCK: tl.constexpr):
                peer = (dl.rank() + 1) % dl.num_ranks()
                for k in range(0, K, BLOCK):
                    libshmem_device.putmem(buf_ptr + k, x_ptr + k, BLOCK * 4, peer)

            @triton.jit
            def pull_rows_shmem(buf_ptr, x_ptr, K, BLOCK: tl.constexpr):
                peer = (libshmem_device.my_pe() + 1) % libshmem_device.n_pes()
                for k in range(0, K, BLOCK):
                    libshmem_device.getmem_nbi(buf_ptr + k, x_ptr + k, BLOCK * 4, peer)
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
            def push_rows(buf_ptr, x_ptr, K):
                peer = (dl.rank() + 1) % dl.num_ranks()
                if tl.program_id(0) == 0:  # one transfer of the whole row, from one core
                    libshmem_device.putmem(buf_ptr, x_ptr, K * 4, peer)

            @triton.jit
            def pull_rows_shmem(buf_ptr, x_ptr, K):
                peer = (libshmem_device.my_pe() + 1) % libshmem_device.n_pes()
                if tl.program_id(0) == 0:
                    libshmem_device.getmem_nbi(buf_ptr, x_ptr, K * 4, peer)
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
            def push_rows(buf_ptr, x_ptr, K):
                peer = (dl.rank() + 1) % dl.num_ranks()
                libshmem_device.putmem(buf_ptr, x_ptr, K * 4, peer)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def pipelined(buf_ptr, x_ptr, signal_ptr, M, peer, BLOCK_M: tl.constexpr):
                for rnd in range(tl.cdiv(M, BLOCK_M)):
                    token = dl.wait(dl.symm_at(signal_ptr, peer), 1, "gpu", "acquire", waitValue=0)
                    dst = dl.consume_token(buf_ptr, token)
                    libshmem_device.putmem(dst, x_ptr + rnd * BLOCK_M, BLOCK_M * 4, peer)
                    dl.notify(signal_ptr, peer, signal=rnd + 1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def to_every_pe(buf_ptr, x_ptr, nbytes, n_pes, STEP: tl.constexpr):
                for pe in range(tl.program_id(0), n_pes, STEP):
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def repeated(buf_ptr, x_ptr, nbytes, peer, K, BLOCK: tl.constexpr):
                for k in range(0, K, BLOCK):
                    tl.store(x_ptr + k + tl.arange(0, BLOCK), 0.0)
                    libshmem_device.quiet()
                libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def send_selected_rows(buf_ptr, x_ptr, row_ids_ptr, n_rows, peer, ROW: tl.constexpr, BLOCK: tl.constexpr):
                for tile in range(tl.cdiv(n_rows, BLOCK)):
                    first = tile * BLOCK
                    for i in range(tl.minimum(BLOCK, n_rows - first)):
                        row = tl.load(row_ids_ptr + first + i)
                        libshmem_device.putmem_nbi(buf_ptr + (first + i) * ROW, x_ptr + row * ROW, ROW * 2, peer)
                    libshmem_device.quiet()
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            is_constexpr = self.context.analysis(dist.kernel).is_constexpr
            for call in dist.calls_to(*sorted(UDMA_CALLS)):
                if _tile_loop_of(dist, call, is_constexpr) is not None:
                    self.report(call, self.message.format(call=dist.qualname_of(call).split(".")[-1]))


def _tile_loop_of(dist: DistAnalysis, call: cst.Call, is_constexpr) -> cst.For | None:
    name = dist.qualname_of(call)
    pe = udma_argument(call, name, "pe")
    moved = [udma_argument(call, name, role) for role in ("dest", "source", "bytes")]
    for loop in dist.enclosing_loops(call):
        if type(loop) is not cst.For or type(loop.target) is not cst.Name:
            continue
        if any(dist.calls_in(loop, PIPELINE_SYNC)):
            return None  # this loop and every loop around it synchronise per iteration
        variable = {loop.target.value}
        if pe is not None and dist.depends_on(pe, variable):
            continue
        follows_loop = any(e is not None and dist.depends_on(e, variable) for e in moved)
        if follows_loop and _steps_over_tiles(dist, loop.iter, is_constexpr):
            return None if _gathers(dist, loop, moved[:2]) else loop
    return None


def _gathers(dist: DistAnalysis, loop: cst.For, addresses: list) -> bool:
    """An address comes from an index loaded inside the loop (`row = tl.load(idx_ptr + i)`): each call moves
    a different, non-adjacent piece, so no single call can cover them."""
    body = loop.body
    for address in addresses:
        if address is None:
            continue
        for definition in dist.definitions_reaching(address):
            statement = definition.statement
            if definition.value is None or statement is None:
                continue
            if not any(ancestor is body for ancestor in dist.index.ancestors(statement)):
                continue  # defined before the loop: the same for every tile
            if any(dist.qualname_of(node) == "tl.load" for node in _calls(dist, definition.value)):
                return True
    return False


def _calls(dist: DistAnalysis, expr: cst.BaseExpression) -> list[cst.Call]:
    return [node for node in (expr, *dist.below(expr)) if type(node) is cst.Call]


def _steps_over_tiles(dist: DistAnalysis, iterable: cst.BaseExpression, is_constexpr) -> bool:
    """`range(a, b, BLOCK)` with a constexpr step other than 1, or a stop counted with `tl.cdiv`."""
    if not dist.is_range(iterable):
        return False
    positional = [a.value for a in iterable.args if a.keyword is None]
    if not positional:
        return False
    stop = positional[1] if len(positional) > 1 else positional[0]
    step = call_argument(iterable, 2, "step")
    if step is not None and not is_integer(step, 1) and is_constexpr(step):
        return True
    return dist.derives_from_call(stop, {"tl.cdiv", "triton.cdiv"}, through_loops=False)
