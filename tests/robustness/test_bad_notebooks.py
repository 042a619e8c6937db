"""A damaged ``.ipynb`` is one file's ASC001, like a syntax error: the run goes on and the other files' findings,
and fixes, are kept."""

from __future__ import annotations

import json

import pytest

from tests.robustness.mutations import MALFORMED_NOTEBOOKS

GOOD = "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"


@pytest.mark.parametrize("name", ["cell-is-a-string", "cell-metadata-string", "cell-outputs-string", "metadata-string",
                                  "deeply-nested"])
def test_a_malformed_notebook_is_its_own_finding_and_the_run_goes_on(cli, tmp_path, name):
    (tmp_path / "bad.ipynb").write_text(MALFORMED_NOTEBOOKS[name], encoding="utf-8")
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    result = cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "failed unexpectedly" not in result.stderr
    found = {(item["filename"].rsplit("/", 1)[-1], item["code"]) for item in json.loads(result.stdout)}
    assert ("good.py", "ASC101") in found, found
    assert ("bad.ipynb", "ASC001") in found, found


def test_fix_goes_on_past_malformed_notebooks(cli, tmp_path):
    for name, text in MALFORMED_NOTEBOOKS.items():
        (tmp_path / f"{name}.ipynb").write_text(text, encoding="utf-8")
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    result = cli("check", ".", "--no-cache", "--fix", "--jobs", "2", cwd=tmp_path)
    assert "failed unexpectedly" not in result.stderr, result.stderr
    assert (tmp_path / "good.py").read_text(encoding="utf-8") == GOOD.replace(", num_warps=4", "")
    for name, text in MALFORMED_NOTEBOOKS.items():
        assert (tmp_path / f"{name}.ipynb").read_text(encoding="utf-8") == text, "a damaged notebook is never written"
    assert result.stdout.count("ASC001") == len(MALFORMED_NOTEBOOKS), result.stdout
