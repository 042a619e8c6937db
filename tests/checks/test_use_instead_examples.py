"""Every rule page's "use instead" example is code the linter accepts: linted with the default rule set, and with
every rule but the review sweeps (ASC110, ASC207, which report what cannot be proven either way), it gets no
finding at all. A page that recommends code another rule flags teaches the wrong thing."""

from __future__ import annotations

import pytest

from ascendlint.workspace import selection
from ascendlint.catalog.registry import all_rules
from tests.helpers import lint

RULES = [r for r in all_rules() if r.__module__.startswith("ascendlint.checks") and not r.tool_rule]
DEFAULT = [r.code for r in selection.resolve(all_rules(), ["ASC"])]
ALL_BUT_SWEEPS = [r.code for r in all_rules() if not getattr(r, "sweep", False)]
EXAMPLES = [pytest.param(rule, example, id=f"{rule.code}-{index}")
            for rule in RULES for index, example in enumerate(rule.VALID) if example.doc]


@pytest.mark.parametrize("codes", [DEFAULT, ALL_BUT_SWEEPS], ids=["default", "all-but-sweeps"])
@pytest.mark.parametrize("rule, example", EXAMPLES)
def test_the_use_instead_example_gets_no_finding(rule, example, codes):
    found = lint(example.code, *codes)
    assert found == [], [f"{d.location.row}:{d.location.column} {d.code} {d.message}" for d in found]


def test_the_sweeps_are_the_only_rules_left_out():
    assert sorted(set(r.code for r in all_rules()) - set(ALL_BUT_SWEEPS)) == ["ASC110", "ASC207"]
