"""Suppression comments, the unused-noqa check (ASC003) beyond its examples, and ``--add-noqa``."""

from __future__ import annotations

import textwrap

import pytest

from ascendlint.linter import engine
from ascendlint.fixes import noqa
from ascendlint.fixes.add_noqa import add_noqa_to_text
from ascendlint.diagnostics import Severity
from ascendlint.rule import Rule
from tests.helpers import lint, rules_named

LAUNCHES = """
import triton

def run(k, x):
    k[(1,)](x, num_warps=4){first}
    k[(2,)](x){second}
"""


@pytest.mark.parametrize(
    "line, codes",
    [
        ("x = 1", None),
        ("x = 1  # a comment", None),
        ("x = 1  # noqa", ()),
        ("x = 1  # noqa:", ()),
        ("x = 1  # noqa: ASC101", ("ASC101",)),
        ("x = 1  # noqa:ASC101,asc2", ("ASC101", "ASC2")),
        ("x = 1  # NOQA: ASC301 - the hazard under test", ("ASC301",)),
        ("x = 1  # noqa: ASC101 because of the launcher", ("ASC101",)),
        ("x = 1  # noqa: ASC", ("ASC",)),
        ("x = 1  # noqa: E501, ASC101", ("E501", "ASC101")),
    ],
)
def test_noqa_codes_are_parsed_and_free_text_after_them_is_ignored(line, codes):
    assert noqa.noqa_codes(line) == codes


def test_a_code_that_suppresses_a_finding_is_not_reported_unused():
    code = LAUNCHES.format(first="  # noqa: ASC101", second="")
    assert lint(code, "ASC101", "ASC003") == []


def test_a_prefix_that_suppresses_a_finding_is_not_reported_unused():
    code = LAUNCHES.format(first="  # noqa: ASC1", second="")
    assert lint(code, "ASC101", "ASC003") == []


def test_only_the_stale_code_of_a_directive_is_reported_and_removed():
    code = LAUNCHES.format(first="  # noqa: ASC101, ASC102", second="  # noqa: ASC101")
    found = lint(code, "ASC101", "ASC003")
    assert [(d.code, d.location.row, d.message) for d in found] == [
        ("ASC003", 5, "Unused `noqa` code: ASC102 (not enabled: ASC102)"),
        ("ASC003", 6, "Unused `noqa` code: ASC101"),
    ]
    (edit,) = found[0].fix.edits
    assert textwrap.dedent(code)[edit.start : edit.end] == "# noqa: ASC101, ASC102"
    assert edit.content == "# noqa: ASC101"


def test_a_code_of_a_rule_that_is_not_enabled_is_reported_as_such():
    code = LAUNCHES.format(first="", second="  # noqa: ASC102")
    (finding,) = lint(code, "ASC003")
    assert finding.severity is Severity.WARNING
    assert finding.message == "Unused `noqa` code: ASC102 (not enabled: ASC102)"


def test_a_code_of_an_opt_in_rule_that_is_not_enabled_is_kept_for_the_runs_that_enable_it():
    code = LAUNCHES.format(first="  # noqa: ASC502", second="  # noqa: ASC5")
    assert lint(code, "ASC003") == []  # ASC5xx are all opt-in advisories
    enabled = lint(code, "ASC502", "ASC003")  # enabled, and nothing to suppress: stale
    assert [(d.code, d.location.row) for d in enabled] == [("ASC003", 5), ("ASC003", 6)]
    mixed = lint(LAUNCHES.format(first="  # noqa: ASC4", second=""), "ASC003")  # ASC4 holds default rules too
    assert [d.message for d in mixed] == ["Unused `noqa` code: ASC4 (not enabled: ASC4)"]


def test_a_code_naming_no_rule_is_reported_as_unknown():
    (finding,) = lint(LAUNCHES.format(first="", second="  # noqa: ASC998"), "ASC003")
    assert "unknown: ASC998" in finding.message


def test_unused_noqa_can_itself_be_suppressed():
    assert lint(LAUNCHES.format(first="", second="  # noqa: ASC102, ASC003"), "ASC003") == []


class _Crashing(Rule):
    """Test-only rule that crashes, so its suppressions cannot be judged."""

    code = "ASC997"
    name = "crashing"
    message = "never"
    severity = Severity.ERROR
    why = "test"

    def visit_Call(self, node):
        raise RuntimeError("boom")


