"""``json`` and ``json-lines``: the shape of ruff's JSON output, so tools written for ruff can read it.

As in ruff, ``cell`` is the notebook cell a finding is in (null outside notebooks), and the finding's and its
fix's positions are then relative to that cell.
"""

from __future__ import annotations

import json

from ..diagnostics import Diagnostic
from . import RunReport, register, sorted_diagnostics, source_key


def _location(location) -> dict:
    return {"row": location.row, "column": location.column}


def diagnostic_to_dict(diagnostic: Diagnostic, sources: dict[str, str] | None = None) -> dict:
    fix = None
    if diagnostic.fix is not None:
        text = (sources or {}).get(source_key(diagnostic.filename, diagnostic.cell))
        fix = {
            "applicability": diagnostic.fix.applicability.value,
            "message": diagnostic.fix.message,
            "edits": [_edit(edit, text) for edit in diagnostic.fix.edits],
        }
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "filename": diagnostic.filename,
        "cell": diagnostic.cell,
        "location": _location(diagnostic.location),
        "end_location": _location(diagnostic.end_location),
        "fix": fix,
        "url": diagnostic.url,
        "noqa_row": diagnostic.noqa_row,
    }


def _edit(edit, text: str | None) -> dict:
    from ..text.text_positions import offset_to_location

    entry = {"content": edit.content}
    if text is not None:
        entry["location"] = _location(offset_to_location(text, edit.start))
        entry["end_location"] = _location(offset_to_location(text, edit.end))
    return entry


@register("json")
def render_json(report: RunReport) -> str:
    items = [diagnostic_to_dict(d, report.sources) for d in sorted_diagnostics(report.diagnostics)]
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


@register("json-lines")
def render_json_lines(report: RunReport) -> str:
    return "".join(
        json.dumps(diagnostic_to_dict(d, report.sources), ensure_ascii=False) + "\n"
        for d in sorted_diagnostics(report.diagnostics)
    )
