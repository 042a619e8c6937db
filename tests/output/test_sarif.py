"""The ``sarif`` format: schema-valid SARIF 2.1.0 with what GitHub code scanning reads."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from ascendlint import docs_links, fixes
from ascendlint.diagnostics import Applicability, Diagnostic, Fix, Location, Severity
from ascendlint.output import RunReport, get
from ascendlint.output.sarif import FINGERPRINT_KEY, artifact_uri, sarif_log
from ascendlint.catalog.registry import all_rules
from tests.output.conftest import KERNEL, lint_files

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]
MULTITOOL = Path(
    os.environ.get("ASCENDLINT_SARIF_MULTITOOL")
    or REPO / "build/sarif-multitool/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
)


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_log_is_valid_against_the_sarif_2_1_0_schema(report, validator):
    log = json.loads(get("sarif")(report))
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]
    assert errors == []
    assert log["version"] == "2.1.0"


def test_an_empty_run_is_still_a_valid_log(validator):
    log = sarif_log(lint_files({}))
    assert list(validator.iter_errors(log)) == []
    assert log["runs"][0]["results"] == []


def test_the_schema_rejects_a_broken_log(report, validator):
    """Guards the guard: the vendored schema must catch a missing required property and a 0-based line."""
    log = sarif_log(report)
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert len(list(validator.iter_errors(log))) == 2


def test_every_registered_rule_is_described_for_code_scanning(report):
    rules = sarif_log(report)["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for descriptor in rules:
        assert descriptor["name"][0].isupper() and "-" not in descriptor["name"]
        assert descriptor["shortDescription"]["text"] and descriptor["fullDescription"]["text"]
        assert descriptor["help"]["text"] and descriptor["help"]["markdown"].startswith(f"# {descriptor['id']} ")
        assert descriptor.get("helpUri") == docs_links.rule_url(descriptor["id"])
        assert descriptor["defaultConfiguration"]["level"] in {"error", "warning", "note"}


def test_results_point_at_their_rule_and_their_exact_region(report):
    run = sarif_log(report)["runs"][0]
    results = {r["ruleId"]: r for r in run["results"]}
    assert set(results) == {"ASC001", "ASC003", "ASC101"}
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    launch = results["ASC101"]
    assert launch["level"] == "warning"
    location = launch["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "kernels/k.py", "uriBaseId": "%SRCROOT%"}
    region = location["region"]
    line = KERNEL.splitlines()[region["startLine"] - 1]
    # 1-based columns counting characters (the line holds non-ASCII text before the keyword), exclusive end.
    assert line[region["startColumn"] - 1 : region["endColumn"] - 1] == "num_warps=4" == region["snippet"]["text"]
    assert run["columnKind"] == "unicodeCodePoints"
    syntax = results["ASC001"]["locations"][0]["physicalLocation"]["region"]
    assert syntax == {"startLine": 2, "startColumn": 7}


def test_fingerprints_survive_lines_inserted_above_and_tell_equal_lines_apart():
    def fingerprints(text):
        log = sarif_log(lint_files({"k.py": text}))
        return [(r["ruleId"], r["partialFingerprints"][FINGERPRINT_KEY]) for r in log["runs"][0]["results"]]

    shifted = KERNEL.replace("import triton\n", "import triton\n\n\nimport os\n", 1)
    assert fingerprints(KERNEL) == fingerprints(shifted)
    doubled = KERNEL + "    kernel[(1,)](x, \"ŝtrïng→\", n, B=4, num_warps=4)\n"
    prints = [p for code, p in fingerprints(doubled) if code == "ASC101"]
    assert len(prints) == len(set(prints)) == 2


@pytest.mark.parametrize("use_offsets", [True, False], ids=["char-offsets", "line-columns"])
def test_applying_the_sarif_fixes_gives_the_fixed_file(use_offsets):
    log = sarif_log(lint_files({"k.py": KERNEL}))
    edits = []
    starts = [0] + [i + 1 for i, c in enumerate(KERNEL) if c == "\n"]
    for result in log["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            (change,) = fix["artifactChanges"]
            assert change["artifactLocation"]["uri"] == "k.py"
            for replacement in change["replacements"]:
                region = replacement["deletedRegion"]
                if use_offsets:
                    start, end = region["charOffset"], region["charOffset"] + region["charLength"]
                else:
                    start = starts[region["startLine"] - 1] + region["startColumn"] - 1
                    end = starts[region["endLine"] - 1] + region["endColumn"] - 1
                edits.append((start, end, replacement["insertedContent"]["text"]))
    text = KERNEL
    for start, end, content in sorted(edits, reverse=True):
        text = text[:start] + content + text[end:]
    expected = fixes.fix_text(KERNEL, lambda t: lint_files({"k.py": t}).diagnostics).text
    assert text == expected != KERNEL


@pytest.mark.parametrize("unsafe_fixes, emitted", [(False, False), (True, True)])
def test_unsafe_fixes_are_emitted_only_when_the_run_allows_them(unsafe_fixes, emitted):
    report = lint_files({"k.py": KERNEL}, unsafe_fixes=unsafe_fixes)
    report.diagnostics = [
        replace(d, fix=Fix(d.fix.message, Applicability.UNSAFE, d.fix.edits)) for d in report.diagnostics if d.fix
    ]
    results = sarif_log(report)["runs"][0]["results"]
    assert all(("fixes" in r) is emitted for r in results)


def _multitool() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the SARIF Multitool check runs where node is")
    if not MULTITOOL.exists():
        pytest.skip(f"SARIF Multitool not installed at {MULTITOOL} (.ci/run installs it with npm)")
    if not os.access(MULTITOOL, os.X_OK):
        MULTITOOL.chmod(MULTITOOL.stat().st_mode | stat.S_IXUSR)
    return MULTITOOL


def _multitool_findings(log: dict, tmp_path: Path) -> list[tuple[str, str]]:
    tool = _multitool()
    log_path, out = tmp_path / "ascendlint.sarif", tmp_path / "validation.sarif"
    log_path.write_text(json.dumps(log), encoding="utf-8")
    env = {**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1"}
    run = subprocess.run(
        [str(tool), "validate", str(log_path), "-o", str(out), "--rule-kind", "Gh;Sarif",
         "--level", "Error;Warning;Note", "--log", "ForceOverwrite"],
        capture_output=True, text=True, timeout=120, env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    findings = json.loads(out.read_text(encoding="utf-8-sig"))["runs"][0]["results"]
    return [(f["ruleId"], f.get("level", "warning")) for f in findings]  # SARIF's default level is warning


# SARIF2005 asks for the tool's informationUri, which the log leaves out while the package names no repository
# (a placeholder address would be worse): the one warning expected until then.
NO_ADDRESS_YET = {"SARIF2005"}


def test_microsoft_sarif_multitool_finds_no_error_or_warning(report, tmp_path):
    findings = _multitool_findings(sarif_log(report), tmp_path)
    expected = NO_ADDRESS_YET if docs_links.home_url() is None else set()
    assert [f for f in findings if f[1] in ("error", "warning") and f[0] not in expected] == []


def test_microsoft_sarif_multitool_rejects_a_result_without_location(report, tmp_path):
    log = sarif_log(report)
    del log["runs"][0]["results"][0]["locations"]
    assert ("GH1015", "error") in _multitool_findings(log, tmp_path)


@pytest.mark.parametrize(
    "filename, expected",
    [
        ("kernels/k.py", ("kernels/k.py", True)),
        ("./kernels/my kernel.py", ("kernels/my%20kernel.py", True)),
        ("/elsewhere/k.py", ("file:///elsewhere/k.py", False)),
    ],
)
def test_paths_under_the_current_folder_are_relative_uris_others_absolute(filename, expected, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert artifact_uri(filename) == expected


def test_a_code_without_registered_rule_gets_a_descriptor(validator):
    stray = Diagnostic(code="ASC998", name="plugin-rule", severity=Severity.ADVISORY, message="m", filename="k.py",
                       location=Location(1, 1), end_location=Location(1, 2))
    log = sarif_log(RunReport(diagnostics=[stray]))
    run = log["runs"][0]
    (result,) = run["results"]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "ASC998"
    assert result["level"] == "note"
    assert list(validator.iter_errors(log)) == []
