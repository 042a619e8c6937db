"""``ascendlint ub PATH`` end to end, through a real subprocess: the table with a bar per row, and JSON."""

from __future__ import annotations

import json
import textwrap

BWD = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def rms_bwd(dy, x, dx, n_cols, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_N)
        offs = rows[:, None] * n_cols + cols[None, :]
        g = tl.load(dy + offs).to(tl.float32)
        v = tl.load(x + offs).to(tl.float32)
        m = g * v
        tl.store(dx + offs, m - v * tl.sum(m, axis=1)[:, None] + g)

    def backward(dy, x, dx):
        rows, n_cols = x.shape
        dy, x = dy.float(), x.float()
        dx = torch.empty_like(x)
        rms_bwd[(rows,)](dy, x, dx, n_cols, BLOCK_N=10240, BLOCK_M=2)
        rms_bwd[(rows,)](dy, x, dx, n_cols, BLOCK_N=2048, BLOCK_M=2)
    """
)


def test_table_lists_each_launch_with_estimate_bar_and_verdict(tmp_path, cli):
    (tmp_path / "k.py").write_text(BWD)
    result = cli("ub", str(tmp_path))
    assert result.returncode == 1, result.stderr  # one config is over the budget: a finding, as in `check`
    rows = [line for line in result.stdout.splitlines() if "rms_bwd" in line]
    assert len(rows) == 2
    big, small = rows
    # 2 x 10240 fp32 tiles: g, v, m live at once, all read by the store (80 KB each; offs only addresses)
    # -> ~240 KB, over 192 KB
    assert "~ 240 KB" in big and "OVER" in big and "|!" in big and "BLOCK_N=10240" in big
    assert "~  48 KB" in small and " ok " in small and "|]" in small and "BLOCK_N=2048" in small
    assert "budget 192 KB of 192 KB" in result.stdout
    assert "2 configs, 1 over the 192 KB budget" in result.stdout


def test_json_gives_bytes_budget_and_live_tiles(tmp_path, cli):
    (tmp_path / "k.py").write_text(BWD)
    result = cli("ub", "--format", "json", str(tmp_path / "k.py"))
    assert result.returncode == 1, result.stderr  # 240 KB is over
    data = json.loads(result.stdout)
    assert data["budget_bytes"] == 192 * 1024
    first, second = data["configs"]
    assert first["kernel"] == "rms_bwd" and first["constexprs"] == {"BLOCK_M": 2, "BLOCK_N": 10240}
    assert first["estimate_bytes"] == 3 * 2 * 10240 * 4 and first["over_budget"] and first["complete"]
    assert {t["name"] for t in first["live_tiles"]} >= {"g", "v", "m"}
    assert not second["over_budget"]


def test_autotune_configs_and_multibuffer_are_rows_of_their_own(tmp_path, cli):
    (tmp_path / "t.py").write_text(textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.autotune(configs=[triton.Config({"BLOCK": 8192, "multibuffer": False}), triton.Config({"BLOCK": 8192})],
                         key=["n"])
        @triton.jit
        def add(x, y, n, BLOCK: tl.constexpr):
            for start in range(0, n, BLOCK):
                offs = start + tl.arange(0, BLOCK)
                a = tl.load(x + offs)
                tl.store(y + offs, a + 1)
        """
    ))
    data = json.loads(cli("ub", "--format", "json", str(tmp_path)).stdout)
    plain, doubled = data["configs"]
    assert (plain["config"], doubled["config"]) == ("config 1", "config 2")
    assert not plain["multibuffer"] and doubled["multibuffer"]  # triton-ascend multi-buffers unless told not to
    # a (16 KB at the assumed fp16; a + 1 computed in its place); multi-buffered in the loop: a twice and a pair
    # for the stored a + 1
    assert plain["estimate_bytes"] == 16 * 1024 and doubled["estimate_bytes"] == 4 * 16 * 1024


def test_unknown_extent_is_marked_partial(tmp_path, cli):
    (tmp_path / "p.py").write_text(BWD.replace("BLOCK_N=10240, BLOCK_M=2", "BLOCK_N=10240").replace(
        "        rms_bwd[(rows,)](dy, x, dx, n_cols, BLOCK_N=2048, BLOCK_M=2)\n", ""))
    result = cli("ub", str(tmp_path))
    assert "partial" in result.stdout
    data = json.loads(cli("ub", "--format", "json", str(tmp_path)).stdout)
    assert data["configs"][0]["missing"] == ["BLOCK_M"] and not data["configs"][0]["complete"]


def test_no_kernels_says_so(tmp_path, cli):
    (tmp_path / "plain.py").write_text("x = 1\n")
    result = cli("ub", str(tmp_path))
    assert result.returncode == 0 and "No kernel" in result.stdout


def test_the_exit_code_says_whether_a_config_is_over_the_budget(tmp_path, cli):
    (tmp_path / "k.py").write_text(BWD.replace("    rms_bwd[(rows,)](dy, x, dx, n_cols, BLOCK_N=10240, BLOCK_M=2)\n", ""))
    within = cli("ub", str(tmp_path))
    assert within.returncode == 0 and "0 over the 192 KB budget" in within.stdout
    (tmp_path / "k.py").write_text(BWD)
    over = cli("ub", str(tmp_path), "--format", "json")
    assert over.returncode == 1
