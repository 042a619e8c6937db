"""Which rules a selection enables: ruff's specificity, plus opt-in rules that the bare default prefix skips."""

from __future__ import annotations

import pytest

from ascendlint.workspace import selection
from ascendlint.catalog.registry import all_rules

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


# -- ruff's layering of the command line, and upper-case codes ---------------------------------------------------


def test_ignore_all_on_the_command_line_turns_every_rule_off(cli, write):
    write("k.py", "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n")
    assert cli("check", "--no-cache", "k.py", cwd=write("x", "").parent).returncode == 1
    quiet = cli("check", "--no-cache", "--ignore", "ALL", "k.py", cwd=write("x", "").parent)
    assert quiet.returncode == 0, quiet.stdout
    kept = cli("check", "--no-cache", "--ignore", "ALL", "--extend-select", "ASC101", "--format", "concise", "k.py",
               cwd=write("x", "").parent)
    assert kept.returncode == 1 and "ASC101" in kept.stdout  # the more specific selector of the same layer wins


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
@pytest.mark.parametrize("selector", ["asc1", "Asc101", "asc"])
def test_lower_case_rule_selectors_are_refused_as_ruff_refuses_them(cli, write, option, selector):
    write("k.py", "import triton\n")
    result = cli("check", "--no-cache", option, selector, "k.py", cwd=write("x", "").parent)
    assert result.returncode == 2
    assert f"`{selector}`" in result.stderr and "upper case" in result.stderr


def test_lower_case_selectors_in_the_configuration_are_refused(cli, write):
    write("pyproject.toml", '[tool.ascendlint]\nselect = ["asc1"]\n')
    write("k.py", "import triton\n")
    result = cli("check", "--no-cache", "k.py", cwd=write("x", "").parent)
    assert result.returncode == 2 and "upper case" in result.stderr
