"""The ``junit`` format: well-formed JUnit XML with a failed case per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ascendlint.diagnostics import Diagnostic, Location, Severity
from ascendlint.output import RunReport, get


def test_one_suite_per_file_and_one_failure_per_finding(report):
    root = ET.fromstring(get("junit")(report))
    assert root.tag == "testsuites" and root.get("failures") == str(len(report.diagnostics))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"kernels/broken.py", "kernels/k.py"}
    cases = suites["kernels/k.py"].findall("testcase")
    assert len(cases) == int(suites["kernels/k.py"].get("tests")) == 2
    failure = cases[-1].find("failure")
    assert cases[-1].get("classname") == "ascendlint.ASC101" and cases[-1].get("line") == "12"
    assert failure.get("type") == "warning" and "num_warps" in failure.get("message")


def test_markup_in_messages_is_escaped():
    diagnostic = Diagnostic(
        code="ASC999", name="x", severity=Severity.ERROR, message='a < b && "c" > d', filename="k.py",
        location=Location(1, 1), end_location=Location(1, 2),
    )
    root = ET.fromstring(get("junit")(RunReport(diagnostics=[diagnostic])))
    assert root.find("testsuite/testcase/failure").get("message") == 'a < b && "c" > d'


def test_a_clean_run_is_one_passing_case():
    root = ET.fromstring(get("junit")(RunReport(diagnostics=[])))
    (case,) = root.iter("testcase")
    assert root.get("failures") == "0" and case.find("failure") is None
