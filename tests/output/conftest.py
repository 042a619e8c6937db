"""A small multi-file run with findings of every severity, fixes, non-ASCII text and a syntax error."""

from __future__ import annotations

import pytest

from ascendlint.linter import engine
from ascendlint.output import RunReport
from tests.helpers import rules_named

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)  # noqa: ASC301
    tl.store(x_ptr + offs, 0.0, mask=offs < n)


def run(x, n):
    kernel[(1,)](x, "ŝtrïng→", n, B=4, num_warps=4)
'''
BROKEN = "import triton\ndef f(:\n    pass\n"
# The rules these tests lean on: a fixed set, so that other rules' changes do not change the expectations.
# Findings: ASC003 (stale noqa, line 7) and ASC101 (line 12) in KERNEL, ASC001 in BROKEN.
RULES = ("ASC001", "ASC002", "ASC003", "ASC101")
SELECT = ",".join(RULES)


def lint_files(files: dict[str, str], unsafe_fixes: bool = False) -> RunReport:
    """Lint texts with every rule and build the report the CLI would give the formats."""
    diagnostics = []
    sources = {}
    for name, text in files.items():
        found = engine.lint_text(text, name, rules_named(*RULES))
        diagnostics.extend(found)
        if found:
            sources[name] = text
    return RunReport(diagnostics=diagnostics, sources=sources, unsafe_fixes=unsafe_fixes)


@pytest.fixture
def report() -> RunReport:
    return lint_files({"kernels/k.py": KERNEL, "kernels/broken.py": BROKEN})