def test_codes_of_a_crashed_rule_are_not_reported_unused():
    rules = [*rules_named("ASC002", "ASC003"), _Crashing]
    code = textwrap.dedent(LAUNCHES.format(first="", second="  # noqa: ASC997"))
    found = engine.lint_text(code, "k.py", rules)
    assert [d.code for d in found] == ["ASC002"]


# -- --add-noqa ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("k[(1,)](x, num_warps=4)", "k[(1,)](x, num_warps=4)  # noqa: ASC101"),
        ("k[(1,)](x, num_warps=4)   ", "k[(1,)](x, num_warps=4)  # noqa: ASC101"),
        ("k[(1,)](x, num_warps=4)  # kept", "k[(1,)](x, num_warps=4)  # kept  # noqa: ASC101"),
        ("k[(1,)](x, num_warps=4)  # noqa: E501", "k[(1,)](x, num_warps=4)  # noqa: E501, ASC101"),
        ("k[(1,)](x, num_warps=4)  # noqa: E501 - why", "k[(1,)](x, num_warps=4)  # noqa: E501, ASC101 - why"),
        ("k[(1,)](x, num_warps=4, num_stages=2)", "k[(1,)](x, num_warps=4, num_stages=2)  # noqa: ASC101"),
    ],
)
def test_add_noqa_writes_or_merges_the_directive_and_keeps_other_comments(line, expected):
    code = f"import triton\n\ndef run(k, x):\n    {line}\n"
    outcome = add_noqa_to_text(code, lint(code, "ASC101"))
    assert outcome.text.splitlines()[3] == f"    {expected}"
    assert outcome.added == 1
    assert lint(outcome.text, "ASC101", "ASC003") == []
    assert add_noqa_to_text(outcome.text, lint(outcome.text, "ASC101")).added == 0


def test_add_noqa_keeps_crlf_line_endings():
    code = "import triton\r\n\r\ndef run(k, x):\r\n    k[(1,)](x, num_warps=4)\r\n    return x\r\n"
    outcome = add_noqa_to_text(code, lint(code, "ASC101"))
    assert outcome.text == code.replace("num_warps=4)", "num_warps=4)  # noqa: ASC101")


@pytest.mark.parametrize(
    "code",
    [
        'import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4, doc="""\n    text""")\n',
        "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4) + \\\n        1\n",
    ],
    ids=["line-ends-inside-a-string", "backslash-continuation"],
)
def test_add_noqa_writes_at_the_end_of_a_statement_whose_line_end_is_not_code(code):
    outcome = add_noqa_to_text(code, lint(code, "ASC101"))
    assert outcome.added == 1 and outcome.skipped == []
    assert outcome.text.splitlines()[4].endswith("  # noqa: ASC101")  # where ruff reads it: the statement's end


def test_add_noqa_on_the_command_line_silences_the_file(cli, write):
    path = write("k.py", "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n")
    result = cli("check", "--no-cache", "--add-noqa", str(path))
    assert result.returncode == 0, result.stderr
    assert "Added 1 noqa code." in result.stderr
    assert "# noqa: ASC101" in path.read_text()
    assert cli("check", "--no-cache", str(path)).returncode == 0


STALE = "import triton\n\ndef run(k, x):\n    k[(1,)](x)  # noqa: ASC101, E501\n    k[(1,)](x, num_warps=4)  # noqa: ASC301\n"


def test_add_noqa_removes_stale_codes_so_that_the_next_run_passes():
    outcome = add_noqa_to_text(STALE, lint(STALE, "ASC101", "ASC301", "ASC003"))
    assert outcome.text.splitlines()[3:] == ["    k[(1,)](x)  # noqa: E501", "    k[(1,)](x, num_warps=4)  # noqa: ASC101"]
    assert (outcome.added, outcome.removed) == (1, 2)
    assert lint(outcome.text, "ASC101", "ASC301", "ASC003") == []


def test_add_noqa_on_the_command_line_leaves_a_clean_run_despite_stale_codes(cli, write):
    path = write("k.py", STALE)
    result = cli("check", "--no-cache", "--add-noqa", str(path))
    assert result.returncode == 0, result.stderr
    assert "Added 1 noqa code." in result.stderr and "Removed unused codes from 2 noqa comments." in result.stderr
    again = cli("check", "--no-cache", str(path))
    assert again.returncode == 0, again.stdout


def test_add_noqa_refuses_to_run_with_fix(cli, write):
    path = write("k.py", "import triton\n")
    result = cli("check", "--add-noqa", "--fix", str(path))
    assert result.returncode == 2 and "--add-noqa" in result.stderr
