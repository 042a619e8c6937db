"""The ``ascendlint check`` command end to end, through a real subprocess."""

from __future__ import annotations

import json
import os
import stat

LAUNCH = """
import triton
import triton.language as tl

@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0, mask=offs < n)

def run(x, grid):
    kernel[grid](x, x.numel(), BLOCK=128, num_warps=4, num_stages=2)
"""
CLEAN = LAUNCH.replace(", num_warps=4, num_stages=2", "")
CONSTEXPR_TO = """
import triton
import triton.language as tl

@triton.jit
def kernel(x_ptr, B: tl.constexpr):
    tl.store(x_ptr, B.to(tl.int64))
"""


def test_launch_with_num_warps_and_num_stages_gives_two_findings_and_exit_1(cli, write, tmp_path):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1, result.stderr
    assert result.stdout.count("ASC101") == 2
    assert "Found 2 findings." in result.stdout


def test_diff_shows_removal_and_writes_nothing(cli, write):
    path = write("k.py", LAUNCH)
    before = path.read_bytes()
    result = cli("check", str(path), "--diff")
    assert result.returncode == 1
    assert "-    kernel[grid](x, x.numel(), BLOCK=128, num_warps=4, num_stages=2)" in result.stdout
    assert "+    kernel[grid](x, x.numel(), BLOCK=128)" in result.stdout
    assert path.read_bytes() == before


def test_diff_on_clean_file_exits_0(cli, write):
    path = write("k.py", CLEAN)
    result = cli("check", str(path), "--diff")
    assert result.returncode == 0 and result.stdout == ""


