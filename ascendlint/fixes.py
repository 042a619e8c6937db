"""Applying fixes: non-overlapping edits together, then re-lint, until nothing more applies.

Like ruff, overlapping fixes wait for the next round (the re-lint produces them again against the updated text).
A round whose result does not parse is retried fix by fix, and a fix that breaks the file is dropped and reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .diagnostics import Applicability, Diagnostic, Edit
from .source import parse_module

MAX_ROUNDS = 20


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    if fix is None:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return unsafe and fix.applicability is Applicability.UNSAFE


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    parts, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        parts.append(text[cursor : edit.start])
        parts.append(edit.content)
        cursor = edit.end
    parts.append(text[cursor:])
    return "".join(parts)


def _overlaps(edit: Edit, taken: list[tuple[int, int]]) -> bool:
    for start, end in taken:
        if edit.start < end and start < edit.end:
            return True
        if edit.start == edit.end == start or (edit.start == edit.end and start < edit.start < end):
            return True
    return False


def select_non_overlapping(diagnostics: Sequence[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    chosen: list[Diagnostic] = []
    taken: list[tuple[int, int]] = []
    for diagnostic in sorted(
        (d for d in diagnostics if applicable(d, unsafe)), key=lambda d: (d.fix.edits[0].start, d.code)
    ):
        edits = diagnostic.fix.edits
        if any(_overlaps(edit, taken) for edit in edits):
            continue
        chosen.append(diagnostic)
        taken.extend((edit.start, edit.end) for edit in edits)
    return chosen


def parses(text: str) -> bool:
    try:
        parse_module(text)
    except Exception:  # noqa: BLE001 - any parser failure means "does not parse"
        return False
    return True


@dataclass
class FixOutcome:
    text: str
    fixed: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    rejected: list[Diagnostic] = field(default_factory=list)


def fix_text(text: str, lint: Callable[[str], list[Diagnostic]], unsafe: bool = False) -> FixOutcome:
    """Apply fixes repeatedly; ``lint`` re-lints a text. Returns the final text and what was fixed or refused."""
    outcome = FixOutcome(text=text)
    rejected_keys: set[tuple] = set()
    diagnostics = lint(text)
    for _ in range(MAX_ROUNDS):
        candidates = [d for d in diagnostics if _key(d, text) not in rejected_keys]
        chosen = select_non_overlapping(candidates, unsafe)
        if not chosen:
            break
        updated = apply_edits(text, [e for d in chosen for e in d.fix.edits])
        if not parses(updated):
            updated, chosen = _apply_one_by_one(text, chosen, outcome, rejected_keys)
            if not chosen:
                continue
        if updated == text:
            break
        text = updated
        outcome.fixed.extend(chosen)
        diagnostics = lint(text)
    outcome.text = text
    outcome.remaining = diagnostics
    return outcome


def _apply_one_by_one(text, chosen, outcome, rejected_keys):
    kept = []
    for diagnostic in chosen:
        if parses(apply_edits(text, diagnostic.fix.edits)):
            kept.append(diagnostic)
        else:
            outcome.rejected.append(diagnostic)
            rejected_keys.add(_key(diagnostic, text))
    if not kept:
        return text, []
    updated = apply_edits(text, [e for d in kept for e in d.fix.edits])
    if parses(updated):
        return updated, kept
    first = kept[0]
    return apply_edits(text, first.fix.edits), [first]


def _key(diagnostic: Diagnostic, text: str) -> tuple:
    """Identifies a fix by what it replaces and with what, not where: other fixes shift offsets between rounds."""
    edits = diagnostic.fix.edits if diagnostic.fix else ()
    return (diagnostic.code, diagnostic.message, tuple((text[e.start : e.end], e.content) for e in edits))
