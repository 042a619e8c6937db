from ascendlint.compiler import findings, verdict
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class CompilerBufferOverflow(Rule):
    """Flags a launch or autotune config that the Ascend compiler rejects because an on-chip buffer overflows."""

    decides = """
    Each kernel is compiled by triton-ascend's frontend and BiShengIR at every configuration the code states,
    and the compiler's own verdict is reported, with its numbers, where the configuration is set.
    """

    code = "ASC307"
    name = "compiler-buffer-overflow"
    message = (
        "`{kernel}` does not fit on {target}: the compiler needs at least {required} KB of {scope}, {available} KB "
        "available, at {config}{sweep}{retry}: the compile fails"
    )
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    requires = "compiler"
    default = False
    opt_in_reason = (
        "runs the Ascend compiler (the `compiler` extra: triton-ascend and ascendnpu-ir), about 0.3 s per kernel and "
        "configuration on a cold cache; select it with `--compile` or `--extend-select ASC307`"
    )
    why = """
        One program's tiles live in the vector core's Unified Buffer (192 KB on A2/A3), its `tl.dot` accumulators in
        L0C (128 KB) and the cube's operands in L1 (512 KB). BiShengIR plans every buffer before it emits code and
        refuses a kernel that does not fit: `ub overflow, requires N bits while M bits available`. The launch never
        runs, and with autotuning the config is dropped only after a failed compile on the device. The compiler
        counts what an estimate cannot: its own temporaries, both copies of an upcast load, and multi-buffering,
        which triton-ascend turns on by default (`multibuffer=True`) and which can triple a loop's tiles.
    """
    fix_notes = """
        No automatic fix: shrink the block, loop over the long axis inside the kernel, or pass `multibuffer=False`
        for this config. The message says what the compiler asked for and what was assumed.
    """
    options = dict(findings.RULE_OPTIONS)
    options_notes = findings.OPTIONS_NOTES + """
    How it decides: the kernel's source is rebuilt from the linted text (the jit function, the jit helpers it calls,
    the literal module constants they read, the `triton` imports; nothing else of the module runs) and compiled in a
    separate process with a time and memory limit; verdicts are cached by content. The A2/A3 compiler retries an
    overflow with code motion and then multi-buffering off; the verdict is the first attempt's (the options the
    launch asked for), and the message says when a retry would fit. Pointer dtypes come from the host code where it
    shows them; integer arguments equal to 1 and innermost strides (`x.stride(-1)`) are specialised as the launcher
    does. See docs/compiler.md.
    """

    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(
                configs=[triton.Config({"BLOCK": 4096}), triton.Config({"BLOCK": 65536})],
                key=["n"],
            )
            @triton.jit
            def add(x, y, out, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                a = tl.load(x + offs, mask=offs < n)
                b = tl.load(y + offs, mask=offs < n)
                tl.store(out + offs, a + b, mask=offs < n)
            """,
            doc=True,
        ),
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def scale_rows(x, out, n_cols, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BLOCK)
                v = tl.load(x + row * n_cols + cols, mask=cols < n_cols).to(tl.float32)
                tl.store(out + row * n_cols + cols, v * 2.0, mask=cols < n_cols)

            def run(x):
                out = torch.empty_like(x)
                rows, n_cols = x.shape
                scale_rows[(rows,)](x, out, n_cols, BLOCK=triton.next_power_of_2(n_cols))
                return out
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(
                configs=[triton.Config({"BLOCK": 4096}), triton.Config({"BLOCK": 8192})],
                key=["n"],
            )
            @triton.jit
            def add(x, y, out, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                a = tl.load(x + offs, mask=offs < n)
                b = tl.load(y + offs, mask=offs < n)
                tl.store(out + offs, a + b, mask=offs < n)
            """,
            doc=True,
        ),
        Valid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def scale_rows(x, out, n_cols, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                for start in range(0, n_cols, BLOCK):
                    cols = start + tl.arange(0, BLOCK)
                    v = tl.load(x + row * n_cols + cols, mask=cols < n_cols).to(tl.float32)
                    tl.store(out + row * n_cols + cols, v * 2.0, mask=cols < n_cols)

            def run(x):
                out = torch.empty_like(x)
                rows, n_cols = x.shape
                scale_rows[(rows,)](x, out, n_cols, BLOCK=min(triton.next_power_of_2(n_cols), 4096))
                return out
            """,
        ),
    ]

    @classmethod
    def environment(cls) -> str:
        return findings.environment()

    def finish(self) -> None:
        for outcome in findings.module_outcomes(self.facts, self.settings):
            scope = outcome.verdict.overflow if outcome.verdict.status == verdict.OVERFLOW else None
            if scope is None:
                continue
            request = outcome.request
            sweep = (f"; `{request.runtime}` is sized at run time and overflows from {outcome.overflow_from}"
                     if request.runtime else "")
            retry = (" (multi-buffering, as launched; the compiler's own retry without it fits, which the launch "
                     "did not ask for)" if outcome.verdict.fits_after_retry else "")
            self.report(findings.anchor_for(outcome), self.message.format(
                kernel=request.kernel.name, target=outcome.target, required=findings.kib(scope.required_bits),
                scope=scope.label, available=findings.kib(scope.available_bits),
                config=findings.describe_config(outcome), sweep=sweep, retry=retry))
