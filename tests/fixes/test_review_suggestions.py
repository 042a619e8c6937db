"""Review suggestions that apply: each fixable finding's rdjson suggestion becomes one GitHub suggested change
(replayed with reviewdog's own rule, ``reviewdog_github.py``), and committing the suggestions reproduces what
``ascendlint check --fix --unsafe-fixes`` writes, byte for byte; the same for the SARIF ``fixes``."""

from __future__ import annotations

import json

import pytest

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.output import RunReport
from ascendlint.output.rdjson import rdjson_result
from ascendlint.output.sarif import sarif_log
from ascendlint.catalog.registry import all_rules

from . import reviewdog_github
from .cases import all_cases

FILENAME = "kernels/case.py"
CASES = [pytest.param(case, id=case.id) for case in all_cases()]
MAX_ROUNDS = 20


def _rules(case):
    return [r for r in all_rules() if r.code in case.lint_codes] if case.lint_codes else list(all_rules())


def _report(text: str, rules) -> RunReport:
    diagnostics = engine.lint_text(text, FILENAME, rules)
    return RunReport(diagnostics=diagnostics, sources={FILENAME: text}, unsafe_fixes=True)


def _expected(case) -> str:
    rules = _rules(case)
    return fixes.fix_text(case.original, lambda t: engine.lint_text(t, FILENAME, rules), unsafe=True).text


def _non_overlapping(changes):
    """Changes (first line, last line, apply) a reviewer can commit together: no two touch the same line."""
    chosen, taken = [], []
    for change in sorted(changes, key=lambda c: c[0]):
        if all(change[1] < first or change[0] > last for first, last, _ in taken):
            chosen.append(change)
            taken.append(change)
    return chosen


@pytest.mark.parametrize("case", CASES)
def test_every_fix_is_one_suggestion_that_reviewdog_posts_on_its_own_lines(case):
    result = rdjson_result(_report(case.original, _rules(case)))
    fixable = [d for d in result["diagnostics"] if "suggestions" in d]
    assert fixable, "no suggestion for a case the fixes change"
    for diagnostic in fixable:
        assert len(diagnostic["suggestions"]) == 1, diagnostic
        comment = reviewdog_github.review_comment(diagnostic, case.original.encode("utf-8"))
        assert comment.errors == [] and len(comment.suggestions) == 1, comment


@pytest.mark.parametrize("case", CASES)
def test_committing_the_suggestions_reproduces_fix(case):
    """Round by round, as a reviewer would: commit every suggestion that touches lines no other one touches,
    let the next review run post the rest."""
    rules, text = _rules(case), case.original
    for _ in range(MAX_ROUNDS):
        result = rdjson_result(_report(text, rules))
        changes = []
        for diagnostic in result["diagnostics"]:
            if "suggestions" not in diagnostic:
                continue
            comment = reviewdog_github.review_comment(diagnostic, text.encode("utf-8"))
            (block,) = comment.suggestions
            changes.append((comment.start_line, comment.end_line, (comment, block)))
        if not changes:
            break
        for _, _, (comment, block) in sorted(_non_overlapping(changes), key=lambda c: -c[0]):
            text = reviewdog_github.apply(text, comment, block)
    assert text == _expected(case)


@pytest.mark.parametrize("case", CASES)
def test_applying_the_sarif_fixes_reproduces_fix(case):
    rules, text = _rules(case), case.original
    for _ in range(MAX_ROUNDS):
        results = sarif_log(_report(text, rules))["runs"][0]["results"]
        changes = []
        for result in results:
            for fix in result.get("fixes", []):
                (change,) = fix["artifactChanges"]
                (replacement,) = change["replacements"]
                region = replacement["deletedRegion"]
                start, length = region["charOffset"], region["charLength"]
                changes.append((region["startLine"], region["endLine"], (start, start + length,
                                                                         replacement["insertedContent"]["text"])))
        if not changes:
            break
        assert len(changes) == sum(1 for r in results if r.get("fixes"))
        for _, _, (start, end, content) in sorted(_non_overlapping(changes), key=lambda c: -c[0]):
            text = text[:start] + content + text[end:]
    assert text == _expected(case)


