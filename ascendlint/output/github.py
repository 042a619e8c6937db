"""``github``: GitHub Actions workflow commands, shown as annotations on the run and the pull request's diff.

One ``::error``, ``::warning`` or ``::notice`` line per finding. The message (data) escapes ``%``, CR and LF; the
properties also escape ``:`` and ``,``, which would otherwise end a property early.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from . import RunReport, register, sorted_diagnostics
from .notebook_raw import file_span

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.ADVISORY: "notice"}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(diagnostic: Diagnostic) -> str:
    start, end = file_span(diagnostic)  # a notebook's cell position is mapped into the stored .ipynb
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
