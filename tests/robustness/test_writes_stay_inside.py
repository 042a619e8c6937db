"""A run writes nothing outside the linted tree and the user's existing cache folder: not through a symbolic link
committed as ``.ascendlint_cache``, not into a home folder that does not exist."""

from __future__ import annotations

import os
import subprocess
import sys

from ascendlint.catalog import rule_index
from tests.conftest import REPO
from tests.robustness.conftest import KERNEL


def _run(*args: str, cwd, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(REPO)}, timeout=120)


def _env_without_caches(home) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("XDG_CACHE_HOME", rule_index.CACHE_ENV)}
    env["HOME"] = str(home)
    return env


def test_a_symlinked_cache_folder_is_not_written_through(tmp_path):
    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    tree.mkdir()
    elsewhere.mkdir()
    (tree / "k.py").write_text(KERNEL)
    (tree / ".ascendlint_cache").symlink_to(elsewhere, target_is_directory=True)
    env = _env_without_caches(tmp_path / "home")
    (tmp_path / "home").mkdir()
    for _ in range(2):
        result = _run("check", ".", "--format", "concise", cwd=tree, env=env)
        assert result.returncode == 1 and "ASC101" in result.stdout, result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_home_that_does_not_exist_is_not_created(tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    home = tmp_path / "nonexistent" / "x"
    result = _run("check", ".", "--format", "concise", cwd=tmp_path, env=_env_without_caches(home))
    assert result.returncode == 1 and "ASC101" in result.stdout, result.stderr
    assert not (tmp_path / "nonexistent").exists()
    second = _run("check", ".", "--format", "concise", cwd=tmp_path, env=_env_without_caches(home))
    assert second.stdout == result.stdout  # the result cache in the tree still works without a user cache


def test_a_fresh_home_gets_its_cache_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "k.py").write_text(KERNEL)
    _run("check", ".", cwd=tmp_path, env=_env_without_caches(home))
    assert (home / ".cache" / "ascendlint").is_dir()
