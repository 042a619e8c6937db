"""Settings per file from its closest configuration file (ruff's hierarchy), ``extend``, and ``--force-exclude``."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascendlint.workspace.config import ConfigError, SettingsResolver
from ascendlint.catalog.rule_index import rule_index

KERNEL = """
import triton

def run(k, x):
    k[(1,)](x, num_warps=4)
"""


def _linted(result) -> set[str]:
    return {line.split(":")[0] for line in result.stdout.splitlines() if ": ASC" in line}


def test_nested_pyproject_governs_its_folder(cli, write, tmp_path):
    write("pyproject.toml", '[tool.ascendlint]\nselect = ["ASC1"]\n')
    write("sub/pyproject.toml", '[tool.ascendlint]\nignore = ["ASC101"]\n')
    write("top.py", KERNEL)
    write("sub/inner.py", KERNEL)
    result = cli("check", ".", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(result) == {"top.py"}, result.stdout + result.stderr


def test_each_path_on_the_command_line_gets_its_own_config(cli, write, tmp_path):
    write("a/ascendlint.toml", 'ignore = ["ASC101"]\n')
    write("a/k.py", KERNEL)
    write("b/k.py", KERNEL)
    for order in (("a", "b"), ("b", "a")):
        result = cli("check", *order, "--format", "concise", "--no-cache", cwd=tmp_path)
        assert _linted(result) == {"b/k.py"}, result.stdout + result.stderr


def test_extend_inherits_and_the_extending_file_wins(cli, write, tmp_path):
    write("pyproject.toml", '[tool.ascendlint]\nignore = ["ASC101"]\nextend-exclude = ["skipped/"]\n')
    write("sub/ascendlint.toml", 'extend = "../pyproject.toml"\n')
    write("sub2/ascendlint.toml", 'extend = "../pyproject.toml"\nignore = []\n')
    write("sub/k.py", KERNEL)
    write("sub/skipped/k.py", KERNEL)
    write("sub2/k.py", KERNEL)
    result = cli("check", ".", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(result) == {"sub2/k.py"}, result.stdout + result.stderr
    shown = cli("check", "sub", "--show-settings", cwd=tmp_path)
    assert '"skipped/"' in shown.stdout and "pyproject.toml" in shown.stdout


def test_extend_cycle_and_missing_target_are_errors(cli, write, tmp_path):
    write("a/ascendlint.toml", 'extend = "../b/ascendlint.toml"\n')
    write("b/ascendlint.toml", 'extend = "../a/ascendlint.toml"\n')
    write("a/k.py", KERNEL)
    result = cli("check", "a", cwd=tmp_path)
    assert result.returncode == 2 and "cycle" in result.stderr
    write("c/ascendlint.toml", 'extend = "nope.toml"\n')
    write("c/k.py", KERNEL)
    result = cli("check", "c", cwd=tmp_path)
    assert result.returncode == 2 and "nope.toml" in result.stderr


def test_unknown_key_in_an_extended_file_names_that_file(cli, write, tmp_path):
    write("base.toml", 'selct = ["ASC1"]\n')
    write("sub/ascendlint.toml", 'extend = "../base.toml"\n')
    write("sub/k.py", KERNEL)
    result = cli("check", "sub", cwd=tmp_path)
    assert result.returncode == 2 and "selct" in result.stderr and "base.toml" in result.stderr


def test_unknown_key_in_a_nested_config_is_an_error(cli, write, tmp_path):
    write("sub/ascendlint.toml", 'selct = ["ASC1"]\n')
    write("sub/k.py", KERNEL)
    result = cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "selct" in result.stderr


def test_explicit_config_overrides_every_nested_one(cli, write, tmp_path):
    write("sub/ascendlint.toml", 'ignore = ["ASC101"]\n')
    write("sub/k.py", KERNEL)
    config = write("strict.toml", 'select = ["ASC"]\n')
    result = cli("check", "sub", "--config", str(config), "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(result) == {"sub/k.py"}


def test_nested_exclude_applies_below_its_config(cli, write, tmp_path):
    write("sub/ascendlint.toml", 'extend-exclude = ["gen/"]\n')
    write("sub/gen/k.py", KERNEL)
    write("gen/k.py", KERNEL)
    result = cli("check", ".", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(result) == {"gen/k.py"}


def test_resolution_is_cached_per_folder(write, tmp_path, monkeypatch):
    write("ascendlint.toml", 'ignore = ["ASC5"]\n')
    for index in range(5):
        write(f"pkg/deep/m{index}.py", KERNEL)
    resolver = SettingsResolver(rule_index(use_stored=False))
    import ascendlint.workspace.config as config

    looked = []
    original = config._config_in
    monkeypatch.setattr(config, "_config_in", lambda folder, warn=None: looked.append(folder) or original(folder, warn))
    first = [resolver.for_path(p) for p in sorted((tmp_path / "pkg" / "deep").glob("*.py"))]
    assert all(s is first[0] for s in first)
    assert first[0].ignore == ["ASC5"]
    assert len(looked) == 3  # pkg/deep, pkg, the root: once each, not once per file
    resolver.for_path(tmp_path / "pkg" / "other.py")
    assert len(looked) == 3


def test_resolver_reports_a_broken_nested_file(write, tmp_path):
    write("sub/ascendlint.toml", "select = [\n")
    with pytest.raises(ConfigError, match="Failed to parse"):
        SettingsResolver(rule_index(use_stored=False)).for_path(tmp_path / "sub" / "k.py")


# -- --force-exclude ----------------------------------------------------------------------------------------------

def test_named_files_are_linted_unless_force_exclude(cli, write, tmp_path):
    write("ascendlint.toml", 'extend-exclude = ["generated/", "legacy_*.py"]\n')
    write("generated/deep/k.py", KERNEL)
    write("legacy_k.py", KERNEL)
    write("src/k.py", KERNEL)
    named = ("generated/deep/k.py", "legacy_k.py", "src/k.py")
    plain = cli("check", *named, "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(plain) == set(named)
    forced = cli("check", *named, "--force-exclude", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert _linted(forced) == {"src/k.py"}, forced.stdout + forced.stderr
    folder = cli("check", "generated", "--force-exclude", "--show-files", cwd=tmp_path)
    assert folder.stdout == ""


def test_force_exclude_uses_the_files_own_config(cli, write, tmp_path):
    write("sub/ascendlint.toml", 'extend-exclude = ["vendored.py"]\n')
    write("sub/vendored.py", KERNEL)
    write("vendored.py", KERNEL)
    result = cli("check", "sub/vendored.py", "vendored.py", "--force-exclude", "--format", "concise", "--no-cache",
                 cwd=tmp_path)
    assert _linted(result) == {"vendored.py"}


def test_force_exclude_with_stdin_filename_passes_the_text_through(cli, write, tmp_path):
    write("ascendlint.toml", 'extend-exclude = ["generated/"]\n')
    source = KERNEL.lstrip("\n")
    result = cli("check", "--stdin-filename", "generated/k.py", "--force-exclude", "--fix", cwd=tmp_path,
                 stdin=source)
    assert result.returncode == 0 and result.stdout == source
    linted = cli("check", "--stdin-filename", "src/k.py", "--force-exclude", "--fix", cwd=tmp_path, stdin=source)
    assert "num_warps" not in linted.stdout


# -- git's other exclude files -------------------------------------------------------------------------------------

def test_git_info_exclude_is_honoured(cli, write, tmp_path):
    write(".git/info/exclude", "# local only\nscratch/\n")
    write("scratch/k.py", KERNEL)
    write("src/k.py", KERNEL)
    result = cli("check", ".", "--show-files", cwd=tmp_path)
    assert result.stdout.split() == ["src/k.py"], result.stdout + result.stderr


def test_global_excludes_file_from_git_config_and_xdg_default(write, tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import REPO

    write("repo/.git/HEAD", "ref: refs/heads/main\n")
    write("repo/notes/k.py", KERNEL)
    write("repo/tmp_k.py", KERNEL)
    write("repo/src/k.py", KERNEL)
    write("home/ignore-file", "tmp_*.py\n")
    write("home/gitconfig", '[user]\n  name = x\n[core]\n\texcludesFile = "' + str(tmp_path / "home" / "ignore-file")
          + '"  ; comment\n')
    write("xdg/git/ignore", "notes/\n")

    def show(**extra) -> list[str]:
        env = {**os.environ, "PYTHONPATH": str(REPO), "GIT_CONFIG_NOSYSTEM": "1", **extra}
        run = subprocess.run([sys.executable, "-m", "ascendlint", "check", ".", "--show-files"], cwd=tmp_path / "repo",
                             env=env, capture_output=True, text=True, timeout=120)
        return sorted(run.stdout.split())

    configured = show(GIT_CONFIG_GLOBAL=str(tmp_path / "home" / "gitconfig"), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert configured == ["notes/k.py", "src/k.py"]
    default = show(GIT_CONFIG_GLOBAL=os.devnull, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert default == ["src/k.py", "tmp_k.py"]  # notes/ is in $XDG_CONFIG_HOME/git/ignore


def test_git_excludes_are_skipped_with_respect_gitignore_false(cli, write, tmp_path):
    write(".git/info/exclude", "scratch/\n")
    write("ascendlint.toml", "respect-gitignore = false\n")
    write("scratch/k.py", KERNEL)
    result = cli("check", ".", "--show-files", cwd=tmp_path)
    assert result.stdout.split() == ["scratch/k.py"]


def test_git_config_values_are_read_like_git(tmp_path):
    from ascendlint.workspace.git_excludes import read_config_value

    config = tmp_path / "config"
    config.write_text('[Core]\n  ExcludesFile = "/a b/#x" # trailing\n[other]\nexcludesfile = /no\n'
                      '[core]\n\tbare = value\n', encoding="utf-8")
    assert read_config_value(config, "core", "excludesfile") == "/a b/#x"
    assert read_config_value(config, "core", "missing") is None
    assert read_config_value(Path(tmp_path / "absent"), "core", "excludesfile") is None
