"""The ``gitlab`` format: a Code Quality report valid against GitLab's documented fields, with stable fingerprints."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ascendlint.output import get
from tests.output.conftest import KERNEL, SELECT, lint_files

SCHEMA = json.loads((Path(__file__).parent / "data" / "gitlab-codequality.schema.json").read_text(encoding="utf-8"))


def _issues(report) -> list[dict]:
    return json.loads(get("gitlab")(report))


def test_report_is_valid_against_the_documented_format(report):
    issues = _issues(report)
    jsonschema.validate(issues, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert {issue["check_name"] for issue in issues} == {d.code for d in report.diagnostics}
    by_code = {issue["check_name"]: issue for issue in issues}
    launch = by_code["ASC101"]
    assert launch["location"]["path"] == "kernels/k.py"
    assert launch["location"]["positions"]["begin"] == {"line": 12, "column": 40}
    assert launch["severity"] == "major" and by_code["ASC001"]["severity"] == "critical"


def test_the_schema_rejects_what_gitlab_would_not_read(report):
    """The validation above can fail: a missing line, an unknown severity or an absolute path are refused."""
    issue = _issues(report)[0]
    broken = [
        {**issue, "severity": "warning"},
        {**issue, "location": {"path": issue["location"]["path"]}},
        {**issue, "location": {**issue["location"], "path": "/abs/k.py"}},
        {key: value for key, value in issue.items() if key != "fingerprint"},
    ]
    for document in broken:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([document], SCHEMA, cls=jsonschema.Draft202012Validator)


def test_fingerprints_are_unique_and_survive_code_moving_down():
    first = _issues(lint_files({"k.py": KERNEL}))
    moved = _issues(lint_files({"k.py": "# a new comment line\n\n" + KERNEL}))
    assert len({i["fingerprint"] for i in first}) == len(first)
    assert [i["fingerprint"] for i in first] == [i["fingerprint"] for i in moved]
    assert [i["location"]["positions"]["begin"]["line"] for i in moved] == \
        [i["location"]["positions"]["begin"]["line"] + 2 for i in first]


def test_identical_lines_get_distinct_fingerprints():
    twice = KERNEL + "\n\ndef run2(x, n):\n" + KERNEL.splitlines()[-1] + "\n"
    issues = [i for i in _issues(lint_files({"k.py": twice})) if i["check_name"] == "ASC101"]
    assert len(issues) == 2 and issues[0]["fingerprint"] != issues[1]["fingerprint"]


def test_paths_are_relative_to_ci_project_dir(monkeypatch, tmp_path, report):
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    nested = lint_files({str(tmp_path / "src" / "k.py"): KERNEL})
    assert {i["location"]["path"] for i in _issues(nested)} == {"src/k.py"}


def test_gitlab_format_on_the_command_line(cli, write, tmp_path):
    write("k.py", KERNEL)
    result = cli("check", "--no-cache", "--select", SELECT, "k.py", "--format", "gitlab", "-o", "reports/cq.json",
                 cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    issues = json.loads((tmp_path / "reports" / "cq.json").read_text(encoding="utf-8"))
    jsonschema.validate(issues, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert {i["location"]["path"] for i in issues} == {"k.py"}
