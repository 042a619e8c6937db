from ascendlint.analysis.ub import uncapped_extents
from ascendlint.compiler import findings
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class TileExtentFromRuntimeSize(Rule):
    """Flags a tile extent the host computes from a runtime size with no cap."""

    decides = """
    A constexpr parameter that sizes a tile in the kernel (`tl.arange(0, BLOCK)`, `tl.zeros((BM, BN))`, a block
    pointer's `block_shape`) gets, at a launch, a value the host derives from the data: a shape entry or a size
    (`BLOCK_C = C` with `C` from `x.shape`, `triton.next_power_of_2(n)`, `next_power_of_2(cdiv(batch, 32))`).
    Reported on the host expression that computes the size (the assignment's value, or the launch argument).
    Not reported: sizes under `min(..., cap)`, a conditional cap (`4096 if C > 4096 else C`) or a guard that
    bounds them (`if N <= 1024:`, membership in a literal set of shapes, a predicate function that checks the
    shape, a key of a literal table, stated by every caller of a private launcher too), literals, tiles of a host loop that chunks the data, and sizes bounded by a
    small model dimension (head dims, heads, experts, conv widths), whose whole tile fits.
    """

    code = "ASC304"
    name = "tile-extent-from-runtime-size"
    message = (
        "tile extent `{param}` of `{kernel}` is sized from the data with no cap ({source}): the tile grows with "
        "the input until it overflows the Unified Buffer (192 KB)"
    )
    severity = Severity.WARNING
    fix_safety = FixSafety.NONE
    options = dict(findings.CONFIRM_OPTION)
    options_notes = findings.CONFIRM_NOTES
    default = False
    opt_in_reason = (
        "below the default bar: of 10 held-out findings read with their host code, 8 size a tile from a batch, a "
        "matrix or a hidden size with no cap (two of them the lines an upstream fix capped) and 2 are debatable; "
        "of 11 on the corpus, none is a clear overflow: 5 make a whole hidden or intermediate row one tile "
        "(an overflow only for large models) and 6 pad small counts (vocabulary blocks, draft tokens). Whether "
        "a size is large in production is often decided outside the module"
    )
    why = """
        Every tile a program holds lives in the vector core's Unified Buffer: 192 KB, all of which the compiler
        plans (probed against BiShengIR). A tile whose extent is the whole of a runtime size (a hidden size, a vocabulary, a
        row length, a batch) fits for the shapes the kernel was tried on and fails to compile, or spills, once
        the data is larger: an 8192-wide fp32 row is already 32 KB per tile, and a kernel holds several tiles at
        once. Real Ascend fixes capped `BLOCK_C = C` at 4096 and tiled a vocabulary-wide `tl.arange` in a loop.
    """
    fix_notes = """
        Cap the block (`BLOCK = min(triton.next_power_of_2(n), 4096)`) and loop over the runtime size inside the
        kernel with a mask (`for off in range(0, n, BLOCK)`), or split it over the grid. `ascendlint ub PATH`
        shows the estimated Unified Buffer use at each launch's values.
    """
    INVALID = [
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def rows_scale(x, w, y, C, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
                rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
                cols = tl.arange(0, BLOCK_C)
                offs = rows[:, None] * C + cols[None, :]
                v = tl.load(x + offs, mask=cols[None, :] < C, other=0.0).to(tl.float32)
                g = tl.load(w + cols, mask=cols < C, other=0.0).to(tl.float32)
                tl.store(y + offs, v * g[None, :], mask=cols[None, :] < C)

            def scale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                n, C = x.shape
                y = torch.empty_like(x)
                BLOCK_C = C
                rows_scale[(triton.cdiv(n, 4),)](x, w, y, C, ROWS=4, BLOCK_C=BLOCK_C)
                return y
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def recover(probs, out, vocab_size, PADDED: tl.constexpr):
                offs = tl.arange(0, PADDED)
                p = tl.load(probs + tl.program_id(0) * vocab_size + offs, mask=offs < vocab_size, other=0.0)
                tl.store(out + tl.program_id(0), tl.argmax(p, axis=0))

            def run(probs, out):
                batch, vocab_size = probs.shape
                recover[(batch,)](probs, out, vocab_size, triton.next_power_of_2(vocab_size))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def gather_rows(x, y, batch, BLOCK_B: tl.constexpr, D: tl.constexpr):
                rows = tl.arange(0, BLOCK_B)
                cols = tl.arange(0, D)
                tile = tl.load(x + rows[:, None] * D + cols[None, :], mask=rows[:, None] < batch, other=0.0)
                tl.store(y + cols, tl.sum(tile, axis=0))

            def run(x, y):
                batch = x.shape[0]
                BLOCK_B = triton.next_power_of_2(triton.cdiv(batch, 32))
                gather_rows[(32,)](x, y, batch, BLOCK_B, 128)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import torch
            import triton
            import triton.language as tl
            from triton.runtime import driver

            @triton.jit
            def row_scale(x, w, y, rows, C, BLOCK_C: tl.constexpr):
                for row in range(tl.program_id(0), rows, tl.num_programs(0)):
                    base = tl.cast(row, tl.int64) * C  # int64: rows * C passes 2^31 on large activations
                    for start in range(0, C, BLOCK_C):
                        cols = start + tl.arange(0, BLOCK_C)
                        v = tl.load(x + base + cols, mask=cols < C, other=0.0)
                        tl.store(y + base + cols, v * tl.load(w + cols, mask=cols < C, other=0.0), mask=cols < C)

            def scale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
                rows, C = x.shape
                y = torch.empty_like(x)
                BLOCK_C = 2048  # a fixed tile; the loop covers any C
                cores = driver.active.utils.get_device_properties(x.device.index)["num_vectorcore"]
                row_scale[(min(rows, cores),)](x, w, y, rows, C, BLOCK_C=BLOCK_C)
                return y
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def post(x, y, C, BLOCK_C: tl.constexpr):
                c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
                tl.store(y + c, tl.load(x + c, mask=c < C, other=0.0), mask=c < C)

            def run(x, y):
                B, S, C = x.shape
                BLOCK_C = 4096 if C > 4096 else C
                post[(B * S, triton.cdiv(C, BLOCK_C))](x, y, C, BLOCK_C)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def l1_norm(x, y, hidden_size: tl.constexpr):
                cols = tl.arange(0, hidden_size)
                v = tl.load(x + tl.program_id(0) * hidden_size + cols)
                tl.store(y + tl.program_id(0) * hidden_size + cols, v / tl.sum(tl.abs(v), axis=0))

            def run(x, y):
                hidden_size = x.shape[1]
                l1_norm[(x.shape[0],)](x, y, hidden_size)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rope(q, cos, T, H: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_H: tl.constexpr):
                d = tl.arange(0, BLOCK_D)
                h = tl.arange(0, BLOCK_H)
                v = tl.load(q + tl.program_id(0) * H * BLOCK_D + h[:, None] * BLOCK_D + d[None, :])
                tl.store(q + tl.program_id(0) * H * BLOCK_D + h[:, None] * BLOCK_D + d[None, :], v * 2)

            def run(q, cos):
                T, H, head_dim = q.shape
                rope[(T,)](q, cos, T, H, triton.next_power_of_2(head_dim), triton.next_power_of_2(H))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def norm(x, y, N, BLOCK: tl.constexpr):
                cols = tl.arange(0, BLOCK)
                tl.store(y + cols, tl.load(x + cols, mask=cols < N, other=0.0), mask=cols < N)

            def run(x, y):
                N = x.shape[-1]
                if N > 8192:
                    raise ValueError("row too wide")
                norm[(x.shape[0],)](x, y, N, 1024)
                BLOCK = triton.next_power_of_2(N)
                if BLOCK <= 8192:
                    norm[(x.shape[0],)](x, y, N, BLOCK)
            """
        ),
    ]

    @classmethod
    def environment(cls) -> str:
        return findings.environment()

    def finish(self) -> None:
        extents = uncapped_extents(self.facts, findings.pointer_dtype(self.settings))
        swept = {}
        if extents and findings.confirming(self.settings):
            swept = {(id(o.request.launch.call), o.request.runtime): o
                     for o in findings.module_outcomes(self.facts, findings.confirm_settings(self.settings))
                     if o.request.runtime is not None and o.request.launch is not None}
        for found in extents:
            outcome = swept.get((id(found.launch.call), found.param))
            if findings.accepted(outcome):
                continue  # the compiler fits the tile at every size up to the limit
            self.report(found.anchor, self.message.format(param=found.param, kernel=found.launch.kernel.name,
                                                          source=found.source) + findings.overflow_note(outcome))
