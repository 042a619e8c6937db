"""``--fix`` never corrupts a file: whatever fails, the original is intact; what is written keeps the file's form."""

from __future__ import annotations

import os
import stat

import pytest

from ascendlint.linter import engine, runner
from ascendlint import fixes
from ascendlint.files import source
from ascendlint.workspace.config import Settings
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.edits import replace
from ascendlint.catalog.registry import all_rules
from ascendlint.rule import Rule
from tests.robustness.conftest import FIXED_KERNEL, KERNEL


class _BreaksTheCode(Rule):
    """Test-only rule: "fixes" every ``pass`` into text that does not parse."""

    code = "ASC990"
    name = "breaks-the-code"
    message = "pass statement"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = "test"

    def visit_Pass(self, node):
        self.report(node, edits=lambda loc: [replace(loc, node, "pass (")])


class _NeedsUnicode(Rule):
    """Test-only rule: renames every ``pass`` to a non-ASCII statement."""

    code = "ASC991"
    name = "needs-unicode"
    message = "pass statement"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = "test"

    def visit_Pass(self, node):
        self.report(node, edits=lambda loc: [replace(loc, node, "λ = 1")])


def _builtin(code: str):
    return next(rule for rule in all_rules() if rule.code == code)


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return path


def _leftovers(folder) -> list[str]:
    return [name for name in os.listdir(folder) if name.startswith(".ascendlint-")]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_failed_write_or_rename_leaves_the_original_intact_and_exits_2(run_in_process, kernel, monkeypatch, failing):
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(source.os, failing, fail)
    result = run_in_process("check", str(kernel), "--fix", "--no-cache", "--format", "concise")
    assert result.exit_code == 2
    assert "could not write fixes: No space left on device" in result.stderr
    assert "ASC101" in result.stdout  # the fix did not happen, so the finding is still reported
    assert kernel.read_text() == KERNEL
    assert _leftovers(kernel.parent) == []


def test_fix_keeps_mode_and_writes_through_a_symlink(cli, kernel, tmp_path):
    kernel.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(kernel)
    result = cli("check", str(link), "--fix")
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and kernel.read_text() == FIXED_KERNEL
    assert stat.S_IMODE(kernel.stat().st_mode) == 0o640


@pytest.mark.parametrize("content", [FIXED_KERNEL, KERNEL.replace("num_warps=4)", "num_warps=4)  # noqa")],
                         ids=["clean", "suppressed"])
def test_nothing_to_fix_means_no_write(cli, tmp_path, content):
    path = tmp_path / "k.py"
    path.write_text(content)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.stat()
    assert cli("check", str(path), "--fix").returncode == 0
    after = path.stat()
    assert (after.st_mtime_ns, after.st_ino) == (before.st_mtime_ns, before.st_ino)


def test_file_changed_on_disk_during_the_run_is_not_overwritten(run_in_process, kernel, monkeypatch):
    process_bytes = runner.Linter.process_bytes

    def edit_meanwhile(self, data, filename, path, options, *rest):
        outcome = process_bytes(self, data, filename, path, options, *rest)
        kernel.write_text(KERNEL + "# edited by someone else\n")
        return outcome

    monkeypatch.setattr(runner.Linter, "process_bytes", edit_meanwhile)
    result = run_in_process("check", str(kernel), "--fix", "--no-cache", "--jobs", "1")
    assert result.exit_code == 2
    assert "changed on disk while it was being linted" in result.stderr
    assert kernel.read_text().endswith("# edited by someone else\n")


def test_fix_whose_result_does_not_parse_is_refused_and_good_fixes_still_apply():
    rules = [_BreaksTheCode, _builtin("ASC101")]
    code = KERNEL + "\ndef f():\n    pass\n"
    outcome = fixes.fix_text(code, lambda text: engine.lint_text(text, "k.py", rules), unsafe=True)
    assert [d.code for d in outcome.rejected] == ["ASC990"]
    assert [d.code for d in outcome.fixed] == ["ASC101"]
    assert outcome.text == FIXED_KERNEL + "\ndef f():\n    pass\n"


def test_refused_fix_is_announced_by_the_cli(tmp_path, monkeypatch, run_in_process):
    from ascendlint import cli as cli_module

    path = tmp_path / "k.py"
    path.write_text("import triton\n\ndef f():\n    pass\n")
    monkeypatch.setattr(cli_module, "_enabled_rules", lambda *args: [_BreaksTheCode])
    result = run_in_process("check", str(path), "--fix", "--no-cache")
    assert "fix for ASC990 at" in result.stderr and "the result does not parse" in result.stderr
    assert path.read_text() == "import triton\n\ndef f():\n    pass\n"


def test_fix_the_declared_encoding_cannot_hold_is_not_written(tmp_path):
    path = tmp_path / "k.py"
    original = b"# coding: ascii\nimport triton\n\ndef f():\n    pass\n"
    path.write_bytes(original)
    linter = runner.Linter([_NeedsUnicode], Settings(root=tmp_path))
    result = linter.process_path(path, runner.Options(fix=True))
    assert result.error and "cannot be encoded as ascii" in result.error
    assert path.read_bytes() == original


BLOCK_STORE = """\
import triton
import triton.language as tl

@triton.jit
def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (0, 0), (BT, BD), (1, 0))
    p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (0, 0), (BT, BD), (1, 0))
    tl.store(p_y, (tl.load(p_x, boundary_check=(0, 1))))
"""


@pytest.mark.parametrize(
    "code, rule, expected",
    [
        ("import triton\n\ndef run(k, x):\n    k[(1,)]((x), num_warps=4)\n", "ASC101",
         "import triton\n\ndef run(k, x):\n    k[(1,)]((x))\n"),
        (BLOCK_STORE, "ASC303", BLOCK_STORE.replace("(0, 1))))", "(0, 1))), boundary_check=(0, 1))")),
    ],
    ids=["delete-after", "insert-after"],
)
def test_fix_next_to_a_parenthesized_argument_is_applied(code, rule, expected):
    outcome = fixes.fix_text(code, lambda text: engine.lint_text(text, "k.py", [_builtin(rule)]), unsafe=True)
    assert outcome.rejected == []
    assert outcome.text == expected


def test_asc102_leaves_a_parameter_annotation_alone():
    """``B: tl.constexpr.to(tl.int32)`` (contrived, but it parses) was rewritten into ``tl.cast(tl.constexpr, ...)``
    in the signature: only ``.to()`` in the body is code the compiler runs on a constexpr."""
    from tests.helpers import lint

    text = ("import triton\nimport triton.language as tl\n\n@triton.jit\n"
            "def kernel(x_ptr, B: tl.constexpr.to(tl.int32), C: tl.constexpr = tl.constexpr(1).to(tl.int32),\n"
            "           D: tl.constexpr = 2):\n"
            "    tl.store(x_ptr, D.to(tl.int64))\n")
    found = lint(text, "ASC102")
    assert [(d.code, d.location.row) for d in found] == [("ASC102", 7)]
