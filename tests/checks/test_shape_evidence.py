"""Exact-shape evidence as a cap, read once (``ascendlint/analysis/shape_evidence.py``) for every rule that asks what
the host guarantees at a launch: divisibility asserts in any spelling, early returns on a predicate function whose
body checks shapes, membership in a literal set of shapes, lookups in a literal table keyed by shape, and the same
evidence stated by every caller of a private launcher. ASC303 reads divisibility from it; ASC105, ASC110 and ASC304
read bounds."""

from __future__ import annotations

import pytest

from tests.helpers import lint

MATMUL = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def tile_copy(a_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    i_m = tl.program_id(0)
    i_n = tl.program_id(1)
    p_a = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (i_m * BM, i_n * BN), (BM, BN), (1, 0))
    p_c = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (i_m * BM, i_n * BN), (BM, BN), (1, 0))
    tl.store(p_c, tl.load(p_a))

"""

LAUNCH = "    tile_copy[(M // 32, N // 256)](a, c, M, N, BM=32, BN=256)\n"

EXACT = {
    "assert on shape entries": (
        "def run(a, c):\n    assert a.shape[0] % 32 == 0 and a.size(1) % 256 == 0\n    M, N = a.shape\n" + LAUNCH),
    "membership in a literal set of shapes": (
        "_SHAPES = {(2048, 512), (4096, 1024)}\n\n"
        "def run(a, c):\n    M, N = a.shape\n    if (M, N) not in _SHAPES:\n        return torch.mm(a, a)\n" + LAUNCH),
    "whole shape in a literal list": (
        "_SHAPES = [(2048, 512), (4096, 1024)]\n\n"
        "def run(a, c):\n    if tuple(a.shape) not in _SHAPES:\n        return torch.mm(a, a)\n    M, N = a.shape\n"
        + LAUNCH),
    "early return on a shape predicate": (
        "def _tiles_exactly(t):\n    rows, cols = t.shape\n    if rows % 32:\n        return False\n"
        "    return cols % 256 == 0\n\n"
        "def run(a, c):\n    if not _tiles_exactly(a):\n        return torch.mm(a, a)\n    M, N = a.shape\n" + LAUNCH),
    "lookup in a table keyed by shape": (
        "_CONFIGS = {(2048, 512): 'small', (4096, 1024): 'large'}\n\n"
        "def run(a, c):\n    M, N = a.shape\n    name = _CONFIGS[(M, N)]\n" + LAUNCH),
    "every caller of a private launcher asserts": (
        "def _launch(a, c):\n    M, N = a.shape\n" + LAUNCH + "\n"
        "def run(a, c):\n    assert a.shape[0] % 32 == 0 and a.shape[1] % 256 == 0\n    _launch(a, c)\n"),
}

NOT_EXACT = {
    "a shape in the set does not divide": (
        "_SHAPES = {(2048, 512), (4010, 1024)}\n\n"
        "def run(a, c):\n    M, N = a.shape\n    if (M, N) not in _SHAPES:\n        return torch.mm(a, a)\n" + LAUNCH),
    "a predicate that checks something else": (
        "def _contiguous(t):\n    return t.is_contiguous()\n\n"
        "def run(a, c):\n    if not _contiguous(a):\n        return torch.mm(a, a)\n    M, N = a.shape\n" + LAUNCH),
    "one caller of the launcher does not assert": (
        "def _launch(a, c):\n    M, N = a.shape\n" + LAUNCH + "\n"
        "def run(a, c):\n    assert a.shape[0] % 32 == 0 and a.shape[1] % 256 == 0\n    _launch(a, c)\n\n"
        "def run_any(a, c):\n    _launch(a, c)\n"),
    "a public launcher whose module caller asserts": (
        "def launch(a, c):\n    M, N = a.shape\n" + LAUNCH + "\n"
        "def run(a, c):\n    assert a.shape[0] % 32 == 0 and a.shape[1] % 256 == 0\n    launch(a, c)\n"),
}


@pytest.mark.parametrize("host", EXACT.values(), ids=EXACT.keys())
def test_asc303_quiet_where_the_host_states_exact_shapes(host):
    assert lint(MATMUL + host, "ASC303") == []


@pytest.mark.parametrize("host", NOT_EXACT.values(), ids=NOT_EXACT.keys())
def test_asc303_still_reports_without_exact_shapes(host):
    assert [d.code for d in lint(MATMUL + host, "ASC303")] == ["ASC303", "ASC303"]


ROWS = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def row_copy(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * n_cols + offs, tl.load(x_ptr + row * n_cols + offs))

"""

