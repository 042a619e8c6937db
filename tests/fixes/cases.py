"""The fixes the harness verifies: every rule example a rule fixes, and every fix on the bundled examples and the
reference kernels. A case is the text before and after ``--fix --unsafe-fixes`` and what changed in between."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.catalog.registry import all_rules

REPO = Path(__file__).resolve().parents[2]
BUNDLED = sorted((REPO / "examples").glob("*.py")) + sorted(
    p for p in (REPO / "reference_kernels").glob("*.py") if not p.name.startswith("_")
)


@dataclass(frozen=True)
class FixCase:
    id: str
    codes: tuple[str, ...]  # the rules whose fixes were applied
    original: str
    fixed: str
    lint_codes: tuple[str, ...]  # the rules the case is linted and fixed with
    fixed_counts: tuple[tuple[str, int], ...] = ()  # (code, how many of its findings were fixed)

    def fixed_count(self, code: str) -> int:
        return dict(self.fixed_counts).get(code, 0)

    @cached_property
    def changed_kernels(self) -> set[str]:
        """Names of the jit functions whose code differs (or that exist on one side only)."""
        before, after = _jit_functions(self.original), _jit_functions(self.fixed)
        return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}

    @cached_property
    def only_comments_changed(self) -> bool:
        return ast.dump(ast.parse(self.original)) == ast.dump(ast.parse(self.fixed))


def _rules(codes):
    return [rule for rule in all_rules() if rule.code in codes] if codes else list(all_rules())


def lint(text: str, codes: tuple[str, ...] = ()):
    return engine.lint_text(text, "case.py", _rules(codes))


def fix(text: str, codes: tuple[str, ...] = ()) -> fixes.FixOutcome:
    rules = _rules(codes)
    return fixes.fix_text(text, lambda t: engine.lint_text(t, "case.py", rules), unsafe=True)


def _jit_functions(text: str) -> dict[str, str]:
    """Each function decorated with a ``jit`` (any alias, any wrapper), as an AST dump: formatting and comments
    do not count as a change."""
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            body = ast.Module(body=node.body, type_ignores=[])
            found[node.name] = ast.dump(node.args) + ast.dump(body)
    return found


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "jit") or (
        isinstance(target, ast.Name) and target.id == "jit"
    )


def _case(case_id: str, text: str, lint_codes: tuple[str, ...]) -> FixCase | None:
    outcome = fix(text, lint_codes)
    if outcome.text == text:
        return None
    codes = tuple(sorted({d.code for d in outcome.fixed}))
    counts = tuple((code, sum(d.code == code for d in outcome.fixed)) for code in codes)
    return FixCase(case_id, codes, text, outcome.text, lint_codes, counts)


def rule_example_cases() -> list[FixCase]:
    """Every INVALID example whose own rule changes it under ``--fix --unsafe-fixes`` (with or without a
    ``fixed=`` expectation: a fix the examples do not spell out is verified all the same)."""
    found = []
    for rule in all_rules():
        for index, example in enumerate(rule.INVALID):
            case = _case(f"{rule.code}-example-{index}", textwrap.dedent(example.code), (rule.code,))
            if case is not None:
                found.append(case)
    return found


def bundled_cases() -> list[FixCase]:
    """Every bundled example and reference kernel that any rule changes (all rules, unsafe fixes included)."""
    found = []
    for path in BUNDLED:
        case = _case(path.relative_to(REPO).as_posix(), path.read_text(encoding="utf-8"), ())
        if case is not None:
            found.append(case)
    return found


def all_cases() -> list[FixCase]:
    return rule_example_cases() + bundled_cases()
