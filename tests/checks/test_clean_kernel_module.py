"""A realistic, correct Ascend kernel module must produce no finding at all, under every rule.

The module combines the shapes the rules look at: core-grid task loops that rebind their pointers per task,
varlen offsets loaded as int64, a constexpr tail split instead of a runtime dual DMA path, a copied `tl.dot`
left operand, boundary-checked block pointers, wide tiles and host launchers sized by the core counts.
"""

from __future__ import annotations

import pytest

from ascendlint import fixes
from tests.helpers import lint

CLEAN_MODULE = '''
"""Row scaling, scaled add and a tiled matmul for Ascend NPUs."""

import torch
import triton
import triton.language as tl
from triton.runtime import driver

TILE_T = 16
TILE_M = 128
TILE_N = 256
TILE_K = 64  # the fp32 copy of a [BM, BK] tile for the row sum stays inside the Unified Buffer
ADD_BLOCK = 4096


@triton.jit
def varlen_scale_kernel(x_ptr, w_ptr, y_ptr, cu_seqlens_ptr, n_seqs, H, D: tl.constexpr, BT: tl.constexpr):
    """y[t, h, :] = x[t, h, :] * w for every token of every sequence; one task per (sequence, head)."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    w = tl.load(w_ptr + tl.arange(0, D)).to(tl.float32)
    for task in range(pid, n_seqs * H, n_programs):
        i_n = task // H
        i_h = task % H
        bos = tl.load(cu_seqlens_ptr + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens_ptr + i_n + 1).to(tl.int64)
        T = (eos - bos).to(tl.int32)
        x_task = x_ptr + (bos * H + i_h) * D
        y_task = y_ptr + (bos * H + i_h) * D
        for i_t in range(0, tl.cdiv(T, BT)):
            p_x = tl.make_block_ptr(x_task, (T, D), (H * D, 1), (i_t * BT, 0), (BT, D), (1, 0))
            p_y = tl.make_block_ptr(y_task, (T, D), (H * D, 1), (i_t * BT, 0), (BT, D), (1, 0))
            b_x = tl.load(p_x, boundary_check=(0, 1)).to(tl.float32)
            tl.store(p_y, (b_x * w[None, :]).to(p_y.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, tail_start, BLOCK: tl.constexpr, TAIL: tl.constexpr):
    """out = alpha * x + y. Full blocks use block pointers; the tail is a separate compile with masks."""
    if TAIL:
        offs = tail_start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0)
        tl.store(out_ptr + offs, alpha * x + y, mask=mask)
    else:
        pid = tl.program_id(0)
        n_programs = tl.num_programs(0)
        for i_b in range(pid, n // BLOCK, n_programs):
            p_x = tl.make_block_ptr(x_ptr, (n,), (1,), (i_b * BLOCK,), (BLOCK,), (0,))
            p_y = tl.make_block_ptr(y_ptr, (n,), (1,), (i_b * BLOCK,), (BLOCK,), (0,))
            p_out = tl.make_block_ptr(out_ptr, (n,), (1,), (i_b * BLOCK,), (BLOCK,), (0,))
            x = tl.load(p_x, boundary_check=(0,))
            y = tl.load(p_y, boundary_check=(0,))
            tl.store(p_out, (alpha * x + y).to(p_out.dtype.element_ty), boundary_check=(0,))


@triton.jit
def matmul_rowsum_kernel(
    a_ptr, b_ptr, c_ptr, rowsum_ptr, M, N, K,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
):
    """c = a @ b and rowsum = a.sum(1) (per N tile), one task per output tile."""
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    n_tiles_n = tl.cdiv(N, BN)
    for task in range(pid, tl.cdiv(M, BM) * n_tiles_n, n_programs):
        i_m = task // n_tiles_n
        i_n = task % n_tiles_n
        p_a = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (i_m * BM, 0), (BM, BK), (1, 0))
        p_b = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, i_n * BN), (BK, BN), (1, 0))
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        row_sum = tl.zeros((BM,), dtype=tl.float32)
        for _ in range(0, tl.cdiv(K, BK)):
            b_a = tl.load(p_a, boundary_check=(0, 1), padding_option="zero")
            b_b = tl.load(p_b, boundary_check=(0, 1), padding_option="zero")
            b_a_lhs = b_a + 0.0
            acc += tl.dot(b_a_lhs, b_b)
            row_sum += tl.sum(b_a.to(tl.float32), axis=1)
            p_a = tl.advance(p_a, (0, BK))
            p_b = tl.advance(p_b, (BK, 0))
        p_c = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (i_m * BM, i_n * BN), (BM, BN), (1, 0))
        tl.store(p_c, acc.to(tl.float16), boundary_check=(0, 1))
        if i_n == 0:
            rows = i_m * BM + tl.arange(0, BM)
            tl.store(rowsum_ptr + rows, row_sum, mask=rows < M)


def _core_counts(device: torch.device) -> tuple[int, int]:
    props = driver.active.utils.get_device_properties(device.index)
    return props["num_aicore"], props["num_vectorcore"]


def varlen_scale(x: torch.Tensor, w: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
    _, H, D = x.shape
    y = torch.empty_like(x)
    n_seqs = cu_seqlens.numel() - 1
    vector_cores = driver.active.utils.get_device_properties(x.device.index)["num_vectorcore"]
    varlen_scale_kernel[(min(vector_cores, n_seqs * H),)](x, w, y, cu_seqlens, n_seqs, H, D=D, BT=TILE_T)
    return y


def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    n_full = n // ADD_BLOCK
    props = driver.active.utils.get_device_properties(x.device.index)
    vector_cores = props["num_vectorcore"]
    if n_full > 0:
        scaled_add_kernel[(min(vector_cores, n_full),)](x, y, out, alpha, n, 0, BLOCK=ADD_BLOCK, TAIL=False)
    if n % ADD_BLOCK:
        scaled_add_kernel[(1,)](x, y, out, alpha, n, n_full * ADD_BLOCK, BLOCK=ADD_BLOCK, TAIL=True)
    return out


def matmul_rowsum(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    rowsum = torch.empty((M,), dtype=torch.float32, device=a.device)
    cube_cores, _ = _core_counts(a.device)
    n_tiles = triton.cdiv(M, TILE_M) * triton.cdiv(N, TILE_N)
    grid = (min(cube_cores, n_tiles),)
    matmul_rowsum_kernel[grid](a, b, c, rowsum, M, N, K, BM=TILE_M, BN=TILE_N, BK=TILE_K)
    return c, rowsum
'''


