"""``--add-noqa``: suppress every current finding with a ``# noqa: CODE`` on the line it is reported on.

Used once when adopting ascendlint on existing code, so that only new findings fail the build, and the next run
passes: codes merge into an existing ``# noqa: ...``, stale codes (ASC003) are removed as ASC003's own safe fix
removes them, and any other comment on the line is kept. A finding's row is already the row its directive
goes on (the end of a multi-line string or backslash continuation, ``noqa.statement_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import noqa
from ..diagnostics import Diagnostic, Edit
from . import apply_edits, parses
from ..files.source import atomic_write, content_digest
from ..files.user_input import SourceDecodeError, decode_source, read_source_bytes, round_trips

# Findings a line comment cannot or should not hide: a file that does not parse, a crashed rule (use
# per-file-ignores), and a stale suppression (it is removed instead: suppressing it would be absurd).
UNUSED_NOQA = "ASC003"
NOT_SUPPRESSIBLE = frozenset({"ASC001", "ASC002", UNUSED_NOQA})


@dataclass
class NoqaOutcome:
    text: str
    added: int = 0  # number of codes written
    removed: int = 0  # number of stale directives edited (ASC003's fixes applied)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (row, reason)
    unwritten: bool = False  # comments were due but the file could not take them (the run then fails)


def add_noqa_to_text(text: str, diagnostics: Iterable[Diagnostic]) -> NoqaOutcome:
    """The text with ``# noqa`` codes added for ``diagnostics`` (which must come from linting this very text)."""
    wanted: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code in NOT_SUPPRESSIBLE or not diagnostic.noqa_row:
            continue
        codes = wanted.setdefault(diagnostic.noqa_row, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    outcome = NoqaOutcome(text)
    original = text
    stale = [d.fix for d in diagnostics if d.code == UNUSED_NOQA and d.fix is not None]
    if stale:  # ASC003 edits comments inside their lines only, so every other finding keeps its row
        text = apply_edits(text, [edit for fix in stale for edit in fix.edits])
        outcome.removed = len(stale) if text != original else 0
    if not wanted:
        if text != original and parses(text):
            outcome.text = text
        else:
            outcome.removed = 0
        return outcome
    facts = noqa.scan(text)
    by_row = {d.row: d for d in noqa.directives(facts)}
    edits = []
    for row, codes in sorted(wanted.items()):
        reason = _cannot_comment(text, facts, row)
        if reason:
            outcome.skipped.append((row, reason))
            continue
        edit, added = _edit_for_row(text, facts, by_row.get(row), row, sorted(codes))
        if edit is not None:
            edits.append(edit)
            outcome.added += added
    updated = apply_edits(text, edits)
    if updated != original and not parses(updated):  # never write a file that no longer parses
        outcome.skipped.extend((row, "the result would not parse") for row in sorted(wanted))
        outcome.added = outcome.removed = 0
        return outcome
    outcome.text = updated
    return outcome


def _cannot_comment(text: str, facts: noqa.LineFacts, row: int) -> str | None:
    if row > len(facts.line_starts):
        return "no such line"
    if row in facts.unsafe_rows:
        return "the line ends inside a string or continues with a backslash"
    if row == 1 and text.startswith("#!"):
        return "the first line is a shebang"
    return None


def _line_end(text: str, facts: noqa.LineFacts, row: int) -> int:
    """Offset just past the line's last character, before its line break."""
    end = facts.line_starts[row] - 1 if row < len(facts.line_starts) else len(text)
    if end > 0 and text[end - 1 : end] == "\r" and row < len(facts.line_starts):
        end -= 1
    return end


def _edit_for_row(text, facts, directive, row, codes) -> tuple[Edit | None, int]:
    if directive is not None:
        if not directive.codes:
            return None, 0  # a directive without codes already suppresses everything
        new = [c for c in codes if not any(c.startswith(listed) for listed in directive.codes)]
        if not new:
            return None, 0
        merged = noqa.with_codes(directive, [*directive.codes, *new])
        return Edit(directive.comment_start, directive.comment_end, merged), len(new)
    end = _line_end(text, facts, row)
    content_end = end
    while content_end > facts.line_starts[row - 1] and text[content_end - 1] in " \t":
        content_end -= 1
    return Edit(content_end, end, f"  # noqa: {', '.join(codes)}"), len(codes)


def add_noqa_to_file(path: Path, linted_text: str | None, diagnostics: list[Diagnostic]) -> NoqaOutcome:
    """Rewrite ``path`` in place, keeping its encoding, BOM and line endings; unchanged if it moved on since.

    The file is read and written with ``--fix``'s guards: read as ``check`` reads it (``user_input``), written only
    when the text read back from the written bytes is the text with the comments (a ``unicode_escape`` coding
    comment would turn every line break into ``\\n``), never over a file that changed since it was read, and a
    file that cannot be read or written is a reason given for that file, never the end of the run."""
    try:
        data = read_source_bytes(path)
        source = decode_source(data)
    except SourceDecodeError as exc:
        return NoqaOutcome(linted_text or "", skipped=[(0, f"cannot be decoded: {exc}")])
    except OSError as exc:
        return NoqaOutcome(linted_text or "", skipped=[(0, f"cannot be read: {exc.strerror or exc}")])
    if linted_text is not None and source.text != linted_text:
        return NoqaOutcome(linted_text, skipped=[(0, "the file changed while it was linted")])
    outcome = add_noqa_to_text(source.text, diagnostics)
    if outcome.text == source.text:
        return outcome
    try:
        written = source.encode(outcome.text)
    except UnicodeError as exc:
        refused = f"the text with comments cannot be written as {source.encoding} ({exc})"
    else:
        refused = None if round_trips(source, data, written, outcome.text) else (
            f"text written in the file's encoding ({source.encoding}) would not read back as the same text")
    if refused is None:
        try:
            atomic_write(str(path), written, content_digest(data))
            return outcome
        except OSError as exc:
            refused = f"the file cannot be written: {exc.strerror or exc}"
    return NoqaOutcome(source.text, skipped=[(0, refused)], unwritten=True)
