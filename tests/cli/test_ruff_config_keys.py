"""The ruff configuration keys and flags ruff users reach for, in pyproject.toml and on the command line, with
ruff's meaning: fixable / extend-fixable / unfixable, unsafe-fixes, output-format, force-exclude,
extend-per-file-ignores, include / extend-include, --fix-only, --ignore-noqa, --cache-dir, --config KEY=VALUE and
a user-level configuration file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import REPO

LAUNCH = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"
BLOCK = """import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
    tl.store(y_ptr + tl.arange(0, BT), tl.load(p_x))


def run(x, y):
    copy_tile[(1,)](x, y, 4, 4, BT=4, BD=4, num_warps=4)
"""


def _codes(result) -> list[tuple[str, bool]]:
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["code"], d["fix"] is not None) for d in json.loads(result.stdout))


def _pyproject(write, body: str) -> None:
    write("pyproject.toml", "[tool.ascendlint]\n" + body)


@pytest.mark.parametrize("keys, fixable", [
    ('unfixable = ["ASC101"]\n', False),
    ('fixable = ["ASC3"]\n', False),
    ('fixable = ["ASC3"]\nextend-fixable = ["ASC101"]\n', True),
    ('fixable = ["ALL"]\nunfixable = ["ASC1"]\nextend-fixable = ["ASC101"]\n', True),  # the more specific wins
])
def test_fixable_keys_decide_which_fixes_apply(cli, write, tmp_path, keys, fixable):
    _pyproject(write, keys)
    path = write("k.py", LAUNCH)
    result = cli("check", "k.py", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(result) == [("ASC101", fixable)]
    cli("check", "k.py", "--fix", "--no-cache", cwd=tmp_path)
    assert ("num_warps" in path.read_text()) is not fixable


def test_fixable_flags_on_the_command_line(cli, write, tmp_path):
    write("k.py", LAUNCH)
    only = cli("check", "k.py", "--format", "json", "--no-cache", "--fixable", "ASC3", cwd=tmp_path)
    assert _codes(only) == [("ASC101", False)]
    extended = cli("check", "k.py", "--format", "json", "--no-cache", "--fixable", "ASC3", "--extend-fixable",
                   "ASC101", cwd=tmp_path)
    assert _codes(extended) == [("ASC101", True)]


SELECT_ASC303 = 'extend-select = ["ASC303"]\n'  # the unsafe fix of the block pointer: ASC303 is opt-in


def test_unsafe_fixes_as_a_key_and_the_flag_that_overrides_it(cli, write, tmp_path):
    write("k.py", BLOCK)
    _pyproject(write, SELECT_ASC303)
    hint = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option" in hint.stdout
    _pyproject(write, SELECT_ASC303 + "unsafe-fixes = true\n")
    on = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert "[*] 2 fixable with the `--fix` option." in on.stdout and "hidden" not in on.stdout
    off = cli("check", "k.py", "--no-cache", "--no-unsafe-fixes", cwd=tmp_path)
    assert "[*] 1 fixable with the `--fix` option." in off.stdout and "hidden" not in off.stdout  # refused: no hint
    fixed = cli("check", "k.py", "--fix", "--no-cache", cwd=tmp_path)
    assert "boundary_check" in (tmp_path / "k.py").read_text(), fixed.stdout


def test_output_format_as_a_key_below_the_option_and_the_environment(cli, write, tmp_path):
    _pyproject(write, 'output-format = "concise"\n')
    write("k.py", LAUNCH)
    concise = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert concise.stdout.startswith("k.py:5:16: ASC101")
    as_json = cli("check", "k.py", "--no-cache", "--output-format", "json", cwd=tmp_path)
    assert json.loads(as_json.stdout)[0]["code"] == "ASC101"
    _pyproject(write, 'output-format = "nonsense"\n')
    assert cli("check", "k.py", "--no-cache", cwd=tmp_path).returncode == 2


def test_force_exclude_as_a_key(cli, write, tmp_path):
    _pyproject(write, 'extend-exclude = ["vendor"]\nforce-exclude = true\n')
    write("vendor/k.py", LAUNCH)
    named = cli("check", "vendor/k.py", "--format", "json", "--no-cache", cwd=tmp_path)
    assert json.loads(named.stdout) == []
    overridden = cli("check", "vendor/k.py", "--no-force-exclude", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _codes(overridden) == [("ASC101", True)]


def test_extend_per_file_ignores_adds_to_the_inherited_table(cli, write, tmp_path):
    write("base.toml", '[per-file-ignores]\n"a.py" = ["ASC101"]\n')
    _pyproject(write, 'extend = "base.toml"\n[tool.ascendlint.extend-per-file-ignores]\n"b.py" = ["ASC101"]\n')
    for name in ("a.py", "b.py", "c.py"):
        write(name, LAUNCH)
    result = cli("check", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert sorted(Path(d["filename"]).name for d in json.loads(result.stdout)) == ["c.py"]


def test_include_and_extend_include_choose_the_files_a_folder_walk_lints(cli, write, tmp_path):
    write("k.py", LAUNCH)
    write("stubs/k.pyi", LAUNCH)
    write("tools/k.py", LAUNCH)
    files = lambda *extra: sorted(cli("check", ".", "--show-files", *extra, cwd=tmp_path).stdout.split())  # noqa: E731
    assert files() == ["k.py", "tools/k.py"]
    _pyproject(write, 'extend-include = ["*.pyi"]\n')
    assert files() == ["k.py", "stubs/k.pyi", "tools/k.py"]
    _pyproject(write, 'include = ["tools/*.py"]\n')
    assert files() == ["tools/k.py"]
    assert files("--config", 'include = ["*.py", "*.pyi"]') == ["k.py", "stubs/k.pyi", "tools/k.py"]


def test_fix_only_fixes_and_reports_nothing_left(cli, write, tmp_path):
    path = write("k.py", BLOCK)
    _pyproject(write, SELECT_ASC303)
    result = cli("check", "k.py", "--fix-only", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert result.stdout == "Fixed 1 finding (1 additional fix available with `--unsafe-fixes`).\n"
    assert "num_warps" not in path.read_text() and "boundary_check" not in path.read_text()
    again = cli("check", "k.py", "--fix-only", "--unsafe-fixes", "--exit-non-zero-on-fix", "--no-cache", cwd=tmp_path)
    assert again.returncode == 1 and again.stdout == "Fixed 1 finding.\n"
    assert "boundary_check" in path.read_text()


def test_ignore_noqa_reports_suppressed_findings_and_no_stale_directive(cli, write, tmp_path):
    write("k.py", LAUNCH.replace("num_warps=4)", "num_warps=4)  # noqa: ASC101") + "# ascendlint: skip-file\n")
    assert json.loads(cli("check", "k.py", "--format", "json", cwd=tmp_path).stdout) == []
    result = cli("check", "k.py", "--format", "json", "--ignore-noqa", cwd=tmp_path)  # also past a warm cache
    assert [d["code"] for d in json.loads(result.stdout)] == ["ASC101"]


def test_cache_dir_from_the_flag_the_environment_and_the_key(cli, write, tmp_path):
    write("k.py", LAUNCH)
    cli("check", "k.py", "--cache-dir", "flag-cache", cwd=tmp_path)
    assert (tmp_path / "flag-cache").is_dir() and not (tmp_path / ".ascendlint_cache").exists()
    env = {**os.environ, "ASCENDLINT_CACHE_DIR": str(tmp_path / "env-cache"), "PYTHONPATH": str(REPO)}
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "ascendlint", "check", "k.py"], cwd=tmp_path, env=env, capture_output=True)
    assert (tmp_path / "env-cache").is_dir()
    _pyproject(write, 'cache-dir = "key-cache"\n')
    cli("check", "k.py", cwd=tmp_path)
    assert (tmp_path / "key-cache").is_dir() and not (tmp_path / ".ascendlint_cache").exists()


def test_config_key_value_pairs_override_the_files(cli, write, tmp_path):
    _pyproject(write, 'ignore = ["ASC101"]\n')
    write("k.py", LAUNCH)
    assert json.loads(cli("check", "k.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout) == []
    result = cli("check", "k.py", "--format", "json", "--no-cache", "--config", "ignore = []", cwd=tmp_path)
    assert _codes(result) == [("ASC101", True)]
    both = cli("check", "k.py", "--no-cache", "--config", "pyproject.toml", "--config", 'output-format="concise"',
               "--config", "ignore=[]", cwd=tmp_path)
    assert both.stdout.startswith("k.py:5:16: ASC101")
    bad_key = cli("check", "k.py", "--config", "no-such-key = 1", cwd=tmp_path)
    assert bad_key.returncode == 2 and "no-such-key" in bad_key.stderr
    not_toml = cli("check", "k.py", "--config", "neither-a-file", cwd=tmp_path)
    assert not_toml.returncode == 2 and "neither" in not_toml.stderr


def test_a_user_level_configuration_governs_files_no_project_configures(cli, write, tmp_path):
    import subprocess
    import sys

    home = tmp_path / "home"
    (home / "ascendlint").mkdir(parents=True)
    (home / "ascendlint" / "ascendlint.toml").write_text('ignore = ["ASC101"]\n', encoding="utf-8")
    write("proj/k.py", LAUNCH)
    write("other/k.py", LAUNCH)
    write("other/pyproject.toml", "[tool.ascendlint]\n")
    env = {**os.environ, "XDG_CONFIG_HOME": str(home), "PYTHONPATH": str(REPO)}

    def run(where, *extra):
        done = subprocess.run([sys.executable, "-m", "ascendlint", "check", "k.py", "--format", "json", "--no-cache",
                               *extra], cwd=tmp_path / where, env=env, capture_output=True, text=True)
        return [d["code"] for d in json.loads(done.stdout)]

    assert run("proj") == []  # the user's file governs
    assert run("other") == ["ASC101"]  # the project's own configuration wins
    assert run("proj", "--isolated") == ["ASC101"]
