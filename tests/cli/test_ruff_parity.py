"""Behaviour ruff users rely on, reproduced through the real command: per-file-ignores that switch off every rule,
and which findings `--statistics` counts as fixable."""

from __future__ import annotations

import json

from ascendlint.cli import _statistics
from ascendlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity

LAUNCH = """
import triton

def run(kernel, x, grid):
    kernel[grid](x, num_warps=4)
"""


def test_per_file_ignores_of_every_rule_report_and_fix_nothing(cli, write, tmp_path):
    write("ascendlint.toml", '[per-file-ignores]\n"tests/bad_kernels.py" = ["ASC"]\n"other.py" = ["ALL"]\n')
    bad = write("tests/bad_kernels.py", LAUNCH)
    other = write("other.py", LAUNCH)
    kept = write("kept.py", LAUNCH)
    before = bad.read_bytes()
    for args in (("check", "tests/bad_kernels.py", "other.py"), ("check", "--fix", "tests/bad_kernels.py", "other.py")):
        result = cli(*args, "--format", "json", cwd=tmp_path)  # the cache is on: configurations must not mix
        assert result.returncode == 0, result.stdout + result.stderr
        assert json.loads(result.stdout) == []
    assert bad.read_bytes() == before and other.read_bytes() == before
    result = cli("check", "kept.py", "--format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(result.stdout)] == ["ASC101"]
    assert kept.read_bytes() == before


def _finding(code: str, applicability: Applicability | None) -> Diagnostic:
    where = Location(1, 1)
    fix = None if applicability is None else Fix("Change it", applicability, (Edit(0, 1, ""),))
    return Diagnostic(code=code, name=f"rule-{code.lower()}", severity=Severity.WARNING, message="m",
                      filename="k.py", location=where, end_location=Location(1, 2), fix=fix)


def test_statistics_call_a_rule_fixable_only_when_fix_would_apply():
    found = [_finding("ASC202", Applicability.UNSAFE), _finding("ASC202", None), _finding("ASC101", Applicability.SAFE)]
    rows = {row["code"]: row["fixable"] for row in json.loads(_statistics(found, as_json=True))}
    assert rows == {"ASC202": False, "ASC101": True}
    text = {line.split("\t")[1]: line for line in _statistics(found).splitlines()}
    assert "[*]" not in text["ASC202"] and "[*]" in text["ASC101"]
    rows = {row["code"]: row["fixable"] for row in json.loads(_statistics(found, as_json=True, unsafe_fixes=True))}
    assert rows == {"ASC202": True, "ASC101": True}


def test_a_string_where_a_list_is_expected_is_a_configuration_error(cli, write, tmp_path):
    write("ascendlint.toml", 'select = "ASC1"\n')
    write("k.py", LAUNCH)
    result = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2
    assert "`select` must be a list of strings" in result.stderr


def test_a_run_that_finds_no_file_says_so(cli, write, tmp_path):
    write("ascendlint.toml", 'extend-exclude = ["generated"]\n')
    write("generated/k.py", LAUNCH)
    (tmp_path / "empty").mkdir()
    empty = cli("check", "empty", "--no-cache", cwd=tmp_path)
    assert empty.returncode == 0
    assert "warning: No Python files found under the given path(s)" in empty.stderr
    excluded = cli("check", "generated", "--no-cache", cwd=tmp_path)
    assert excluded.returncode == 0
    assert "No Python files found" in excluded.stderr and "generated: excluded by the configuration" in excluded.stderr
    write("kept.py", LAUNCH)
    found = cli("check", ".", "--no-cache", cwd=tmp_path)
    assert found.returncode == 1 and "No Python files found" not in found.stderr


# -- a path that could not be linted, in the machine formats ------------------------------------------------------
def test_a_missing_path_fails_the_junit_report(cli, write, tmp_path):
    import xml.etree.ElementTree as ET

    write("k.py", "import triton\n")
    result = cli("check", "k.py", "missing.py", "--format", "junit", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2
    root = ET.fromstring(result.stdout)
    assert root.get("errors") == "1" and root.get("tests") == "1"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "missing.py" and suite.get("errors") == "1"
    error = suite.find("testcase/error")
    assert error is not None and "missing.py: No such file or directory" in error.text
    assert not [case for case in root.iter("testcase") if case.find("error") is None and case.find("failure") is None]


def test_the_junit_report_of_a_failed_path_is_schema_valid():
    xmlschema = __import__("pytest").importorskip("xmlschema")
    from pathlib import Path

    from ascendlint.output import RunReport, get

    schema = xmlschema.XMLSchema(str(Path(__file__).parents[1] / "output" / "data" / "junit-10.xsd"))
    report = RunReport(diagnostics=[_finding("ASC101", None)], failed_paths=1,
                       failures=[("gone.py", "No such file or directory")])
    schema.validate(get("junit")(report))


def test_a_missing_path_makes_the_sarif_run_unsuccessful(cli, write, tmp_path):
    import jsonschema
    from pathlib import Path

    write("k.py", LAUNCH)
    result = cli("check", "k.py", "missing.py", "--format", "sarif", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2
    log = json.loads(result.stdout)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "missing.py: No such file or directory" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "missing.py"
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["ASC101"], "the other file's findings stay"
    schema = json.loads((Path(__file__).parents[1] / "output" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(log, schema)
    clean = json.loads(cli("check", "k.py", "--format", "sarif", "--no-cache", cwd=tmp_path).stdout)
    assert clean["runs"][0]["invocations"] == [{"executionSuccessful": True}]


def test_json_holds_findings_only_and_the_exit_code_carries_a_failed_path(cli, write, tmp_path):
    """The documented choice (docs/ci.md): no made-up finding for an I/O error; exit 2 and stderr say it."""
    write("k.py", LAUNCH)
    result = cli("check", "k.py", "missing.py", "--format", "json", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2
    assert [d["code"] for d in json.loads(result.stdout)] == ["ASC101"]
    assert "error: Failed to lint missing.py: No such file or directory" in result.stderr