ROW_LAUNCH = (
    "    y = torch.empty_like(x)\n"
    "    row_copy[(n_tokens,)](x, y, hidden, BLOCK=triton.next_power_of_2(hidden))\n    return y\n"
)

CAPPED = {
    "predicate": (
        "def _fast_path(t):\n    n, h = t.shape\n    return n <= 8192 and h in (1024, 2048)\n\n"
        "def run(x):\n    if not _fast_path(x):\n        return x.clone()\n    n_tokens, hidden = x.shape\n"
        + ROW_LAUNCH),
    "membership": (
        "_TUNED = {(1024, 1024), (4096, 2048)}\n\n"
        "def run(x):\n    n_tokens, hidden = x.shape\n    if (n_tokens, hidden) in _TUNED:\n"
        "        y = torch.empty_like(x)\n"
        "        row_copy[(n_tokens,)](x, y, hidden, BLOCK=triton.next_power_of_2(hidden))\n"
        "        return y\n    return x.clone()\n"),
    "table lookup with get": (
        "_CONFIGS = {(1024, 1024): 8, (4096, 2048): 4}\n\n"
        "def run(x):\n    n_tokens, hidden = x.shape\n    cfg = _CONFIGS.get((n_tokens, hidden))\n"
        "    if cfg is None:\n        return x.clone()\n" + ROW_LAUNCH),
    "caller membership": (
        "_TUNED = [(1024, 1024), (4096, 2048)]\n\n"
        "def _launch(x):\n    n_tokens, hidden = x.shape\n" + ROW_LAUNCH + "\n"
        "def run(x):\n    if tuple(x.shape) not in _TUNED:\n        return x.clone()\n    return _launch(x)\n"),
}


@pytest.mark.parametrize("host", CAPPED.values(), ids=CAPPED.keys())
def test_grid_rules_read_exact_shapes_as_a_cap(host):
    assert lint(ROWS + host, "ASC105", "ASC110") == []


def test_grid_rules_still_report_the_same_launch_without_evidence():
    host = "def run(x):\n    n_tokens, hidden = x.shape\n" + ROW_LAUNCH
    assert [d.code for d in lint(ROWS + host, "ASC105", "ASC110")] == ["ASC105"]


def test_a_bound_too_large_for_the_grid_does_not_cap_it():
    host = ("_TUNED = {(131072, 1024)}\n\n"
            "def run(x):\n    n_tokens, hidden = x.shape\n    if (n_tokens, hidden) not in _TUNED:\n"
            "        return x.clone()\n" + ROW_LAUNCH)
    assert [d.code for d in lint(ROWS + host, "ASC105", "ASC110")] == ["ASC105"]


SCALE = """\
import torch
import triton
import triton.language as tl

@triton.jit
def rows_scale(x, w, y, C, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    offs = rows[:, None] * C + cols[None, :]
    v = tl.load(x + offs, mask=cols[None, :] < C, other=0.0).to(tl.float32)
    tl.store(y + offs, v * tl.load(w + cols, mask=cols < C)[None, :], mask=cols[None, :] < C)

"""


@pytest.mark.parametrize("guard, codes", [
    ("", ["ASC304"]),
    ("    if C not in (2048, 4096):\n        return x * w\n", []),
    ("    if not _narrow(x):\n        return x * w\n", []),
])
def test_asc304_reads_exact_shapes_as_a_cap(guard, codes):
    source = SCALE + (
        "def _narrow(t):\n    return t.shape[1] <= 4096\n\n"
        "def scale(x, w):\n    n, C = x.shape\n" + guard + "    y = torch.empty_like(x)\n    BLOCK_C = C\n"
        "    rows_scale[(triton.cdiv(n, 4),)](x, w, y, C, ROWS=4, BLOCK_C=BLOCK_C)\n    return y\n"
    )
    assert [d.code for d in lint(source, "ASC304")] == codes
