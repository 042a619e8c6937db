"""A fix must not create another finding: after ``--fix --unsafe-fixes`` with every rule, linting again finds
nothing that was not there before (ASC203 widening a block-pointer offset into an ASC103 error, say)."""

from __future__ import annotations

import re
import textwrap
from collections import Counter

import pytest

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.edits import replace
from ascendlint.catalog.registry import all_rules
from ascendlint.rule import Rule

from .cases import BUNDLED, REPO

KNOWN_DEFECTS: dict[str, str] = {}  # case id -> why its fixes still create a finding (strict xfail)


def _sources():
    for rule in all_rules():
        for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID)):
            for index, example in enumerate(examples):
                yield f"{rule.code}-{kind}-{index}", textwrap.dedent(example.code)
    for path in BUNDLED:
        yield path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8")


SOURCES = [
    pytest.param(text, id=name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DEFECTS[name]))
    if name in KNOWN_DEFECTS else pytest.param(text, id=name)
    for name, text in _sources()
]


def finding_keys(diagnostics) -> Counter:
    """Findings by rule and message; line numbers inside messages move with the fixes and do not count."""
    return Counter((d.code, re.sub(r"\bline \d+", "line N", d.message)) for d in diagnostics)


def new_findings(text: str, rules=None) -> list[tuple[str, str]]:
    """What linting finds after ``--fix --unsafe-fixes`` that it did not find before."""
    rules = list(all_rules()) if rules is None else rules
    lint_text = lambda t: engine.lint_text(t, "case.py", rules)  # noqa: E731
    before = finding_keys(lint_text(text))
    after = finding_keys(lint_text(fixes.fix_text(text, lint_text, unsafe=True).text))
    return sorted((after - before).elements())


@pytest.mark.parametrize("text", SOURCES)
def test_fixes_introduce_no_new_finding(text):
    assert new_findings(text) == []


class _AddsNumWarps(Rule):
    """Test-only rule whose "fix" adds a launch keyword that ASC101 reports."""

    code = "ASC992"
    name = "adds-num-warps"
    message = "launch without num_warps"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = "test"

    def visit_Arg(self, node):
        if node.keyword is not None and node.keyword.value == "BLOCK":
            self.report(node, edits=lambda loc: [replace(loc, node, "BLOCK=64, num_warps=4")])


def test_a_fix_that_creates_a_finding_is_caught():
    """Guards the guard: the check reports a finding that only a fix brought."""
    source = "import triton\n\ndef run(x):\n    k[(1,)](x, BLOCK=64)\n"
    assert new_findings(source, [*all_rules(), _AddsNumWarps]) == [
        ("ASC101", "`num_warps` has no effect on Ascend's default (SIMD) path")
    ]


def line_origins(before: str, after: str) -> dict[int, int | None]:
    """Each line of ``after`` (1-based) -> the line of ``before`` it comes from; None for a line a fix inserted.
    A changed line keeps its place (the n-th line of a changed run comes from the run's n-th, or last, line)."""
    import difflib

    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    origins: dict[int, int | None] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for k in range(j2 - j1):
            origins[j1 + k + 1] = None if tag == "insert" else i1 + min(k, i2 - i1 - 1) + 1
    return origins


def new_at_shifted_lines(before: str, before_found, after: str, after_found) -> list[tuple]:
    """Findings of ``after`` that ``before`` has not at the line they come from: by rule, message (line numbers
    in it normalised) and line, positions shifted back through the fix; one on an inserted line is always new."""
    origins = line_origins(before, after)

    def key(diagnostic, row):
        return diagnostic.code, re.sub(r"\bline \d+", "line N", diagnostic.message), row

    old = Counter(key(d, d.location.row) for d in before_found)
    new = Counter(key(d, origins.get(d.location.row)) for d in after_found)
    return sorted((new - old).elements(), key=repr)
