"""Repositories that try to hang or exhaust the linter through the files it reads besides sources (issue 17, 4).

Every reproduction runs the real command in a subprocess with a short timeout: a regression shows as a failed test,
never as a suite that hangs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ascendlint.files import safe_read
from tests.conftest import REPO
from tests.robustness.conftest import KERNEL

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def run(*args: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=30)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    return tmp_path


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_gitignore_that_never_ends_is_skipped_with_a_warning(repo, kind):
    if kind == "fifo":
        os.mkfifo(repo / ".gitignore")
    else:
        (repo / ".gitignore").symlink_to("/dev/zero")
    result = run("check", ".", "--no-cache", "--format", "concise", cwd=repo)
    assert result.returncode == 1, result.stderr  # the kernel's finding: the run went on
    assert "k.py:5:21: ASC101" in result.stdout
    assert "warning: skipped .gitignore: not a regular file; its patterns were not applied" in result.stderr


def test_a_huge_gitignore_is_skipped_with_a_warning(repo):
    with open(repo / ".gitignore", "wb") as handle:
        handle.truncate(safe_read.MAX_CONFIG_BYTES + 1)  # sparse: costs no disk
    result = run("check", ".", "--no-cache", "--format", "concise", cwd=repo)
    assert result.returncode == 1 and "ASC101" in result.stdout
    assert "warning: skipped .gitignore: over the 4 MiB limit" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_config_option_that_never_ends_is_a_one_line_error(repo, kind):
    if kind == "fifo":
        config = repo / "cfg.toml"
        os.mkfifo(config)
    else:
        config = "/dev/zero"
    result = run("check", ".", "--no-cache", "--config", str(config), cwd=repo)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: Failed to read {config}: not a regular file"


@pytest.mark.parametrize("content", [b'[project]\nname = "\xff"\n', b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
                                     b"[project\n"], ids=["not-utf8", "deep", "broken-toml"])
def test_a_broken_pyproject_without_our_table_is_skipped_with_a_warning(repo, content):
    (repo / "pyproject.toml").write_bytes(content)
    result = run("check", ".", "--no-cache", "--format", "concise", cwd=repo)
    assert result.returncode == 1 and "k.py:5:21: ASC101" in result.stdout, result.stderr
    (warning,) = result.stderr.strip().splitlines()
    assert warning.startswith(f"warning: Failed to parse {repo / 'pyproject.toml'}: ")
    assert warning.endswith("it has no [tool.ascendlint] table, so it was skipped")
    assert "failed unexpectedly" not in result.stderr


@pytest.mark.parametrize("content, reason", [
    (b'[tool.ascendlint]\nselect = ["\xff"]\n', "not valid UTF-8 (byte 29: invalid start byte)"),
    (b"[tool.ascendlint]\nselect = " + b"[" * 5000 + b"]" * 5000 + b"\n", "it nests too deeply (RecursionError)"),
], ids=["not-utf8", "deep"])
def test_a_broken_pyproject_with_our_table_is_a_one_line_error(repo, content, reason):
    (repo / "pyproject.toml").write_bytes(content)
    result = run("check", ".", "--no-cache", cwd=repo)
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: Failed to parse {repo / 'pyproject.toml'}: {reason}"


def test_a_fifo_swapped_in_for_a_source_file_does_not_block(tmp_path):
    """Discovery skips FIFOs; reading checks again (the file may have been replaced since)."""
    os.mkfifo(tmp_path / "k.py")
    with pytest.raises(safe_read.NotARegularFile, match="not a regular file"):
        safe_read.open_regular(tmp_path / "k.py")


def test_regular_files_read_normally(tmp_path):
    (tmp_path / "a.toml").write_bytes(b"x = 1\n")
    assert safe_read.read_regular(tmp_path / "a.toml") == b"x = 1\n"
    with pytest.raises(safe_read.FileTooLarge):
        safe_read.read_regular(tmp_path / "a.toml", limit=3)


def test_a_long_acyclic_extend_chain_is_not_called_a_cycle(tmp_path):
    """40 files, each extending the next, were reported as "`extend` forms a cycle" (the depth limit was 32)."""
    from ascendlint.workspace.config import MAX_EXTEND_DEPTH, ConfigError, SettingsResolver
    from ascendlint.catalog.rule_index import rule_index

    count = 40
    for number in range(count):
        following = f'extend = "c{number + 1}.toml"\n' if number + 1 < count else 'ignore = ["ASC101"]\n'
        (tmp_path / f"c{number}.toml").write_text(following)
    (tmp_path / "ascendlint.toml").write_text('extend = "c0.toml"\n')
    settings = SettingsResolver(rule_index(), None).for_path(tmp_path / "k.py")
    assert settings.ignore == ["ASC101"]
    too_long = tmp_path / "long"
    too_long.mkdir()
    for number in range(MAX_EXTEND_DEPTH + 1):
        (too_long / f"c{number}.toml").write_text(f'extend = "c{number + 1}.toml"\n')
    (too_long / f"c{MAX_EXTEND_DEPTH + 1}.toml").write_text("")
    (too_long / "ascendlint.toml").write_text('extend = "c0.toml"\n')
    with pytest.raises(ConfigError, match="longer than"):
        SettingsResolver(rule_index(), None).for_path(too_long / "k.py")
