"""Configuration files, rule selection and which files get linted."""

from __future__ import annotations

KERNEL = """
import triton

def run(k, x):
    k[(1,)](x, num_warps=4)
"""


def test_pyproject_table_selects_and_ignores(cli, write, tmp_path):
    write("pyproject.toml", '[tool.ascendlint]\nignore = ["ASC101"]\n')
    write("pkg/k.py", KERNEL)
    result = cli("check", "pkg", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dot_ascendlint_toml_wins_over_pyproject(cli, write, tmp_path):
    write("pyproject.toml", '[tool.ascendlint]\nignore = ["ASC101"]\n')
    write(".ascendlint.toml", 'select = ["ASC1"]\n')
    write("k.py", KERNEL)
    assert cli("check", ".", cwd=tmp_path).returncode == 1


def test_config_is_found_by_walking_up(cli, write, tmp_path):
    write("ascendlint.toml", 'ignore = ["ASC1"]\n')
    path = write("a/b/c/k.py", KERNEL)
    assert cli("check", str(path)).returncode == 0


def test_unknown_config_key_names_the_key(cli, write, tmp_path):
    write("ascendlint.toml", 'selct = ["ASC1"]\n')
    write("k.py", KERNEL)
    result = cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "selct" in result.stderr


def test_unknown_code_in_config_is_an_error(cli, write, tmp_path):
    write("ascendlint.toml", 'select = ["ASC777"]\n')
    write("k.py", KERNEL)
    result = cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "ASC777" in result.stderr


def test_unknown_rule_option_is_an_error(cli, write, tmp_path):
    write("ascendlint.toml", '[launch-num-warps]\nstrict = true\n')
    write("k.py", KERNEL)
    result = cli("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and "strict" in result.stderr


def test_explicit_config_flag(cli, write, tmp_path):
    config = write("conf/lint.toml", 'ignore = ["ASC101"]\n')
    write("k.py", KERNEL)
    assert cli("check", ".", "--config", str(config), cwd=tmp_path).returncode == 0


def test_per_file_ignores(cli, write, tmp_path):
    write("ascendlint.toml", '[per-file-ignores]\n"cuda/*.py" = ["ASC101"]\n')
    write("cuda/k.py", KERNEL)
    write("ascend/k.py", KERNEL)
    result = cli("check", ".", "--format", "concise", cwd=tmp_path)
    assert "ascend/k.py" in result.stdout and "cuda/k.py" not in result.stdout


def test_gitignore_and_exclude_are_honoured_but_explicit_files_are_linted(cli, write, tmp_path):
    (tmp_path / ".git").mkdir()
    write(".gitignore", "generated/\n")
    write("ascendlint.toml", 'extend-exclude = ["legacy_*.py"]\n')
    write("generated/k.py", KERNEL)
    write("legacy_k.py", KERNEL)
    write(".venv/lib/k.py", KERNEL)
    write("src/k.py", KERNEL)
    result = cli("check", ".", "--format", "concise", cwd=tmp_path)
    assert "src/k.py" in result.stdout
    for hidden in ("generated/k.py", "legacy_k.py", ".venv/lib/k.py"):
        assert hidden not in result.stdout
    explicit = cli("check", "legacy_k.py", "--format", "concise", cwd=tmp_path)
    assert "legacy_k.py" in explicit.stdout


def test_nested_gitignore_applies_to_its_folder(cli, write, tmp_path):
    (tmp_path / ".git").mkdir()
    write("sub/.gitignore", "skip_me.py\n")
    write("sub/skip_me.py", KERNEL)
    write("skip_me.py", KERNEL)
    result = cli("check", ".", "--format", "concise", cwd=tmp_path)
    assert "sub/skip_me.py" not in result.stdout and "skip_me.py" in result.stdout


def test_symlink_loop_does_not_hang(cli, write, tmp_path):
    write("k.py", KERNEL)
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    result = cli("check", ".", "--format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.count("ASC101") == 1


import pytest as _pytest


@_pytest.mark.parametrize("value, wanted", [
    ('"x"', "a positive integer"), ("-5", "a positive integer"), ("0", "a positive integer"),
    ("true", "a positive integer"), ("1.5", "a positive integer"),
])
def test_rule_options_are_type_checked(tmp_path, value, wanted):
    from ascendlint.workspace.config import ConfigError, load_settings
    from ascendlint.catalog.registry import all_rules

    path = tmp_path / "ascendlint.toml"
    path.write_text(f"[narrow-inner-tile]\ngranule_bytes = {value}\n", encoding="utf-8")
    with _pytest.raises(ConfigError, match=f"granule_bytes.*ASC503.*must be {wanted}"):
        load_settings(path, all_rules())


@_pytest.mark.parametrize("table, value", [
    ("block-ptr-no-boundary-check", '"yes"'), ("block-ptr-no-boundary-check", "1"),
    ("compile-option-placement", "3.3"), ("compile-option-placement", '""'),
])
def test_switches_and_strings_are_type_checked(tmp_path, table, value):
    from ascendlint.workspace.config import ConfigError, load_settings
    from ascendlint.catalog.registry import all_rules

    option = {"block-ptr-no-boundary-check": "check-model-dimensions",
              "compile-option-placement": "triton-ascend-version"}[table]
    path = tmp_path / "ascendlint.toml"
    path.write_text(f"[{table}]\n{option} = {value}\n", encoding="utf-8")
    with _pytest.raises(ConfigError, match=option):
        load_settings(path, all_rules())


def test_well_typed_rule_options_are_accepted(tmp_path, cli):
    path = tmp_path / "ascendlint.toml"
    path.write_text('[narrow-inner-tile]\ngranule_bytes = 256\n[block-ptr-no-boundary-check]\n'
                    'check-model-dimensions = true\n', encoding="utf-8")
    (tmp_path / "k.py").write_text("import triton\n", encoding="utf-8")
    assert cli("check", "k.py", "--no-cache", cwd=tmp_path).returncode == 0
    path.write_text('[narrow-inner-tile]\ngranule_bytes = true\n', encoding="utf-8")
    bad = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert bad.returncode == 2 and "must be a positive integer, not True" in bad.stderr
