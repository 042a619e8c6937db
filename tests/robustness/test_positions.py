"""Positions and fixes on text libcst does not print back exactly (form feeds), and the guard behind them:
no edit is ever applied where the file does not hold the text the rule saw under the edit's range."""

from __future__ import annotations

import glob

import libcst as cst
import pytest

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.text import locator
from ascendlint.text.codegen import generate
from ascendlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from ascendlint.text.locator import Locator
from ascendlint.text.text_positions import source_lines
from tests.helpers import fix, lint
from tests.robustness.harness import REPO

FORM_FEED_KERNEL = "import triton\n\ndef launch(x, n):\n    y = 1\n\f    k[(n,)](x, BLOCK=128, num_warps=4)\n"


def test_libcst_leaves_out_a_form_feed_at_the_start_of_an_indented_line():
    """The premise of the position mapping: if libcst ever prints this back exactly, the mapping is idle."""
    assert cst.parse_module(FORM_FEED_KERNEL).code == FORM_FEED_KERNEL.replace("\f", "")


def test_form_feed_before_an_indented_line_keeps_positions_exact():
    found = lint(FORM_FEED_KERNEL, "ASC101")
    assert [(d.code, d.location, d.end_location) for d in found] == [("ASC101", Location(5, 28), Location(5, 39))]
    edit = found[0].fix.edits[0]
    assert FORM_FEED_KERNEL[edit.start : edit.end] == edit.original == ", num_warps=4"


def test_form_feed_fix_removes_exactly_the_argument(cli, tmp_path):
    path = tmp_path / "ff.py"
    path.write_text(FORM_FEED_KERNEL)
    result = cli("check", str(path), "--no-cache", "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text() == FORM_FEED_KERNEL.replace(", num_warps=4", "")


@pytest.mark.parametrize("text", [
    "\fimport triton\n\ndef launch(x, n):\n    k[(n,)](x, num_warps=4)\n",
    "import triton\n\ndef launch(x, n):\n\f\f    y = 1\n\f    k[(n,)](x, num_warps=4)\n",
    "import triton\n\ndef launch(x, n):\n    y = 1\n\f\n    k[(n,)](x, \fnum_warps=4)\n",
    "import triton\n\ndef launch(x, n):\n    if n:\n        y = 1\n\f        k[(n,)](x, num_warps=4)\n",
], ids=["first-line", "two-lines", "kept-and-left-out", "nested"])
def test_every_form_feed_layout_fixes_only_the_argument(text):
    outcome = fix(text, "ASC101")
    assert outcome.text == text.replace(", num_warps=4", "").replace(", \fnum_warps=4", "")
    assert outcome.rejected == []


def test_the_code_frame_counts_rows_as_python_does():
    assert source_lines("a\n\fb\r\nc\u2028d\n") == ["a", "\fb", "c\u2028d"]
    assert source_lines("a\n\fb\n", keepends=True) == ["a\n", "\fb\n"]


def test_the_code_frame_of_a_form_feed_line_shows_that_line(cli, tmp_path):
    path = tmp_path / "ff.py"
    path.write_text(FORM_FEED_KERNEL)
    result = cli("check", str(path), "--no-cache")
    assert "5 | \f    k[(n,)](x, BLOCK=128, num_warps=4)" in result.stdout


# -- the guard: positions that are off are caught before anything is written ---------------------------------


@pytest.fixture
def positions_off_by_a_column(monkeypatch):
    """As before the mapping existed: positions read as (row, column) of the printed tree, a column off."""
    monkeypatch.setattr(locator._FormFeedsLeftOut, "between", classmethod(lambda cls, printed, text: None))


def test_a_fix_whose_range_holds_other_text_is_not_offered(positions_off_by_a_column):
    found = lint(FORM_FEED_KERNEL, "ASC101")
    assert [d.code for d in found] == ["ASC101"]  # the finding stays
    assert found[0].fix is None
    assert "is not the code the rule saw" in found[0].extra[fixes.REFUSED_NOTE]


def test_fix_refuses_and_reports_when_positions_are_off(run_in_process, tmp_path, positions_off_by_a_column):
    path = tmp_path / "ff.py"
    path.write_text(FORM_FEED_KERNEL)
    result = run_in_process("check", str(path), "--no-cache", "--fix", "--format", "concise")
    assert path.read_text() == FORM_FEED_KERNEL  # BLOCK=128 stays 128
    assert result.exit_code == 1
    assert "ASC101" in result.stdout
    assert f"fix for ASC101 at {path}:5:27 was discarded: the text under its range" in result.stderr


def _diagnostic_with(edit: Edit) -> Diagnostic:
    return Diagnostic("ASC999", "test", Severity.WARNING, "m", "f.py", Location(1, 1), Location(1, 1),
                      fix=Fix("fix", Applicability.SAFE, (edit,)))


def test_the_fixer_itself_never_applies_an_edit_over_other_text():
    """Defence in depth: an edit that reaches the fixer (cache, plugin, engine bug) is checked again."""
    text = "BLOCK = 128\n"
    stale = _diagnostic_with(Edit(9, 11, "4", original="12"))
    outcome = fixes.fix_text(text, lambda t: [stale] if t == text else [])
    assert outcome.text == text and outcome.fixed == []
    assert outcome.rejected == [stale]
    assert "('28')" in stale.extra[fixes.REFUSED_NOTE] and "('12')" in stale.extra[fixes.REFUSED_NOTE]


def test_the_fixer_applies_an_edit_whose_range_holds_its_original():
    text = "BLOCK = 128\n"
    good = _diagnostic_with(Edit(8, 11, "64", original="128"))
    outcome = fixes.fix_text(text, lambda t: [good] if t == text else [])
    assert outcome.text == "BLOCK = 64\n" and outcome.fixed == [good]


def test_an_edit_past_the_end_of_the_text_is_refused():
    assert fixes.mismatched_edit("abc", [Edit(2, 9, "")]) is not None
    assert fixes.mismatched_edit("abc", [Edit(1, 2, "x", original="b")]) is None


def test_edits_rules_build_themselves_carry_their_original_text():
    """The engine fills ``original`` for edits a rule builds by hand (ASC003 deletes comment text by offsets)."""
    text = "import triton\nx = 1  # noqa: ASC101\n"
    found = [d for d in lint(text, "ASC003") if d.fix]
    assert found and all(e.original == text[e.start : e.end] for d in found for e in d.fix.edits)


# -- the printer behind positions ------------------------------------------------------------------------------


def _printed(module, printer):
    state = locator._OffsetRecordingState(module.default_indent, module.default_newline)
    printer(module, state)
    return state


@pytest.mark.parametrize("path", sorted(glob.glob(str(REPO / "reference_kernels" / "*.py")))
                         + sorted(glob.glob(str(REPO / "ascendlint" / "*.py"))))
def test_the_iterative_printer_gives_libcsts_tokens_and_ranges(path):
    module = cst.parse_module(open(path, encoding="utf-8").read())
    recursive = _printed(module, lambda m, state: m._codegen(state))
    iterative = _printed(module, generate)
    assert iterative.tokens == recursive.tokens
    assert iterative.ranges == recursive.ranges


def test_the_locator_prints_trees_too_deep_for_libcsts_recursion():
    text = "x = (\n" + "    'ab'\n" * 3000 + ")\ny = 1\n"
    module = cst.parse_module(text)
    with pytest.raises(RecursionError):
        module.code  # libcst's own printing
    found = Locator(module, text)
    assert found.span(module.body[1]) == (Location(3003, 1), Location(3003, 6))
