"""``github``: GitHub Actions workflow commands, shown as annotations on the run and the pull request's diff.

One ``::error``, ``::warning`` or ``::notice`` line per finding. The message (data) escapes ``%``, CR and LF; the
properties also escape ``:`` and ``,``, which would otherwise end a property early.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from . import RunReport, register, sorted_diagnostics

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.ADVISORY: "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(diagnostic: Diagnostic) -> str:
    start, end = diagnostic.location, diagnostic.end_location
    properties = {
        "file": diagnostic.filename,
        "line": start.row,
        "col": start.column,
        "endLine": end.row,
        "endColumn": end.column,
        "title": f"{diagnostic.code} {diagnostic.name}" + (f" (cell {diagnostic.cell})" if diagnostic.cell else ""),
    }
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    message = f"{diagnostic.where()}: {diagnostic.code} {diagnostic.message}"
    return f"::{COMMANDS[diagnostic.severity]} {listed}::{escape_data(message)}"


@register("github")
def render_github(report: RunReport) -> str:
    return "".join(annotation(d) + "\n" for d in sorted_diagnostics(report.diagnostics))
