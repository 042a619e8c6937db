"""``rdjson``: reviewdog's diagnostic format, so ``reviewdog -f=rdjson -reporter=github-pr-review`` comments on PRs.

reviewdog counts columns in UTF-8 bytes (ascendlint counts characters), 1-based with exclusive ends. A fix the
run could apply (safe ones, and unsafe ones under ``--unsafe-fixes``) becomes one suggestion per finding that
replaces whole lines: from the start of the first line any of its edits touches to the end of the last one's
content, with the new text of those lines. reviewdog's ``github-pr-review`` reporter places the comment on the
lines of its first suggestion and posts a suggestion only when its lines are the comment's, so a fix whose edits
span two lines (a copy inserted above, the operand renamed below) still arrives as one suggested change that a
reviewer applies with one click.
"""

from __future__ import annotations

import json

from ..diagnostics import Applicability, Diagnostic, Location, Severity
from ..docs_links import home_url
from . import RunReport, register, sorted_diagnostics
from .notebook_raw import cell_label, raw_span
from .whole_lines import whole_line_edit

SOURCE = {"name": "ascendlint"}  # with the documentation URL (docs_links) added per run
SEVERITIES = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.ADVISORY: "INFO"}


class _Lines:
    """Converts character positions and offsets of one text into reviewdog's (line, UTF-8 byte column)."""

    def __init__(self, text: str | None) -> None:
        self.text = text
        self.starts = [0]
        if text is not None:
            index = text.find("\n")
            while index != -1:
                self.starts.append(index + 1)
                index = text.find("\n", index + 1)

    def position(self, location: Location) -> dict:
        if self.text is None or location.row > len(self.starts):
            return {"line": location.row, "column": location.column}
        begin = self.starts[location.row - 1]
        prefix = self.text[begin : begin + location.column - 1]
        return {"line": location.row, "column": len(prefix.encode("utf-8")) + 1}

    def offset_position(self, offset: int) -> dict:
        row = self._row_of(offset)
        return self.position(Location(row, offset - self.starts[row - 1] + 1))

    def _row_of(self, offset: int) -> int:
        low, high = 0, len(self.starts)
        while low < high:  # the last line start at or before offset
            middle = (low + high) // 2
            if self.starts[middle] <= offset:
                low = middle + 1
            else:
                high = middle
        return low


def _suggestions(diagnostic: Diagnostic, lines: _Lines, unsafe: bool) -> list[dict]:
    """One suggestion per fix, replacing every line the fix touches (see ``whole_lines``)."""
    fix = diagnostic.fix
    if fix is None or lines.text is None or not fix.edits:
        return []
    if fix.applicability is not Applicability.SAFE and not (unsafe and fix.applicability is Applicability.UNSAFE):
        return []
    edit = whole_line_edit(lines.text, fix.edits)
    return [
        {
            "range": {"start": lines.offset_position(edit.start), "end": lines.offset_position(edit.end)},
            "text": edit.content,
        }
    ]


def rdjson_result(report: RunReport) -> dict:
    lines_of: dict[str, _Lines] = {}
    raw_lines_of: dict[str, _Lines] = {}
    diagnostics = []
    for diagnostic in sorted_diagnostics(report.diagnostics):
        lines = lines_of.get(diagnostic.filename)
        if lines is None:
            lines = lines_of[diagnostic.filename] = _Lines(report.sources.get(diagnostic.filename))
        where = {"start": lines.position(diagnostic.location), "end": lines.position(diagnostic.end_location)}
        message = diagnostic.message
        if diagnostic.cell is not None:  # a cell position: placed in the stored .ipynb, the cell named
            message = f"{message} ({cell_label(diagnostic.cell, diagnostic.location)})"
            mapped = raw_span(diagnostic.filename, diagnostic.cell, diagnostic.location, diagnostic.end_location)
            if mapped is not None:
                book, start, end = mapped
                raw_lines = raw_lines_of.get(diagnostic.filename)
                if raw_lines is None:
                    raw_lines = raw_lines_of[diagnostic.filename] = _Lines(book.raw)
                where = {"start": raw_lines.position(start), "end": raw_lines.position(end)}
        entry = {
            "message": message,
            "location": {
                "path": diagnostic.filename,
                "range": where,
            },
            "severity": SEVERITIES[diagnostic.severity],
            "code": {"value": diagnostic.code, **({"url": diagnostic.url} if diagnostic.url else {})},
        }
        suggestions = _suggestions(diagnostic, lines, report.unsafe_fixes)
        if suggestions:
            entry["suggestions"] = suggestions
        diagnostics.append(entry)
    home = home_url()
    return {"source": {**SOURCE, **({"url": home} if home else {})}, "diagnostics": diagnostics}


@register("rdjson")
def render_rdjson(report: RunReport) -> str:
    return json.dumps(rdjson_result(report), indent=2, ensure_ascii=False) + "\n"
