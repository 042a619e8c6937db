"""Small helpers shared by the tests: lint a snippet with chosen rules, apply fixes."""

from __future__ import annotations

import textwrap

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.catalog.registry import all_rules


def rules_named(*codes: str):
    chosen = [r for r in all_rules() if any(r.code.startswith(c) for c in codes)]
    assert chosen, f"no rule matches {codes}"
    return chosen


def lint(code: str, *codes: str, filename: str = "snippet.py", options: dict | None = None):
    rules = rules_named(*codes) if codes else list(all_rules())
    return engine.lint_text(textwrap.dedent(code), filename, rules, options)


def fix(code: str, *codes: str, unsafe: bool = True, options: dict | None = None) -> fixes.FixOutcome:
    rules = rules_named(*codes) if codes else list(all_rules())
    return fixes.fix_text(
        textwrap.dedent(code), lambda text: engine.lint_text(text, "snippet.py", rules, options), unsafe=unsafe
    )
