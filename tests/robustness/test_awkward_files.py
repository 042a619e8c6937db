"""The smaller defects of issue 17 (item 8): each reproduction, as a regression test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascendlint.workspace import discovery
from ascendlint.fixes import noqa
from ascendlint.catalog import rule_index
from ascendlint.workspace.config import Settings
from tests.helpers import lint
from tests.robustness.conftest import FIXED_KERNEL, KERNEL


def test_fix_refuses_a_file_whose_encoding_does_not_read_back(cli, tmp_path):
    """``unicode_escape`` decodes real newlines but encodes them as the two characters ``\\n``: one physical line."""
    path = tmp_path / "k.py"
    original = b"# -*- coding: unicode_escape -*-\n" + KERNEL.encode()
    path.write_bytes(original)
    result = cli("check", str(path), "--no-cache", "--fix", "--format", "concise")
    assert path.read_bytes() == original
    assert result.returncode == 2
    assert (f"error: Failed to lint {path}: fixes not applied: text written in the file's encoding (unicode_escape) "
            "does not read back as the same text") in result.stderr
    assert "ASC101" in result.stdout  # the finding stays


def test_fix_still_writes_files_in_encodings_that_read_back(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"# -*- coding: cp1252 -*-\n# \x80\n" + KERNEL.encode())
    assert cli("check", str(path), "--no-cache", "--fix").returncode == 0
    assert path.read_bytes() == b"# -*- coding: cp1252 -*-\n# \x80\n" + FIXED_KERNEL.encode()


def test_a_link_to_a_file_in_the_same_folder_is_linted_once_and_fixed(cli, tmp_path):
    (tmp_path / "real.py").write_text(KERNEL)
    (tmp_path / "alias.py").symlink_to("real.py")  # sorts first
    result = cli("check", str(tmp_path), "--no-cache", "--format", "concise")
    assert result.stdout.count("ASC101") == 1 and f"{tmp_path / 'real.py'}:5:21" in result.stdout
    fixed = cli("check", str(tmp_path), "--no-cache", "--fix")
    assert fixed.returncode == 0, fixed.stderr
    assert "changed on disk" not in fixed.stderr
    assert (tmp_path / "real.py").read_text() == FIXED_KERNEL and (tmp_path / "alias.py").is_symlink()


def test_the_same_file_named_twice_is_linted_once(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    (tmp_path / "link.py").symlink_to(tmp_path / "k.py")
    found = discovery.discover([tmp_path / "link.py", tmp_path / "k.py", tmp_path], Settings(root=tmp_path))
    assert found.files == [tmp_path / "k.py"]


@pytest.mark.parametrize("text, skipped", [
    ("import triton\n# ascendlint: skip-file\n", True),
    ("import triton\r\n# ascendlint: skip-file\r\n", True),
    ('"""Module docs.\n# ascendlint: skip-file\n"""\nimport triton\n', False),
    ("import triton\nHELP = '''\n    # ascendlint: skip-file\n'''\n", False),
    ("import triton\nHELP = '''\n# ascendlint: skip-file\n'''\n# ascendlint: skip-file\n", True),
], ids=["comment", "crlf-comment", "in-docstring", "in-string", "string-then-comment"])
def test_skip_file_counts_only_in_a_real_comment(text, skipped):
    assert noqa.skips_file(text) is skipped


def test_a_docstring_mentioning_skip_file_does_not_hide_findings():
    text = '"""Usage notes.\n# ascendlint: skip-file\n"""\n' + KERNEL
    assert [d.code for d in lint(text, "ASC101")] == ["ASC101"]


@pytest.mark.parametrize("codec", ["utf-16", "utf-32"])
def test_a_wide_unicode_kernel_is_reported_not_skipped(cli, tmp_path, codec):
    path = tmp_path / "k.py"
    path.write_bytes(KERNEL.encode(codec))
    result = cli("check", str(path), "--no-cache", "--format", "concise")
    assert result.returncode == 1
    assert (f"{path}:1:1: ASC001 SyntaxError: cannot be decoded: the file is {codec.upper()} (it starts with a "
            f"{codec.upper()} byte-order mark), which Python cannot run either; save it as UTF-8") in result.stdout


def test_a_wide_unicode_file_without_triton_is_skipped_like_any_other(cli, tmp_path):
    (tmp_path / "n.py").write_bytes("x = 1\n".encode("utf-16"))
    result = cli("check", str(tmp_path), "--no-cache")
    assert result.returncode == 0 and result.stderr == ""


def test_an_unreadable_folder_is_an_error_and_the_rest_is_linted(run_in_process, tmp_path, monkeypatch):
    """As ruff (E902) and as an unreadable file: the folder's files went unlinted, so the run cannot pass."""
    (tmp_path / "k.py").write_text(KERNEL)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(KERNEL)
    real_scandir = os.scandir

    def scandir(path="."):  # chmod 000 stops no root, so the refusal is simulated
        if Path(os.fsdecode(path)) == locked:
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = run_in_process("check", str(tmp_path), "--no-cache", "--format", "concise")
    assert result.exit_code == 2
    assert f"error: Failed to lint {locked}: Permission denied" in result.stderr
    assert f"{tmp_path / 'k.py'}:5:21: ASC101" in result.stdout


@pytest.fixture
def user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(rule_index.CACHE_ENV, str(tmp_path / "user-cache"))
    rule_index.rule_index()
    (stored,) = (tmp_path / "user-cache").glob("rules-*.json")
    return stored


def _all_codes() -> set[str]:
    from ascendlint.catalog.registry import all_rules

    return {rule.code for rule in all_rules()}


def test_a_tampered_rule_index_is_rebuilt(user_cache):
    stored = json.loads(user_cache.read_text())
    stored["rules"] = [r for r in stored["rules"] if r["code"] != "ASC101"]
    user_cache.write_text(json.dumps(stored))
    assert {info.code for info in rule_index.rule_index()} == _all_codes()
    assert "ASC101" in {r["code"] for r in json.loads(user_cache.read_text())["rules"]}  # and rewritten


def test_a_rule_index_missing_a_builtin_rule_is_rebuilt_even_with_a_matching_digest(user_cache):
    stored = json.loads(user_cache.read_text())
    stored["rules"] = [r for r in stored["rules"] if r["code"] != "ASC101"]
    stored["digest"] = rule_index._records_digest(stored["rules"])
    user_cache.write_text(json.dumps(stored))
    assert {info.code for info in rule_index.rule_index()} == _all_codes()


def test_an_intact_rule_index_is_used(user_cache, monkeypatch):
    import ascendlint.catalog.registry

    expected = _all_codes()

    def no_import():
        raise AssertionError("the stored index should have answered")

    monkeypatch.setattr(ascendlint.catalog.registry, "all_rules", no_import)
    assert {info.code for info in rule_index.rule_index()} == expected


def test_a_run_with_a_tampered_index_runs_every_rule(run_in_process, tmp_path, user_cache):
    stored = json.loads(user_cache.read_text())
    stored["rules"] = [r for r in stored["rules"] if r["code"] != "ASC101"]
    user_cache.write_text(json.dumps(stored))
    (tmp_path / "k.py").write_text(KERNEL)
    result = run_in_process("check", str(tmp_path / "k.py"), "--format", "concise")  # the same stored index
    assert "ASC101" in result.stdout
