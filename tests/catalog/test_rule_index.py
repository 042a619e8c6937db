"""The rule index finds the built-in rules' files wherever the package sits (a checkout keeps ``checks/`` beside
``ascendlint/``, an installed package inside it), so a stored index that misses a built-in rule is rebuilt."""

from __future__ import annotations

from ascendlint.catalog import rule_index
from ascendlint.catalog.registry import all_rules


def test_the_built_in_rule_files_are_found_from_the_catalog():
    assert rule_index._builtin_folders(), "no checks/ folder found"
    built_in = {rule.code for rule in all_rules() if rule.__module__.startswith("ascendlint.checks.")}
    assert rule_index._builtin_codes() == built_in