def test_clean_kernel_module_parses():
    assert fixes.parses(CLEAN_MODULE)


def test_clean_kernel_module_has_no_finding_under_any_rule():
    found = lint(CLEAN_MODULE)
    assert found == [], [f"{d.code} {d.location.row}:{d.location.column} {d.message}" for d in found]


def test_check_command_reports_nothing_for_the_clean_module(cli, write):
    path = write("clean_kernels.py", CLEAN_MODULE)
    result = cli("check", str(path), "--select", "ASC", "--no-cache", "--format", "concise")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "clean, defect, code",
    [
        pytest.param(
            "tl.store(p_c, acc.to(tl.float16), boundary_check=(0, 1))",
            "tl.store(p_c, acc.to(tl.float16))",
            "ASC303",
            id="dropped-boundary-check",
        ),
        # ASC503 reports only widths the autotune configs vary (a width passed at a launch is set by the data or
        # the UB budget, which the author cannot widen): the seeded defect autotunes BN over narrow values
        pytest.param(
            ("@triton.jit\ndef matmul_rowsum_kernel(", "BN=TILE_N, "),
            ('@triton.autotune(configs=[triton.Config({"BN": 16}), triton.Config({"BN": 32})], key=["N"])\n'
             "@triton.jit\ndef matmul_rowsum_kernel(", ""),
            "ASC503", id="narrow-autotuned-output-tile",
        ),
        pytest.param(
            'vector_cores = props["num_vectorcore"]', 'vector_cores = props["num_aicore"]', "ASC501",
            id="vector-kernel-on-cube-count",
        ),
        pytest.param(
            "[(min(vector_cores, n_full),)]", "[(triton.cdiv(n, ADD_BLOCK),)]", "ASC105", id="uncapped-grid",
        ),
        pytest.param("    if TAIL:\n", "    if tail_start > 0:\n", "ASC302", id="runtime-tail-split"),
        pytest.param(
            "    else:\n", "    for i_round in range(tail_start):\n", "ASC502", id="task-loop-nested-in-block-loop"
        ),
    ],
)
def test_each_seeded_defect_in_the_clean_module_is_found(clean, defect, code):
    broken = CLEAN_MODULE
    for before, after in zip(clean, defect) if isinstance(clean, tuple) else [(clean, defect)]:
        assert broken.count(before) == 1
        broken = broken.replace(before, after)
    assert [d.code for d in lint(broken)].count(code) >= 1
