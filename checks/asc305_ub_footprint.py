from ascendlint.analysis.ub import UB_BUDGET, estimates, kib
from ascendlint.compiler import findings
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class UbFootprint(Rule):
    """Flags a launch or autotune config whose estimated Unified Buffer use exceeds the 192 KB the compiler has."""

    decides = """
    At the constexpr values of each launch (or of each `triton.Config` of the kernel's autotune list), the tiles
    one program holds at once are estimated: loaded blocks, intermediates, accumulators and the index and mask
    tiles used as data, each binding of a name live from its assignment to its last use (to the end of a loop it
    is used in, across the whole loop when the loop carries it), an element-wise result reusing the buffer of an
    operand that dies at the same statement, at the element type the host shows (else `pointer-dtype`), with
    the loads a loop makes held twice and the tiles it stores given a pair of buffers under multi-buffering
    (triton-ascend's default), a load inside an expression and the narrow copy of an upcast load counted as the
    compiler's own buffers. Reported on the argument that sets the largest tile extent
    (or on the `triton.Config`) when the peak exceeds 192 KB. Configs whose tile shapes need a value the module
    does not give (a heuristic, a runtime size) are not estimated. Nothing here compiles for the NPU: the figure is
    an estimate, checked against real fixes that overflowed before and fit after (see below).

    How it is computed: tile shapes are folded at the config's constexpr values (`tl.arange`, `tl.zeros`, broadcasting,
    reductions, `tl.dot`, block pointers' `block_shape`, `keep_dims` reductions, `insert_slice`/`extract_slice`); each
    binding of a named tile is one buffer live from its assignment to its last use before the name is bound again; an
    element-wise result takes over the buffer of an operand read for the last time by the same statement (`b = a * 2`:
    one buffer, not two); index and mask tiles that only form addresses or masks of loads and stores are not counted
    (the compiler turns them into strided or bounded transfers), nor are compile hints reads of a tile; the estimate is
    the largest total of live buffers at any statement. What it leaves out: temporaries inside one expression, the
    compiler's scratch, alignment padding, helpers called from the kernel, and exclusive branches bound to different
    names (their tiles are counted together, an overestimate). What it was checked against (no NPU exists here, nothing
    compiles for one): the real-bug benchmark's UB-overflow fix of an rmsnorm backward (before: over the budget at
    BLOCK_SIZE_N=10240, BLOCK_SIZE_M=2; after, at 2048: under it), and the UB-overflow tutorial of the triton-ascend
    examples repository, whose NPU kernel (a 1024-element chunk in a loop) the estimate puts far under the budget; its
    GPU twin (`tl.arange(0, max_num_extend_tokens)`) is launched through a variable that picks the kernel at run time,
    which the analysis does not follow, so it is not estimated. Tiles feeding `tl.dot` and its accumulators live in the
    cube core's L1/L0 buffers and are left out; so are offset tiles used only as addresses.
    """

    code = "ASC305"
    name = "ub-footprint"
    message = (
        "one program of `{kernel}` needs ~{estimate} KB of {budget} KB of Unified Buffer at {config} "
        "(largest live tiles: {tiles}): the compile fails or the kernel spills"
    )
    severity = Severity.ADVISORY
    fix_safety = FixSafety.NONE
    options = dict(findings.CONFIRM_OPTION)
    options_notes = findings.CONFIRM_NOTES
    default = False
    opt_in_reason = (
        "an estimate, not a compile: a load of unknown dtype is taken as `pointer-dtype` (fp16), and exclusive "
        "branches bound to different names are counted together. Against BiShengIR on the corpus it agrees on "
        "104 of 114 compiled configurations (91%, tuned there, see docs/precision.md); opt-in until measured on "
        "trees it was not tuned on"
    )
    why = """
        The vector core's Unified Buffer is 192 KB, all of it planned by the compiler, and every tile a program holds
        lives there. A config that holds more fails to compile for Ascend (or spills to global memory): an rmsnorm
        backward of 2 x 10240 fp32 tiles holds five 80 KB tiles at once (~440 KB), and padding a 7168-wide row to 8192
        inside a multi-buffered loop (triton-ascend's default) holds every loaded block twice.
    """
    fix_notes = """
        Shrink the tile (a smaller block, fewer rows per program), loop over the long axis inside the kernel, drop
        multi-buffering for this config (`multibuffer=False`), or cast loaded tiles to fp32 only where needed. Run
        `ascendlint ub PATH` to see the estimate for every config and the tiles that make it up.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rms_bwd(dy, x, w, dx, n_cols, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
                rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
                cols = tl.arange(0, BLOCK_N)
                mask = cols[None, :] < n_cols
                offs = rows[:, None] * n_cols + cols[None, :]
                g = tl.load(dy + offs, mask=mask, other=0.0).to(tl.float32)
                v = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
                wv = tl.load(w + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
                m = g * wv[None, :]
                dot = tl.sum(m * v, axis=1)
                out = m - v * dot[:, None] / n_cols
                tl.store(dx + offs, out, mask=mask)

            def backward(dy, x, w, dx):
                rows, n_cols = x.shape
                rms_bwd[(triton.cdiv(rows, 4),)](dy, x, w, dx, n_cols, BLOCK_N=8192, BLOCK_M=4)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(
                configs=[
                    triton.Config({"BLOCK": 4096}),
                    triton.Config({"BLOCK": 32768}),
                ],
                key=["n"],
            )
            @triton.jit
            def add(x, y, z, n, BLOCK: tl.constexpr):
                for start in range(0, n, BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    a = tl.load(x + offs, mask=offs < n)
                    b = tl.load(y + offs, mask=offs < n)
                    c = a * a + b
                    d = c * b
                    tl.store(z + offs, c + d, mask=offs < n)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            from triton.runtime import driver

            @triton.jit
            def rms_bwd(dy, x, w, dx, n_rows, n_cols, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
                for first in range(tl.program_id(0) * BLOCK_M, n_rows, tl.num_programs(0) * BLOCK_M):
                    rows = first + tl.arange(0, BLOCK_M)
                    for start in range(0, n_cols, BLOCK_N):
                        cols = start + tl.arange(0, BLOCK_N)
                        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
                        offs = rows[:, None].to(tl.int64) * n_cols + cols[None, :]  # int64 past 2^31 elements
                        g = tl.load(dy + offs, mask=mask, other=0.0).to(tl.float32)
                        v = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
                        tl.store(dx + offs, g * v, mask=mask)

            def backward(dy, x, w, dx):
                rows, n_cols = x.shape
                cores = driver.active.utils.get_device_properties(x.device.index)["num_vectorcore"]
                grid = (min(triton.cdiv(rows, 2), cores),)
                rms_bwd[grid](dy, x, w, dx, rows, n_cols, BLOCK_N=2048, BLOCK_M=2)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics({"BLOCK_M": lambda args: 4096 // args["n_cols"]})
            @triton.jit
            def rows_kernel(x, y, n_cols, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
                rows = tl.arange(0, BLOCK_M)
                cols = tl.arange(0, BLOCK_N)
                v = tl.load(x + rows[:, None] * n_cols + cols[None, :])
                tl.store(y + rows[:, None] * n_cols + cols[None, :], v * 2)

            def run(x, y):
                rows_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK_N=16384)
            """
        ),
    ]

    @classmethod
    def environment(cls) -> str:
        return findings.environment()

    def finish(self) -> None:
        over = [e for e in estimates(self.facts, findings.pointer_dtype(self.settings)) if e.over and not e.unknown]
        verdicts = {}
        if over and findings.confirming(self.settings):
            verdicts = {(o.request.kernel.name, o.request.label): o
                        for o in findings.module_outcomes(self.facts, findings.confirm_settings(self.settings)) if o.request.job is not None}
        for estimate in over:
            outcome = verdicts.get((estimate.kernel.name, estimate.config.label))
            if findings.accepted(outcome):
                continue  # the compiler fits it: the estimate was wrong
            config = estimate.config
            anchor = config.anchor
            sized = [name for name in config.anchors if name in estimate.extents]
            if sized:
                anchor = config.anchors[max(sized, key=lambda name: config.values.get(name, 0))]
            tiles = ", ".join(f"{t.name} {'x'.join(map(str, t.shape))}" for t in estimate.live[:3])
            label = config.label + (" with multibuffer" if config.multibuffer else "")
            self.report(anchor, self.message.format(kernel=estimate.kernel.name, estimate=kib(estimate.bytes),
                                                    budget=kib(UB_BUDGET), config=label, tiles=tiles)
                        + findings.overflow_note(outcome))