def test_a_fix_on_two_lines_is_one_suggestion_covering_both():
    """ASC306 (ASC301's fix) inserts a reload above a multi-line dot and renames its operand below: one suggestion
    for both."""
    example = next(r for r in all_rules() if r.code == "ASC306").INVALID[0]
    report = _report(example.code, [r for r in all_rules() if r.code == "ASC306"])
    (diagnostic,) = rdjson_result(report)["diagnostics"]
    (suggestion,) = diagnostic["suggestions"]
    lines = example.code.splitlines()
    first = next(i for i, line in enumerate(lines, 1) if "language.dot(" in line)
    assert (suggestion["range"]["start"]["line"], suggestion["range"]["end"]["line"]) == (first, first + 1)
    assert suggestion["text"] == (
        "        # reloaded: tl.dot may overwrite its left operand on Ascend (ASC306)\n"
        "        b_q_c = language.load(q + offs, volatile=True)\n"
        "        acc = language.dot(\n"
        "            b_q_c,"
    )
    comment = reviewdog_github.review_comment(diagnostic, example.code.encode("utf-8"))
    assert (comment.start_line, comment.end_line, comment.errors) == (first, first + 1, [])


def test_the_replayed_rule_rejects_a_second_suggestion_on_other_lines():
    """Guards the replay: two suggestions on different lines give reviewdog's error for the second."""
    diagnostic = {
        "location": {"path": FILENAME, "range": {"start": {"line": 2, "column": 1}}},
        "suggestions": [
            {"range": {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}}, "text": "x = 0\n"},
            {"range": {"start": {"line": 2, "column": 5}, "end": {"line": 2, "column": 6}}, "text": "x"},
        ],
    }
    comment = reviewdog_github.review_comment(diagnostic, b"a = 1\nb = a\n")
    assert comment.suggestions == ["x = 0\na = 1\n"]
    assert comment.errors == [f"{reviewdog_github.SUGGESTION_ERROR}. L1-L1 v.s. L2-L2"]


def test_the_command_line_rdjson_carries_the_same_suggestions(cli, tmp_path):
    example = next(r for r in all_rules() if r.code == "ASC301").INVALID[1]
    path = tmp_path / "k.py"
    path.write_text(example.code, encoding="utf-8")
    run = cli("check", "--no-cache", "--select", "ASC301", "--unsafe-fixes", "--format", "rdjson", str(path))
    (diagnostic,) = json.loads(run.stdout)["diagnostics"]
    (block,) = reviewdog_github.review_comment(diagnostic, example.code.encode("utf-8")).suggestions
    comment = reviewdog_github.review_comment(diagnostic, example.code.encode("utf-8"))
    assert reviewdog_github.apply(example.code, comment, block) == example.fixed


def test_the_merged_sarif_fixes_pass_the_sarif_multitool(tmp_path):
    """Every case in one log, whole-line replacements included: no error or warning from Microsoft's validator."""
    from ascendlint import docs_links
    from tests.output.test_sarif import NO_ADDRESS_YET, _multitool_findings

    diagnostics, sources = [], {}
    for index, case in enumerate(all_cases()):
        name = f"kernels/case_{index}.py"
        diagnostics += engine.lint_text(case.original, name, _rules(case))
        sources[name] = case.original
    log = sarif_log(RunReport(diagnostics=diagnostics, sources=sources, unsafe_fixes=True))
    assert sum(len(r.get("fixes", [])) for r in log["runs"][0]["results"]) > len(sources)
    findings = _multitool_findings(log, tmp_path)
    expected = NO_ADDRESS_YET if docs_links.home_url() is None else set()
    assert [f for f in findings if f[1] in ("error", "warning") and f[0] not in expected] == []
