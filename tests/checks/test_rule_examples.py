"""Every rule's own examples are its tests: invalid code is flagged exactly `count` times, valid code never, and
the fixed source parses, lints clean for that rule, and does not change when fixed again."""

from __future__ import annotations

import pytest

from ascendlint import fixes
from ascendlint.catalog.registry import all_rules
from tests.helpers import fix, lint

RULES = [r for r in all_rules() if r.__module__.startswith("ascendlint.checks")]
INVALID = [pytest.param(r, i, e, id=f"{r.code}-invalid-{i}") for r in RULES for i, e in enumerate(r.INVALID)]
VALID = [pytest.param(r, i, e, id=f"{r.code}-valid-{i}") for r in RULES for i, e in enumerate(r.VALID)]
FIXED = [p for p in INVALID if p.values[2].fixed is not None]


def _skip_without_extra(rule) -> None:
    if rule.requires == "compiler":
        from ascendlint.compiler import missing

        if missing():
            pytest.skip(f"{rule.code} needs the compiler: {missing()}")


@pytest.mark.parametrize("rule, index, example", INVALID)
def test_invalid_example_is_flagged_exactly_count_times(rule, index, example):
    _skip_without_extra(rule)
    found = [d for d in lint(example.code, rule.code) if d.code == rule.code]
    assert len(found) == example.count, [f"{d.location}: {d.message}" for d in found]


@pytest.mark.parametrize("rule, index, example", VALID)
def test_valid_example_is_not_flagged(rule, index, example):
    found = [d for d in lint(example.code, rule.code) if d.code == rule.code]
    assert found == [], [f"{d.location}: {d.message}" for d in found]


@pytest.mark.parametrize("rule, index, example", FIXED)
def test_fix_produces_expected_source_that_is_clean_and_stable(rule, index, example):
    outcome = fix(example.code, rule.code)
    assert outcome.text == example.fixed
    assert fixes.parses(outcome.text)
    assert [d for d in lint(outcome.text, rule.code) if d.code == rule.code] == []
    assert fix(outcome.text, rule.code).text == outcome.text


@pytest.mark.parametrize("rule", [r for r in RULES if not r.tool_rule], ids=lambda r: r.code)
def test_every_rule_has_examples_and_documentation(rule):
    assert rule.INVALID and rule.VALID
    assert any(e.doc for e in rule.INVALID) and any(e.doc for e in rule.VALID)
    assert rule.summary() and rule.why.strip()
    assert rule.name == rule.name.lower() and " " not in rule.name


def test_rule_codes_and_names_are_unique():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
