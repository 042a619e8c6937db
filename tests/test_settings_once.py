"""Each file's settings are resolved once, at discovery, and travel with it: the runner, per-file-ignores and the
result cache use what discovery found (ruff resolves a file's settings once and hands down (file, settings))."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascendlint import cli as cli_module
from ascendlint.linter.per_file import LinterSet
from ascendlint.linter.runner import Linter
from ascendlint.workspace.settings import Settings, SourceFile
from ascendlint.workspace import config, discovery
from ascendlint.catalog import rule_index
from ascendlint.linter import runner

KERNEL = """
import triton

def run(k, x):
    k[(1,)](x, num_warps=4)
"""


def _run_counted(monkeypatch, tmp_path, *args):
    monkeypatch.setenv(rule_index.CACHE_ENV, str(tmp_path / "user-cache"))
    relative = collections.Counter()
    resolved = collections.Counter()
    original = config.relative_to_root

    def counted_relative(path, root):
        relative[Path(path).resolve()] += 1
        return original(path, root)

    resolve = config.SettingsResolver.for_path

    def counted_resolve(self, path):
        resolved[Path(path).resolve()] += 1
        return resolve(self, path)

    for module in (config, discovery, runner):
        monkeypatch.setattr(module, "relative_to_root", counted_relative)
    monkeypatch.setattr(config.SettingsResolver, "for_path", counted_resolve)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_module.main, ["check", *args, "--format", "json", "--jobs", "1"])
    return result, relative, resolved


def test_a_file_is_placed_and_configured_once_however_many_steps_use_it(monkeypatch, write, tmp_path):
    write("pyproject.toml", '[tool.ascendlint]\n[tool.ascendlint.per-file-ignores]\n"skip_*.py" = ["ASC101"]\n')
    write("sub/ascendlint.toml", 'ignore = ["ASC101"]\n')
    files = [write("top.py", KERNEL), write("skip_me.py", KERNEL), write("sub/inner.py", KERNEL)]
    for attempt in ("cold", "warm"):  # the cold run stores results, the warm one reads them back
        result, relative, resolved = _run_counted(monkeypatch, tmp_path, ".")
        assert result.exit_code == 1, result.output
        assert {Path(d["filename"]).name for d in json.loads(result.output)} == {"top.py"}, attempt
        for path in files:
            assert relative[path.resolve()] == 1, (attempt, path, relative)  # discovery's, used from then on
            assert resolved[path.resolve()] == 0, (attempt, path, resolved)  # the folder's settings came with it


def test_standard_input_is_configured_once_by_the_command_line(monkeypatch, write, tmp_path):
    """A buffer on standard input is not discovered: the command line resolves the settings of its name once and
    hands them down; the linter does not ask configuration again."""
    write("sub/ascendlint.toml", 'ignore = ["ASC101"]\n')
    monkeypatch.setenv(rule_index.CACHE_ENV, str(tmp_path / "user-cache"))
    monkeypatch.chdir(tmp_path)
    resolve = config.SettingsResolver.for_path
    for name, expected in (("sub/inner.py", set()), ("top.py", {"ASC101"})):
        resolved = collections.Counter()

        def counted_resolve(self, path):
            resolved[Path(path).resolve()] += 1
            return resolve(self, path)

        monkeypatch.setattr(config.SettingsResolver, "for_path", counted_resolve)
        result = CliRunner().invoke(cli_module.main, ["check", "-", "--stdin-filename", name, "--format", "json"],
                                    input=KERNEL)
        assert result.exit_code == (1 if expected else 0), result.output
        assert {d["code"] for d in json.loads(result.stdout)} == expected, result.output
        assert resolved == {(tmp_path / name).resolve(): 1}, resolved  # the command line's, and nobody else's


def test_the_linters_know_only_the_files_discovery_gave_them(tmp_path):
    settings = Settings(root=tmp_path)
    linters = LinterSet(lambda s, cache: Linter([], s, cache=cache), use_cache=False)
    placed = tmp_path / "a.py"
    linters.prepare([SourceFile(placed, settings, "a.py")])
    assert linters.linter_for(placed).settings is settings
    assert linters.linter_for(placed).relative_path(placed) == "a.py"
    with pytest.raises(LookupError):  # no configuration to fall back on: settings come from discovery
        linters.linter_for(tmp_path / "elsewhere.py")
