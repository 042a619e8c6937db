"""The ``github`` format: workflow commands with the escaping GitHub Actions requires."""

from __future__ import annotations

import pytest

from ascendlint.diagnostics import Diagnostic, Location, Severity
from ascendlint.output import RunReport, get
from ascendlint.output.github import escape_data, escape_property


@pytest.mark.parametrize(
    "raw, data, prop",
    [
        ("plain", "plain", "plain"),
        ("100% sure", "100%25 sure", "100%25 sure"),
        ("two\nlines\r\n", "two%0Alines%0D%0A", "two%0Alines%0D%0A"),
        ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
        ("%0A", "%250A", "%250A"),
    ],
)
def test_data_and_properties_are_escaped(raw, data, prop):
    assert escape_data(raw) == data
    assert escape_property(raw) == prop


@pytest.mark.parametrize(
    "severity, command", [(Severity.ERROR, "error"), (Severity.WARNING, "warning"), (Severity.ADVISORY, "notice")]
)
def test_each_finding_is_one_workflow_command_line(severity, command):
    diagnostic = Diagnostic(
        code="ASC101", name="launch-num-warps", severity=severity, message="50% slower,\nreally",
        filename="dir,with:odd/k.py", location=Location(3, 5), end_location=Location(4, 2),
    )
    (line,) = get("github")(RunReport(diagnostics=[diagnostic])).splitlines()
    assert line == (
        f"::{command} file=dir%2Cwith%3Aodd/k.py,line=3,col=5,endLine=4,endColumn=2,title=ASC101 launch-num-warps"
        "::dir,with:odd/k.py:3:5: ASC101 50%25 slower,%0Areally"
    )


def test_report_lists_every_finding(report):
    lines = get("github")(report).splitlines()
    assert len(lines) == len(report.diagnostics)
    assert lines[0].startswith("::error file=kernels/broken.py,line=2,col=7,")
