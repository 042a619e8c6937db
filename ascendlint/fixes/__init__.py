"""Applying fixes: non-overlapping edits together, then re-lint, until nothing more applies.

Like ruff, overlapping fixes wait for the next round (the re-lint produces them again against the updated text).
A round whose result does not parse is retried fix by fix, and a fix that breaks the file is dropped and reported.
A fix with an edit whose range does not hold the text the rule saw there (``Edit.original``) is never applied: it
is dropped with a note (``REFUSED_NOTE`` in the diagnostic's ``extra``) and its finding stays.

Applying fixes is this package's ``__init__``, so that ``ascendlint.fixes`` keeps the path the command line, the
server and the linter import it by; suppressions (``noqa``, ``add_noqa``) live beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..diagnostics import Applicability, Diagnostic, Edit
from ..files.source import parse_module

MAX_ROUNDS = 20
REFUSED_NOTE = "fix_refused"  # key in Diagnostic.extra: why the fix was not applied
DOES_NOT_PARSE = "the result does not parse"


def mismatched_edit(text: str, edits: Sequence[Edit]) -> Edit | None:
    """The first edit whose range in ``text`` does not hold the text it was built against, if any."""
    for edit in edits:
        if edit.original is not None and text[edit.start : edit.end] != edit.original:
            return edit
        if not 0 <= edit.start <= edit.end <= len(text):
            return edit
    return None


def mismatch_note(text: str, edit: Edit) -> str:
    found = text[edit.start : edit.end]
    return (f"the text under its range ({_short(found)}) is not the code the rule saw ({_short(edit.original)}); "
            "positions in this file are unreliable")


def _short(text: str | None, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


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
        _refuse_stale(text, diagnostics, unsafe, outcome, rejected_keys)
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


def _refuse_stale(text, diagnostics, unsafe, outcome, rejected_keys) -> None:
    """Fixes whose edits do not match the text, and those the engine already refused, are announced once."""
    for diagnostic in diagnostics:
        if diagnostic.fix is None:
            note = diagnostic.extra.get(REFUSED_NOTE)
            if note is not None and (diagnostic.code, diagnostic.message, note) not in rejected_keys:
                rejected_keys.add((diagnostic.code, diagnostic.message, note))
                outcome.rejected.append(diagnostic)
            continue
        if not applicable(diagnostic, unsafe):
            continue
        edit = mismatched_edit(text, diagnostic.fix.edits)
        if edit is not None and _key(diagnostic, text) not in rejected_keys:
            rejected_keys.add(_key(diagnostic, text))
            diagnostic.extra[REFUSED_NOTE] = mismatch_note(text, edit)
            outcome.rejected.append(diagnostic)


def _apply_one_by_one(text, chosen, outcome, rejected_keys):
    kept = []
    for diagnostic in chosen:
        if parses(apply_edits(text, diagnostic.fix.edits)):
            kept.append(diagnostic)
        else:
            diagnostic.extra.setdefault(REFUSED_NOTE, DOES_NOT_PARSE)
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
