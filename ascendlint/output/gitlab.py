"""``gitlab``: a GitLab Code Quality report (``artifacts: reports: codequality:``), shown in merge requests.

GitLab reads a subset of the CodeClimate issue format: a JSON array of objects with ``description``,
``check_name``, ``fingerprint``, ``severity`` (``info``, ``minor``, ``major``, ``critical`` or ``blocker``) and a
``location`` with the repository-relative ``path`` and a begin line (here ``positions.begin``/``end`` with lines and
columns). Paths are relative to ``$CI_PROJECT_DIR`` when GitLab sets it (the repository root in a job), else to the
current folder. The fingerprint is built from the rule, the path, the text of the reported line and its rank among
identical lines, so a finding keeps its identity when code above it moves and GitLab can tell new findings from
old ones.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..diagnostics import Diagnostic, Severity
from . import RunReport, register, sorted_diagnostics
from .notebook_raw import file_span

SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.ADVISORY: "minor"}


def report_path(filename: str) -> str:
    base = Path(os.environ.get("CI_PROJECT_DIR") or os.getcwd()).absolute()
    absolute = Path(os.path.abspath(filename))
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return Path(filename).as_posix()


def _line_text(text: str | None, row: int) -> str:
    if text is None:
        return ""
    lines = text.split("\n")
    return lines[row - 1].strip() if 1 <= row <= len(lines) else ""


def fingerprints(diagnostics: list[Diagnostic], report: RunReport) -> list[str]:
    seen: dict[tuple, int] = {}
    found = []
    for diagnostic in diagnostics:
        key = (
            diagnostic.code,
            report_path(diagnostic.filename),
            str(diagnostic.cell or ""),
            _line_text(report.source_of(diagnostic), diagnostic.location.row),
        )
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        found.append(hashlib.sha256("\0".join((*key, str(rank))).encode("utf-8")).hexdigest()[:32])
    return found


def gitlab_issues(report: RunReport) -> list[dict]:
    diagnostics = sorted_diagnostics(report.diagnostics)
    issues = []
    for diagnostic, fingerprint in zip(diagnostics, fingerprints(diagnostics, report)):
        cell = f"cell {diagnostic.cell}: " if diagnostic.cell is not None else ""
        start, end = file_span(diagnostic)  # a notebook's cell position is mapped into the stored .ipynb
        issues.append(
            {
                "type": "issue",
                "check_name": diagnostic.code,
                "description": f"{cell}{diagnostic.code} {diagnostic.message}",
                "categories": ["Bug Risk"] if diagnostic.severity is not Severity.ADVISORY else ["Performance"],
                "severity": SEVERITIES[diagnostic.severity],
                "fingerprint": fingerprint,
                "location": {
                    "path": report_path(diagnostic.filename),
                    "positions": {
                        "begin": {"line": start.row, "column": start.column},
                        "end": {"line": end.row, "column": end.column},
                    },
                },
                **({"content": {"body": f"See {diagnostic.url}"}} if diagnostic.url else {}),
            }
        )
    return issues


@register("gitlab")
def render_gitlab(report: RunReport) -> str:
    return json.dumps(gitlab_issues(report), indent=2, ensure_ascii=False) + "\n"
