"""``grouped``: findings under a heading per file, for reading a long report file by file."""

from __future__ import annotations

from itertools import groupby

from . import RunReport, register, sorted_diagnostics
from .text import _fixable_marker, summary


@register("grouped")
def render_grouped(report: RunReport) -> str:
    out: list[str] = []
    for filename, group in groupby(sorted_diagnostics(report.diagnostics), key=lambda d: d.filename):
        findings = list(group)
        width = max(len(f"{d.location.row}:{d.location.column}") for d in findings)
        out.append(f"{filename}:")
        for d in findings:
            where = f"{d.location.row}:{d.location.column}"
            out.append(f"  {where:<{width}} {d.code} {_fixable_marker(d, report.unsafe_fixes)}{d.message}")
        out.append("")
    out.extend(summary(report))
    return "\n".join(out) + "\n"
