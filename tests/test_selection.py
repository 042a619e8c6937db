"""Which rules a selection enables: ruff's specificity, plus opt-in rules that the bare default prefix skips."""

from __future__ import annotations

import pytest

from ascendlint import selection
from ascendlint.registry import all_rules

RULES = all_rules()
OPT_IN = {rule.code for rule in RULES if not rule.default}


def codes(select, extend=(), ignore=()):
    return {rule.code for rule in selection.resolve(RULES, select, extend, ignore)}


def test_the_performance_advisories_are_opt_in():
    assert {"ASC407", "ASC501", "ASC502", "ASC503"} <= OPT_IN


def test_the_default_selection_runs_every_default_rule_and_no_opt_in_rule():
    enabled = codes(["ASC"])
    assert enabled == {rule.code for rule in RULES if rule.default}
    assert not enabled & OPT_IN


@pytest.mark.parametrize("selector", ["ASC5", "ASC50", "ASC503", "ALL"])
def test_a_selector_more_specific_than_the_default_prefix_enables_opt_in_rules(selector):
    assert "ASC503" in codes(["ASC"], extend=[selector])
    assert "ASC503" in codes([selector])


def test_ignore_still_wins_over_a_less_specific_opt_in_selector():
    assert "ASC503" not in codes(["ASC"], extend=["ASC5"], ignore=["ASC503"])
    assert "ASC501" in codes(["ASC"], extend=["ASC5"], ignore=["ASC503"])


def test_rule_listing_shows_the_tier(cli):
    listing = cli("rule", "--all").stdout
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC503]"))
    assert "| opt-in |" in row
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC101]"))
    assert "| yes |" in row
