"""What every robustness test checks: all registered rules and all their fixes survive a text.

"Survive" means: no exception escapes the engine, no rule crashes (an ASC002 finding counts as a failure here),
the fixed text parses, a CRLF file stays CRLF, and fixing it again changes nothing. A fix the fixer refuses
because its result would not parse is kept apart: the file stays safe (the fix is never written), but it is a bug
in the rule's edit, which ``scripts/fuzz.py`` reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ascendlint import engine, fixes
from ascendlint.registry import all_rules

REPO = Path(__file__).resolve().parents[2]
_LONE_LF = re.compile(r"(?<!\r)\n")


@dataclass
class Verdict:
    """Problems found with one text (empty means it survived)."""

    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # fixes dropped because their result would not parse
    stale: list[str] = field(default_factory=list)  # fixes dropped because their range held other text

    def __bool__(self) -> bool:
        return not self.problems


def _rules():
    return list(all_rules())  # whatever is registered when the test runs, third-party plugins included


def examine(text: str, filename: str = "fuzzed.py") -> Verdict:
    """Lint and fix ``text`` with every registered rule, unsafe fixes included, and collect what went wrong."""
    rules = _rules()
    verdict = Verdict()
    crashes: dict[str, str] = {}

    def lint(candidate: str):
        found = engine.lint_text(candidate, filename, rules)
        for diagnostic in found:
            if diagnostic.code == engine.INTERNAL_ERROR:
                crashes.setdefault(diagnostic.extra.get("rule", "?"), diagnostic.message)
        return found

    try:
        outcome = fixes.fix_text(text, lint, unsafe=True)
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        verdict.problems.append(f"exception escaped: {type(exc).__name__}: {exc}")
        return verdict
    verdict.problems.extend(f"ASC002: {message}" for message in crashes.values())
    for diagnostic in outcome.rejected:
        reason = diagnostic.extra.get(fixes.REFUSED_NOTE, fixes.DOES_NOT_PARSE)
        kind = verdict.refused if reason == fixes.DOES_NOT_PARSE else verdict.stale
        kind.append(f"fix of {diagnostic.code} refused ({reason}): {diagnostic.message}")
    if outcome.text != text:
        if not fixes.parses(outcome.text):
            verdict.problems.append("fixed text does not parse")
        if "\n" in text and not _LONE_LF.search(text) and _LONE_LF.search(outcome.text):
            verdict.problems.append("a fix wrote LF line endings into a CRLF file")
        again = fixes.fix_text(outcome.text, lint, unsafe=True)
        if again.text != outcome.text:
            verdict.problems.append("fixing twice changed the text again")
    return verdict


def corpus() -> list[tuple[str, str]]:
    """(name, source) of every rule example and every bundled kernel module: realistic starting points."""
    found = []
    for rule in _rules():
        for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID)):
            found.extend((f"{rule.code}-{kind}-{i}", example.code) for i, example in enumerate(examples))
    for folder in ("reference_kernels", "examples"):
        for path in sorted((REPO / folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "triton" in text:
                found.append((f"{folder}/{path.name}", text))
    return found