def test_fix_removes_findings_then_file_lints_clean(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found 2 findings (2 fixed, 0 remaining)." in result.stdout
    assert path.read_text() == CLEAN.lstrip("\n")
    again = cli("check", str(path))
    assert again.returncode == 0 and "All checks passed!" in again.stdout


def test_fix_reports_remaining_findings_and_exits_1(cli, write):
    unfixable = """
    @triton.jit
    def blocked(x_ptr, T, BT: tl.constexpr):
        i_t = tl.program_id(0).to(tl.int64)
        p = tl.make_block_ptr(x_ptr, (T,), (1,), (i_t * BT,), (BT,), (0,))
        tl.store(p, tl.zeros((BT,), dtype=tl.float32), boundary_check=(0,))
    """
    path = write("k.py", LAUNCH + unfixable)
    result = cli("check", str(path), "--fix", "--format", "concise")
    assert result.returncode == 1
    assert "Found 3 findings (2 fixed, 1 remaining)." in result.stdout
    assert "ASC103" in result.stdout and "num_warps" not in path.read_text()


def test_fix_applies_only_selected_rules(cli, write):
    path = write("k.py", LAUNCH + CONSTEXPR_TO.replace("kernel", "other"))
    result = cli("check", str(path), "--fix", "--select", "ASC101")
    assert result.returncode == 0
    assert "Found 2 findings (2 fixed, 0 remaining)." in result.stdout
    assert "B.to(tl.int64)" in path.read_text()


def test_fix_keeps_crlf_bom_and_file_mode(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"\xef\xbb\xbf" + LAUNCH.lstrip("\n").replace("\n", "\r\n").encode())
    os.chmod(path, 0o751)
    result = cli("check", str(path), "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert b"num_warps" not in data
    assert data.count(b"\r\n") == data.count(b"\n")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751


def test_constexpr_to_is_fixed_to_tl_cast(cli, write):
    path = write("k.py", CONSTEXPR_TO)
    result = cli("check", str(path), "--fix")
    assert result.returncode == 0
    assert "tl.store(x_ptr, tl.cast(B, tl.int64))" in path.read_text()


def test_syntax_error_among_good_files_is_reported_and_others_are_linted(cli, write, tmp_path):
    write("a_good.py", CLEAN)
    write("b_broken.py", "import triton\ndef f(:\n    pass\n")
    write("c_bad.py", LAUNCH)
    result = cli("check", str(tmp_path), "--format", "concise")
    assert result.returncode == 1
    assert "b_broken.py:2:" in result.stdout and "ASC001" in result.stdout
    assert result.stdout.count("c_bad.py") == 2


def test_json_output_has_ruff_fields(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--format", "json")
    items = json.loads(result.stdout)
    assert len(items) == 2
    first = items[0]
    for key in ("code", "message", "filename", "location", "end_location", "fix", "url", "noqa_row"):
        assert key in first
    assert first["location"] == {"row": 10, "column": 43}
    assert first["end_location"] == {"row": 10, "column": 54}
    assert first["fix"]["applicability"] == "safe"
    edit = first["fix"]["edits"][0]
    assert set(edit) == {"content", "location", "end_location"}


def test_json_lines_output_has_one_object_per_line(cli, write):
    path = write("k.py", LAUNCH)
    lines = cli("check", str(path), "--format", "json-lines").stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["ASC101", "ASC101"]


def test_unknown_select_code_is_a_usage_error(cli, write):
    path = write("k.py", CLEAN)
    result = cli("check", str(path), "--select", "ASC999")
    assert result.returncode == 2
    assert "Unknown rule selector `ASC999`" in result.stderr


def test_prefix_selection_and_ignore(cli, write):
    path = write("k.py", LAUNCH + CONSTEXPR_TO.replace("kernel", "other"))
    only_ints = cli("check", str(path), "--select", "ASC1", "--ignore", "ASC101", "--format", "concise")
    assert "ASC102" in only_ints.stdout and "ASC101" not in only_ints.stdout


def test_exit_zero_keeps_findings_but_exits_0(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--exit-zero")
    assert result.returncode == 0 and "ASC101" in result.stdout


def test_stdin_with_filename(cli):
    result = cli("check", "-", "--stdin-filename", "kernels/k.py", "--format", "concise", stdin=LAUNCH.lstrip("\n"))
    assert result.returncode == 1
    assert "kernels/k.py:10:" in result.stdout


def test_stdin_fix_prints_fixed_source(cli):
    result = cli("check", "-", "--fix", stdin=LAUNCH.lstrip("\n"))
    assert "num_warps" not in result.stdout and "kernel[grid](x, x.numel(), BLOCK=128)" in result.stdout


def test_statistics_counts_per_rule(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--statistics")
    assert result.stdout.split() == ["2", "ASC101", "[*]", "launch-num-warps"]


def test_output_file_receives_the_report(cli, write, tmp_path):
    path = write("k.py", LAUNCH)
    out = tmp_path / "report.json"
    result = cli("check", str(path), "--format", "json", "--output-file", str(out))
    assert result.stdout == ""
    assert len(json.loads(out.read_text())) == 2


def test_quiet_prints_findings_without_summary(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--format", "concise", "--quiet")
    assert "Found" not in result.stdout and result.stdout.count("ASC101") == 2


def test_show_fixes_lists_what_was_fixed(cli, write):
    path = write("k.py", LAUNCH)
    result = cli("check", str(path), "--fix", "--show-fixes")
    assert "2 x ASC101 (launch-num-warps)" in result.stdout


def test_missing_path_is_an_error(cli, tmp_path):
    result = cli("check", str(tmp_path / "nope.py"))
    assert result.returncode == 2 and "nope.py" in result.stderr


def test_default_path_is_current_folder(cli, write, tmp_path):
    write("k.py", LAUNCH)
    result = cli("check", "--format", "concise", cwd=tmp_path)
    assert result.returncode == 1 and "k.py:10:" in result.stdout


def test_files_without_triton_are_skipped(cli, write, tmp_path):
    write("plain.py", "def f(:\n")
    result = cli("check", str(tmp_path))
    assert result.returncode == 0


def test_rule_command_prints_documentation(cli):
    result = cli("rule", "ASC101")
    assert result.returncode == 0
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert heading in result.stdout
    assert cli("rule", "launch-num-warps").stdout == result.stdout


def test_rule_all_lists_the_catalog(cli):
    result = cli("rule", "--all")
    assert "ASC101" in result.stdout and "ASC201" in result.stdout


def test_unknown_rule_is_an_error(cli):
    assert cli("rule", "ASC999").returncode == 2


def test_the_fix_summary_is_said_once_and_names_the_unsafe_fixes_left(cli, write):
    blocked = """
    import triton.language as tl

    @triton.jit
    def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
        i_t = tl.program_id(0)
        p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
        tl.store(y_ptr + tl.arange(0, BT), tl.load(p_x))
    """
    path = write("k.py", LAUNCH + blocked)
    result = cli("check", str(path), "--fix", "--extend-select", "ASC303", "--no-cache", "--format", "concise")
    assert result.returncode == 1
    tail = result.stdout.splitlines()[-2:]
    assert tail == ["Found 3 findings (2 fixed, 1 remaining).",
                    "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."]
    assert "Fixed" not in result.stdout
