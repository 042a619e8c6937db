from ascendlint.compiler import findings, outcomes, verdict
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class CompilerRejectsKernel(Rule):
    """Flags a launch or autotune config at which triton-ascend's frontend or the Ascend compiler rejects the kernel."""

    decides = """
    The kernel is compiled as the launch states it; the compiler's first error line is reported where the
    configuration is set. An error caused by what could not be rebuilt here (a name the module defines at run time,
    an extension this frontend version lacks) is not a finding.
    """

    code = "ASC308"
    name = "compiler-rejects-kernel"
    message = "`{kernel}` does not compile for {target} at {config}{sweep}: {error}"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    requires = "compiler"
    default = False
    opt_in_reason = (
        "runs the Ascend compiler (the `compiler` extra: triton-ascend and ascendnpu-ir); select it with `--compile` "
        "or `--extend-select ASC308`"
    )
    why = """
        triton-ascend compiles a kernel the first time a launch reaches it, on the device. A kernel that its frontend
        or BiShengIR refuses (a `.to()` on a constexpr, a runtime-sized `tl.arange`, `overflow_mode=` on a tensor's
        `.to()`, a block pointer with 64-bit offsets) fails there, after the job has been scheduled on scarce NPU
        time. The same compiler runs offline: its verdict costs a fraction of a second.
    """
    fix_notes = "No automatic fix: the message carries the compiler's own words."
    options = dict(findings.RULE_OPTIONS)
    options_notes = findings.OPTIONS_NOTES
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def widen(x, out, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
                base = STEP.to(tl.int64) * tl.program_id(0)
                offs = base + tl.arange(0, BLOCK)
                tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

            def run(x, out):
                widen[(4,)](x, out, x.numel(), STEP=1024, BLOCK=1024)
            """,
            doc=True,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def widen(x, out, n, STEP: tl.constexpr, BLOCK: tl.constexpr):
                base = tl.cast(STEP, tl.int64) * tl.program_id(0)
                offs = base + tl.arange(0, BLOCK)
                tl.store(out + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

            def run(x, out):
                widen[(4,)](x, out, x.numel(), STEP=1024, BLOCK=1024)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from .tables import GROUP

            @triton.jit
            def grouped(x, out, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK) * GROUP
                tl.store(out + offs, tl.load(x + offs))

            def run(x, out):
                grouped[(1,)](x, out, BLOCK=64)
            """,
        ),
    ]

    @classmethod
    def environment(cls) -> str:
        return findings.environment()

    def finish(self) -> None:
        for outcome in findings.module_outcomes(self.facts, self.settings):
            if outcome.verdict.status != verdict.ERROR:
                continue
            request = outcome.request
            error = outcome.verdict.message
            if len(error) > 300:
                error = error[:297] + "..."
            sweep = (f"; `{request.runtime}` is sized at run time and is refused from {outcome.overflow_from}"
                     if request.runtime and (outcome.overflow_from or 0) > outcomes.SMALLEST_SWEPT else "")
            self.report(findings.anchor_for(outcome), self.message.format(
                kernel=request.kernel.name, target=outcome.target, config=findings.describe_config(outcome),
                sweep=sweep, error=error))
