"""What the compiler rules read: the outcomes for a module at a rule's options, and how a finding names them."""

from __future__ import annotations

from . import toolchain
from .jobs import DEFAULT_OPTIONS
from .outcomes import Outcome, outcomes

RULE_OPTIONS = {"targets": ["Ascend910B1"], "pointer-dtype": "fp16", "runtime-size-limit": 65536, "configs": {}}
OPTIONS_NOTES = """
    - `targets` (default `["Ascend910B1"]`): the chips to compile for. A2/A3 names (`Ascend910B1`-`B4`,
      `Ascend910_93xx`) use `bishengir-compile`; A5 names (`Ascend950...`, `Ascend910_95xx`) use
      `bishengir-compile-a5`.
    - `pointer-dtype` (default `"fp16"`): the element type assumed for a pointer argument whose dtype the host code
      does not show (pointers named like indices or offsets are assumed `i32`); the finding names what it assumed.
    - `runtime-size-limit` (default `65536`): a tile sized at run time (`triton.next_power_of_2(n)`) is compiled at
      powers of two from 16 up to this size, and the finding says from which size it overflows.
    - `configs` (default `{}`): configurations to compile besides those the code states, per kernel name:
      `configs = { rms_fwd = [{ BLOCK_N = 8192, x = "bf16", multibuffer = false }] }` (constexpr values, launch
      options, and the dtype of pointer parameters), for kernels whose launcher computes its constexprs at run time.
"""


def environment() -> str:
    """Part of the result cache's key: findings change when the compiler is installed, removed or upgraded."""
    versions = toolchain.versions()
    return f"frontend={versions['frontend']};compiler={versions['compiler']}"


def module_outcomes(facts, settings: dict) -> list[Outcome]:
    targets = settings.get("targets") or RULE_OPTIONS["targets"]
    if isinstance(targets, str):
        targets = [targets]
    declared = settings.get("configs") or {}
    if not isinstance(declared, dict):
        declared = {}
    return outcomes(facts, tuple(str(t) for t in targets), str(settings.get("pointer-dtype") or "fp16"),
                    int(settings.get("runtime-size-limit") or 65536),
                    {str(k): [dict(c) for c in v if isinstance(c, dict)] for k, v in declared.items()
                     if isinstance(v, list)})


def kib(bits: int) -> str:
    value = bits / 8 / 1024
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}".rstrip("0").rstrip(".")


def describe_config(outcome: Outcome) -> str:
    """``config 2 line 12: BLOCK_M=128, BLOCK_N=256; multibuffer=True; x, y assumed fp16``."""
    request = outcome.request
    values = {k: v for k, v in request.values.items() if k != request.runtime}
    parts = [", ".join(f"{k}={v}" for k, v in values.items())] if values else []
    options = {**DEFAULT_OPTIONS, **request.job.options} if request.job else {}
    if options.get("multibuffer"):
        parts.append("multibuffer=True" + ("" if "multibuffer" in (request.job.options or {}) else " (default)"))
    dtypes = sorted({d for d in (p.get("dtype") for p in request.job.params) if d}) if request.job else []
    if request.assumed:
        parts.append(f"{', '.join(sorted(request.assumed))} assumed {'/'.join(sorted(set(request.assumed.values())))}")
    elif dtypes:
        parts.append("/".join(dtypes))
    return f"{request.label}: {'; '.join(parts)}" if parts else request.label


def anchor_for(outcome: Outcome):
    """The argument that sets the largest tile extent, else the config or launch."""
    request = outcome.request
    if request.runtime and request.runtime in request.anchors:
        return request.anchors[request.runtime]
    sized = [n for n in request.anchors if isinstance(request.values.get(n), int)]
    if sized:
        return request.anchors[max(sized, key=lambda n: request.values[n])]
    return request.anchor


CONFIRM_OPTION = {"confirm-with-compiler": True, "pointer-dtype": RULE_OPTIONS["pointer-dtype"]}
CONFIRM_NOTES = """
    - `confirm-with-compiler` (default `true`): with the `compiler` extra installed, each finding is compiled at
      its configuration first; one the compiler accepts is not reported, and one it rejects carries its numbers.
    - `pointer-dtype` (default `"fp16"`): the element type of a pointer whose dtype the host code does not show
      (pointers named like indices or offsets, or whose values the kernel uses as integers, are `i32`); the
      estimate sizes its loads with it and the confirming compile assumes the same.
"""


def confirm_settings(settings: dict) -> dict:
    """The compile a static UB finding is confirmed with: at the pointer types the estimate assumed."""
    return {"pointer-dtype": pointer_dtype(settings)}


def pointer_dtype(settings: dict) -> str:
    return str(settings.get("pointer-dtype") or RULE_OPTIONS["pointer-dtype"])


def confirming(settings: dict) -> bool:
    return bool(settings.get("confirm-with-compiler", True)) and toolchain.available()


def overflow_note(outcome: Outcome | None) -> str:
    """`` (the compiler: at least 256 KB of UB, 192 KB available)`` for a confirmed overflow."""
    if outcome is None or outcome.verdict.status != "overflow" or outcome.verdict.overflow is None:
        return ""
    scope = outcome.verdict.overflow
    start = f", from {outcome.request.runtime}={outcome.overflow_from}" if outcome.overflow_from else ""
    return (f" (BiShengIR on {outcome.target}: at least {kib(scope.required_bits)} KB of {scope.label}, "
            f"{kib(scope.available_bits)} KB available{start})")


def accepted(outcome: Outcome | None) -> bool:
    """The compiler reached its last step at this configuration (at the runtime-size limit, when swept)."""
    return outcome is not None and outcome.verdict.status == "fits"
