"""The ``junit`` format: JUnit XML valid against the common junit-10.xsd, with a failed case per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ascendlint.diagnostics import Diagnostic, Location, Severity
from ascendlint.output import RunReport, get

xmlschema = pytest.importorskip("xmlschema")
SCHEMA = Path(__file__).parent / "data" / "junit-10.xsd"


@pytest.fixture(scope="module")
def schema():
    return xmlschema.XMLSchema(str(SCHEMA))


def test_one_suite_per_file_and_one_failure_per_finding(report):
    root = ET.fromstring(get("junit")(report))
    assert root.tag == "testsuites" and root.get("failures") == str(len(report.diagnostics))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"kernels/broken.py", "kernels/k.py"}
    assert suites["kernels/k.py"].get("file") == "kernels/k.py"
    cases = suites["kernels/k.py"].findall("testcase")
    assert len(cases) == int(suites["kernels/k.py"].get("tests")) == 2
    failure = cases[-1].find("failure")
    assert cases[-1].get("classname") == "ascendlint.ASC101"
    assert cases[-1].get("name").endswith(" at 12:40")
    assert failure.text.startswith("kernels/k.py:12:40: ASC101 ")
    assert failure.get("type") == "warning" and "num_warps" in failure.get("message")


def test_report_is_valid_against_junit_10_xsd(report, schema):
    document = get("junit")(report)
    schema.validate(document)  # raises with the offending element when invalid
    assert schema.is_valid(get("junit")(RunReport(diagnostics=[])))


def test_the_schema_rejects_the_old_file_and_line_attributes(schema):
    """The check above can fail: a case with ``file``/``line`` (the previous output) is invalid."""
    old = ('<testsuites><testsuite name="k.py" tests="1" failures="1" errors="0">'
           '<testcase name="x" classname="c" file="k.py" line="3"><failure message="m"/></testcase>'
           '</testsuite></testsuites>')
    assert not schema.is_valid(old)


def test_notebook_findings_name_their_cell(schema):
    diagnostic = Diagnostic(
        code="ASC101", name="launch-num-warps", severity=Severity.WARNING, message="m", filename="nb.ipynb",
        location=Location(2, 5), end_location=Location(2, 9), cell=3,
    )
    document = get("junit")(RunReport(diagnostics=[diagnostic]))
    schema.validate(document)
    case = ET.fromstring(document).find("testsuite/testcase")
    assert case.get("name") == "ASC101 launch-num-warps at cell 3:2:5"
    assert case.find("failure").text == "nb.ipynb:cell 3:2:5: ASC101 m"


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
