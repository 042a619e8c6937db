"""The rule pages in docs/rules/ are exactly what the rules' metadata renders (regenerate: python -m ascendlint.docs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendlint.docs import render_index, render_rule
from ascendlint.registry import all_rules

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_matches_rule_metadata(rule):
    page = DOCS / f"{rule.code}.md"
    assert page.exists(), f"missing {page}; run python -m ascendlint.docs"
    assert page.read_text(encoding="utf-8") == render_rule(rule)


def test_rule_index_lists_exactly_the_registered_rules():
    assert (DOCS / "index.md").read_text(encoding="utf-8") == render_index(all_rules())
    pages = {p.stem for p in DOCS.glob("ASC*.md")}
    assert pages == {r.code for r in all_rules()}
