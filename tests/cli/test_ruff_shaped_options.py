"""Options that ruff-shaped integrations rely on, through the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO

LAUNCH = """
import triton

def run(kernel, x, grid):
    kernel[grid](x, num_warps=4)
"""
FIXED = LAUNCH.replace(", num_warps=4", "")


def test_output_format_is_an_alias_of_format(cli, write):
    path = write("k.py", LAUNCH)
    via_alias = cli("check", str(path), "--output-format", "json", "--no-cache")
    via_format = cli("check", str(path), "--format", "json", "--no-cache")
    assert via_alias.returncode == 1 and json.loads(via_alias.stdout) == json.loads(via_format.stdout)


def _run_with_env(args, cwd, **env):
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env}, timeout=120)


def test_environment_variables_choose_format_and_file(write, tmp_path):
    write("k.py", LAUNCH)
    result = _run_with_env(["check", "k.py", "--no-cache"], tmp_path, ASCENDLINT_OUTPUT_FORMAT="json",
                           ASCENDLINT_OUTPUT_FILE=str(tmp_path / "out" / "report.json"))
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads((tmp_path / "out" / "report.json").read_text())[0]["code"] == "ASC101"
    overridden = _run_with_env(["check", "k.py", "--no-cache", "--format", "concise"], tmp_path,
                               ASCENDLINT_OUTPUT_FORMAT="json")
    assert overridden.stdout.startswith("k.py:4:")


def test_statistics_with_json_format_prints_json(cli, write):
    path = write("k.py", LAUNCH + LAUNCH.replace("run(", "run2("))
    result = cli("check", str(path), "--statistics", "--format", "json", "--no-cache")
    assert result.returncode == 1
    assert json.loads(result.stdout) == [{"code": "ASC101", "name": "launch-num-warps", "count": 2, "fixable": True}]


def test_output_file_creates_missing_parent_folders(cli, write, tmp_path):
    path = write("k.py", LAUNCH)
    target = tmp_path / "a" / "b" / "report.txt"
    result = cli("check", str(path), "-o", str(target), "--no-cache")
    assert result.returncode == 1 and "ASC101" in target.read_text()


def test_stdin_filename_alone_reads_standard_input(cli, write, tmp_path):
    write("ascendlint.toml", 'ignore = ["ASC1"]\n')
    source = LAUNCH.lstrip("\n")
    result = cli("check", "--stdin-filename", "kernels/k.py", "--format", "concise", stdin=source)
    assert result.returncode == 1 and result.stdout.startswith("kernels/k.py:4:")
    configured = cli("check", "--stdin-filename", "kernels/k.py", cwd=tmp_path, stdin=source)
    assert configured.returncode == 0, "the stdin file name's own configuration applies"


def test_exit_non_zero_on_fix(cli, write):
    path = write("k.py", LAUNCH)
    assert cli("check", str(path), "--fix").returncode == 0
    path.write_text(LAUNCH.lstrip("\n"))
    result = cli("check", str(path), "--fix", "--exit-non-zero-on-fix")
    assert result.returncode == 1 and path.read_text() == FIXED.lstrip("\n")
    clean = cli("check", str(path), "--fix", "--exit-non-zero-on-fix")
    assert clean.returncode == 0


def test_show_files_lists_what_would_be_linted(cli, write, tmp_path):
    write("a/k.py", LAUNCH)
    write("a/nb.ipynb", "{}")
    write("a/notes.txt", "")
    write(".venv/lib/k.py", LAUNCH)
    result = cli("check", ".", "--show-files", cwd=tmp_path)
    assert result.returncode == 0 and sorted(result.stdout.split()) == ["a/k.py", "a/nb.ipynb"]


def test_show_settings_names_the_governing_config(cli, write, tmp_path):
    write("sub/ascendlint.toml", 'ignore = ["ASC5"]\ndocs-url = "https://docs.example/rules/{code}.html"\n')
    write("sub/k.py", LAUNCH)
    result = cli("check", "sub/k.py", "--show-settings", cwd=tmp_path)
    assert result.returncode == 0
    lines = dict(line.split(" = ", 1) for line in result.stdout.splitlines())
    assert json.loads(lines["config-file"]).endswith("sub/ascendlint.toml")
    assert json.loads(lines["ignore"]) == ["ASC5"]
    assert "ASC101" in json.loads(lines["enabled"]) and "ASC503" not in json.loads(lines["enabled"])
    assert json.loads(lines["docs-url"]) == "https://docs.example/rules/{code}.html"


def test_quiet_keeps_the_full_format(cli, write):
    path = write("k.py", LAUNCH)
    loud = cli("check", str(path), "--no-cache")
    quiet = cli("check", str(path), "-q", "--no-cache")
    assert " | " in quiet.stdout and "= help:" in quiet.stdout, "the code frame stays"
    assert "Found" not in quiet.stdout and "fixable" not in quiet.stdout
    assert quiet.stdout.strip() in loud.stdout


def test_missing_path_error_does_not_claim_all_checks_passed(cli, write, tmp_path):
    write("k.py", FIXED)
    result = cli("check", "k.py", "missing.py", "--no-cache", cwd=tmp_path)
    assert result.returncode == 2 and "missing.py" in result.stderr
    assert "All checks passed!" not in result.stdout + result.stderr
    clean = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert "All checks passed!" in clean.stdout


def test_docs_url_setting_changes_every_link(cli, write, tmp_path):
    write("ascendlint.toml", 'docs-url = "https://lint.example/rules/{code}/"\n')
    write("k.py", LAUNCH)
    result = cli("check", "k.py", "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout)[0]["url"] == "https://lint.example/rules/ASC101/"
    sarif = json.loads(cli("check", "k.py", "--format", "sarif", cwd=tmp_path).stdout)
    descriptors = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(d["helpUri"] == f"https://lint.example/rules/{d['id']}/" for d in descriptors)
    bad = write("bad/ascendlint.toml", 'docs-url = "https://lint.example/"\n')
    refused = cli("check", str(bad.parent))
    assert refused.returncode == 2 and "{code}" in refused.stderr
