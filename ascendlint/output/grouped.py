"""``grouped``: findings under a heading per file, for reading a long report file by file."""

from __future__ import annotations

from itertools import groupby

from . import RunReport, register, sorted_diagnostics
from .text import _fixable_marker, summary


def _position(d) -> str:
    return (f"cell {d.cell}:" if d.cell is not None else "") + f"{d.location.row}:{d.location.column}"


@register("grouped")
def render_grouped(report: RunReport) -> str:
    out: list[str] = []
    for filename, group in groupby(sorted_diagnostics(report.diagnostics), key=lambda d: d.filename):
        findings = list(group)
        width = max(len(_position(d)) for d in findings)
        out.append(f"{filename}:")
        for d in findings:
            where = _position(d)
            out.append(f"  {where:<{width}} {d.code} {_fixable_marker(d, report.unsafe_fixes)}{d.message}")
        out.append("")
    out.extend(summary(report))
    return "\n".join(out) + "\n"
