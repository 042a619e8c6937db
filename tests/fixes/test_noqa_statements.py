"""``# noqa`` on statements that span lines, as ruff reads it: a finding on a line that ends inside a multi-line
string, or that a backslash continues, is suppressed at the end of that string or continuation."""

from __future__ import annotations

import pytest

from ascendlint.fixes import noqa
from ascendlint.fixes.add_noqa import add_noqa_to_text
from tests.helpers import lint

IN_STRING = '''import triton

def run(k, x):
    k[(1,)](x, num_warps=4, note="""
        a note that spans lines""")
'''
CONTINUED = '''import triton

def run(k, x):
    k[(1,)](x, num_warps=4) if x is not None \\
        else None
'''
F_STRING = '''import triton

def run(k, x):
    k[(1,)](x, num_warps=4, note=f"""{x}
        more""")
'''


@pytest.mark.parametrize("code, last_row", [(IN_STRING, 5), (CONTINUED, 5), (F_STRING, 5)])
def test_the_finding_is_suppressed_at_the_end_of_the_statement(code, last_row):
    assert [d.noqa_row for d in lint(code, "ASC101")] == [last_row]
    lines = code.splitlines()
    lines[last_row - 1] += "  # noqa: ASC101"
    suppressed = "\n".join(lines) + "\n"
    assert lint(suppressed, "ASC101", "ASC003") == []  # suppressed, and the directive is not stale


@pytest.mark.parametrize("code", [IN_STRING, CONTINUED, F_STRING])
def test_add_noqa_writes_the_directive_where_it_suppresses(code):
    outcome = add_noqa_to_text(code, lint(code, "ASC101"))
    assert outcome.added == 1 and outcome.skipped == []
    assert outcome.text.splitlines()[4].endswith("  # noqa: ASC101")
    assert lint(outcome.text, "ASC101", "ASC003") == []


def test_add_noqa_then_a_clean_run(cli, tmp_path):
    path = tmp_path / "launch.py"
    path.write_text(IN_STRING + CONTINUED.split("\n\n", 1)[1].replace("def run", "def run2"), encoding="utf-8")
    first = cli("check", "--no-cache", "--add-noqa", str(path))
    assert first.returncode == 0, first.stdout + first.stderr
    again = cli("check", "--no-cache", str(path))
    assert again.returncode == 0, again.stdout + again.stderr


def test_rows_of_strings_and_continuations_map_to_their_last_row():
    text = 'import triton\ns = """\na"""\nx = 1 + \\\n    2 + \\\n    3\ny = "a\\\nb"\nz = 1\n'
    assert noqa.statement_rows(text) == {2: 3, 4: 6, 5: 6, 7: 8}


def test_a_continuation_into_a_multi_line_string_is_one_statement():
    text = 'x = 1 + \\\n    len("""\nabc""")\n'
    assert noqa.statement_rows(text) == {1: 3, 2: 3}
