"""``junit``: JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines).

One test suite per file with findings and one failed test case per finding; a run without findings is a single
passing case, so the report always shows that the check ran. The document is valid against the common JUnit schema
(junit-10.xsd, as Jenkins' xUnit plugin ships it): a test case has no ``file`` or ``line`` attribute there, so the
file is the suite's ``file`` attribute and the position is in the case's name and the failure's text.

A path that could not be linted (missing, unreadable, not decodable for a fix) is a suite of its own with one case
in error (``<error type="lint-error">``), so a report of a run that exited 2 never shows only passing cases.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from . import RunReport, register, sorted_diagnostics


def _suite(filename: str, diagnostics: list) -> ET.Element:
    suite = ET.Element("testsuite", name=filename, tests=str(len(diagnostics)), failures=str(len(diagnostics)),
                       errors="0", skipped="0", file=filename)
    for diagnostic in diagnostics:
        where = diagnostic.where()[len(filename) + 1:]
        case = ET.SubElement(suite, "testcase", name=f"{diagnostic.code} {diagnostic.name} at {where}",
                             classname=f"ascendlint.{diagnostic.code}")
        failure = ET.SubElement(case, "failure", message=diagnostic.message, type=diagnostic.severity.value)
        failure.text = f"{diagnostic.where()}: {diagnostic.code} {diagnostic.message}"
    return suite


@register("junit")
def render_junit(report: RunReport) -> str:
    diagnostics = sorted_diagnostics(report.diagnostics)
    failures = report.failures
    root = ET.Element("testsuites", name="ascendlint", tests=str(len(diagnostics) + len(failures) or 1),
                      failures=str(len(diagnostics)), errors=str(len(failures)))
    for path, reason in failures:
        suite = ET.SubElement(root, "testsuite", name=path, tests="1", failures="0", errors="1", skipped="0",
                              file=path)
        case = ET.SubElement(suite, "testcase", name=f"lint {path}", classname="ascendlint")
        error = ET.SubElement(case, "error", message=f"Failed to lint {path}: {reason}", type="lint-error")
        error.text = f"{path}: {reason}"
    for filename, group in groupby(diagnostics, key=lambda d: d.filename):
        root.append(_suite(filename, list(group)))
    if not diagnostics and not failures:
        suite = ET.SubElement(root, "testsuite", name="ascendlint", tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", name="no findings", classname="ascendlint")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
