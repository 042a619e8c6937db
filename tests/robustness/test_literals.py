"""Integer literals in every base and of every length: no rule crashes, the shared analyses are never left
half-built, and a literal CPython refuses (over 4,300 digits) is ASC001 as CPython words it."""

from __future__ import annotations

import time

import pytest

from ascendlint.analysis import values
from ascendlint.analysis.literals import integer_of
from tests.helpers import lint

KERNEL = """\
import triton
import triton.language as tl


@triton.jit(do_not_specialize=[{zero}])
def kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr, WIDTH: tl.constexpr):
    pid = tl.program_id({zero})
    offs = pid * BLOCK * stride + tl.arange({zero}, BLOCK)
    block = tl.make_block_ptr(x_ptr, shape=(n, WIDTH), strides=(stride, {one}), offsets=(pid * BLOCK, {zero}),
                              block_shape=(BLOCK, WIDTH), order=({one}, {zero}))
    tile = tl.load(block)
    total = tl.sum(tile, axis={one})
    tl.store(y_ptr + offs, total)


def launch(x, y, n):
    kernel[(n,)](x, y, n, x.stride({zero}), BLOCK={block}, WIDTH=8, num_warps=4)
"""
SPELLINGS = {
    "decimal": {"zero": "0", "one": "1", "block": "128"},
    "hexadecimal": {"zero": "0x0", "one": "0x1", "block": "0x80"},
    "octal": {"zero": "0o0", "one": "0o1", "block": "0o200"},
    "binary": {"zero": "0b0", "one": "0b1", "block": "0b10000000"},
    "underscores": {"zero": "0_0", "one": "0x_1", "block": "1_28"},
}


def _findings(spelling: str) -> list[tuple[str, int, str]]:
    return [(d.code, d.location.row, d.message) for d in lint(KERNEL.format(**SPELLINGS[spelling]))]


@pytest.mark.parametrize("spelling", sorted(set(SPELLINGS) - {"decimal"}))
def test_every_base_gives_the_findings_of_the_decimal_spelling(spelling):
    """``do_not_specialize=[0x0]`` crashed 20 rules (ASC002), ``order=(0x0,)`` ASC503, ``axis=0x1`` ASC305."""
    found = _findings(spelling)
    assert not [f for f in found if f[0] == "ASC002"], found
    decimal = _findings("decimal")
    assert [(code, row) for code, row, _ in found] == [(code, row) for code, row, _ in decimal]


def test_ub_reads_literals_in_every_base(tmp_path):
    from click.testing import CliRunner

    from ascendlint.cli import main

    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(**SPELLINGS["hexadecimal"]), encoding="utf-8")
    result = CliRunner().invoke(main, ["ub", str(path)])
    assert result.exit_code == 0, result.output
    assert "failed unexpectedly" not in result.output


@pytest.mark.parametrize("text, value", [("0x10", 16), ("0o17", 15), ("0b101", 5), ("1_000", 1000), ("0", 0),
                                         ("00", 0), ("0777", 777), ("1" + "0" * 5000, 10**5000),
                                         ("1_" + "0" * 4999, 10**4999)],
                         ids=["hex", "octal", "binary", "underscores", "zero", "zeros", "python-2-octal",
                              "5001-digits", "5001-digits-underscore"])
def test_one_parser_reads_every_literal(text, value):
    assert integer_of(text) == value


def test_a_literal_over_4300_digits_is_refused_as_cpython_refuses_it():
    text = KERNEL.format(**SPELLINGS["decimal"]).replace("BLOCK=128", "BLOCK=1" + "0" * 5000)
    started = time.monotonic()
    found = lint(text)
    assert time.monotonic() - started < 2
    assert [d.code for d in found] == ["ASC001"]
    assert "Exceeds the limit (4300 digits)" in found[0].message and found[0].location.row == 17


def test_long_literals_cpython_accepts_are_linted():
    """Hexadecimal has no digit limit, and digits in strings or comments are not literals."""
    base = KERNEL.format(**SPELLINGS["decimal"])
    long_ones = base + "\nBIG = 0x" + "f" * 5000 + "\nTEXT = '" + "1" * 5000 + "'  # " + "2" * 5000 + "\n"
    assert [d.code for d in lint(long_ones)] == [d.code for d in lint(base)]


def test_a_shared_analysis_that_fails_once_is_built_again_not_shared_half_built(monkeypatch):
    """A rule that crashes while the shared value analysis is being built leaves nothing behind: the other rules
    get the analysis built afresh, so they report as they would have (one ASC002, for the rule that crashed)."""
    text = KERNEL.format(**SPELLINGS["decimal"])
    baseline = [(d.code, d.location.row) for d in lint(text, "ASC")]
    real_transfer = values.KernelAnalysis._transfer
    failures = []

    def fail_once(self, point, state):
        if not failures:
            failures.append(point)
            raise RuntimeError("the first build fails")
        return real_transfer(self, point, state)

    monkeypatch.setattr(values.KernelAnalysis, "_transfer", fail_once)
    found = [(d.code, d.location.row, d.extra.get("rule") if d.extra else None) for d in lint(text, "ASC")]
    crashed = [rule for code, _, rule in found if code == "ASC002"]
    assert failures and len(crashed) == 1
    assert [(code, row) for code, row, _ in found if code != "ASC002"] == [
        (code, row) for code, row in baseline if code != crashed[0]]
