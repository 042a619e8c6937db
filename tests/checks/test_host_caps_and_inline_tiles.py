"""False classes of the size rules read on untuned code, as kernels of our own: a grid launched only under a
comparison with a core count (held in an attribute or read from a device property), a literal table whose keys pair
a dtype string with sizes, and tile sizes picked inline by a conditional expression of literal tuples."""

from __future__ import annotations

import pytest

from tests.helpers import lint

TILES = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def tile_scale(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    n_cols = tl.cdiv(N, BN)
    i_m = pid // n_cols
    i_n = pid % n_cols
    rows = i_m * BM + tl.arange(0, BM)
    cols = i_n * BN + tl.arange(0, BN)
    offs = rows[:, None] * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

"""

ONE_PROGRAM_PER_TILE = (
    "    total_tiles = triton.cdiv(M, 64) * triton.cdiv(N, 64)\n"
    "{guard}"
    "        tile_scale[(total_tiles,)](x, y, M, N, BM=64, BN=64)\n"
    "        return y\n"
    "    return x * 2\n"
)

CORE_GUARDS = {
    "attribute": (
        "class Scaler:\n    def __init__(self):\n        self.cube_core_num = 24\n\n"
        "    def __call__(self, x):\n        M, N = x.shape\n        y = torch.empty_like(x)\n",
        "    if total_tiles <= self.cube_core_num:\n"),
    "device property": (
        "def scale(x):\n    M, N = x.shape\n    y = torch.empty_like(x)\n"
        "    props = torch.npu.get_device_properties(x.device)\n",
        "    if total_tiles < props.num_aicore:\n"),
    "core count in a host name": (
        "def scale(x):\n    M, N = x.shape\n    y = torch.empty_like(x)\n"
        "    n_programs = triton.runtime.driver.active.utils.get_device_properties(0)[\"num_vectorcore\"]\n",
        "    if n_programs >= total_tiles:\n"),
}


def _core_guarded(head: str, guard: str) -> str:
    body = ONE_PROGRAM_PER_TILE.format(guard=guard)
    if head.startswith("class"):
        body = "".join("    " + line if line else line for line in body.splitlines(True))
    return TILES + head + body


@pytest.mark.parametrize("head, guard", CORE_GUARDS.values(), ids=CORE_GUARDS.keys())
def test_a_grid_launched_only_under_a_core_count_is_capped(head, guard):
    assert lint(_core_guarded(head, guard), "ASC105", "ASC110") == []


@pytest.mark.parametrize("head, guard", CORE_GUARDS.values(), ids=CORE_GUARDS.keys())
def test_the_same_grid_without_the_core_guard_is_reported(head, guard):
    source = _core_guarded(head, guard).replace(guard.strip(), "if x.is_contiguous():")
    assert [d.code for d in lint(source, "ASC105", "ASC110")] == ["ASC105"]


GEMM = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i_m = tl.program_id(0)
    i_n = tl.program_id(1)
    rm = i_m * BM + tl.arange(0, BM)
    rn = i_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        rk = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

_BLOCKS = {
    ("torch.float16", 512, 512): (64, 64),
    ("torch.float16", 2048, 1024): (128, 128),
    ("torch.bfloat16", 2048, 1024): (128, 64),
}

"""

KEYED_LOOKUPS = {
    "subscript": (
        "def matmul(a, b):\n    M, K = a.shape\n    N = b.shape[1]\n"
        "    BM, BN = _BLOCKS[(str(a.dtype), M, N)]\n"),
    "get then exit on None": (
        "def matmul(a, b):\n    M, K = a.shape\n    N = b.shape[1]\n"
        "    blocks = _BLOCKS.get((str(a.dtype), M, N))\n    if blocks is None:\n        return a @ b\n"
        "    BM, BN = blocks\n"),
}

GEMM_LAUNCH = (
    "    c = torch.empty((M, N), dtype=a.dtype, device=a.device)\n"
    "    mm[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, BM=BM, BN=BN, BK=64)\n"
    "    return c\n"
)


@pytest.mark.parametrize("host", KEYED_LOOKUPS.values(), ids=KEYED_LOOKUPS.keys())
def test_a_table_keyed_by_dtype_and_sizes_caps_the_sizes(host):
    assert lint(GEMM + host + GEMM_LAUNCH, "ASC105", "ASC110") == []


def test_the_same_gemm_grid_without_the_table_is_reported():
    host = "def matmul(a, b):\n    M, K = a.shape\n    N = b.shape[1]\n    BM, BN = 128, 128\n"
    assert [d.code for d in lint(GEMM + host + GEMM_LAUNCH, "ASC105", "ASC110")] == ["ASC105"]


def test_a_dtype_column_alone_gives_no_size_evidence():
    table = GEMM
    host = ("_DTYPES = {(\"torch.float16\",), (\"torch.bfloat16\",)}\n\n"
            "def matmul(a, b):\n    M, K = a.shape\n    N = b.shape[1]\n"
            "    if (str(a.dtype),) not in _DTYPES:\n        return a @ b\n    BM, BN = 128, 128\n")
    assert [d.code for d in lint(table + host + GEMM_LAUNCH, "ASC105", "ASC110")] == ["ASC105"]


SQUARE_TABLE = """\
_SQUARE_BLOCKS = {("torch.float16", 256): (64, 64), ("torch.bfloat16", 1024): (128, 128)}

def square_matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
{guard}    BM, BN = _SQUARE_BLOCKS[(str(a.dtype), K)]
"""


@pytest.mark.parametrize("guard, codes", [
    ("    if not (M == N == K):\n        return a @ b\n", []),
    ("    if M != K or N != K:\n        return a @ b\n", []),
    ("", ["ASC105"]),
], ids=["chained equality", "negated inequality exit", "no equality"])
def test_an_equality_carries_a_bound_to_the_other_sizes(guard, codes):
    source = GEMM + SQUARE_TABLE.replace("{guard}", guard) + GEMM_LAUNCH
    assert [d.code for d in lint(source, "ASC105", "ASC110")] == codes


INLINE_TILES = """\
def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    small = max(M, N) <= 64
    {binding}
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    mm[grid](a, b, c, M, N, K, BM=bm, BN=bn, BK=bk)
    return c
"""

INLINE_BINDINGS = {
    "tuples of literals": "bm, bn, bk = (32, 32, 32) if small else (128, 128, 64)",
    "a nested choice inside a tuple": "bm, bn, bk = (16, 16, 32) if small else (64 if M <= 1024 else 128, 128, 64)",
    "a list target": "[bm, bn, bk] = (32, 32, 32) if small else (128, 256, 64)",
}


def _inline_gemm(binding: str) -> str:
    return GEMM.split("_BLOCKS = {")[0] + INLINE_TILES.replace("{binding}", binding)


@pytest.mark.parametrize("binding", INLINE_BINDINGS.values(), ids=INLINE_BINDINGS.keys())
def test_tiles_picked_inline_from_literal_tuples_are_literals(binding):
    assert lint(_inline_gemm(binding), "ASC304", "ASC107") == []


def test_tiles_picked_inline_from_a_runtime_size_still_report():
    binding = "bm, bn, bk = (32, 32, 32) if small else (triton.next_power_of_2(M), 128, 64)"
    assert "ASC304" in [d.code for d in lint(_inline_gemm(binding), "ASC304")]


def test_launch_values_read_the_largest_inline_literal():
    import libcst as cst

    from ascendlint.analysis.launch_arguments import literal_arguments
    from ascendlint.analysis.module_facts import ModuleFacts
    from ascendlint.analysis.walk import NodeIndex

    module = cst.parse_module(_inline_gemm(INLINE_BINDINGS["a nested choice inside a tuple"]))
    facts = ModuleFacts(module, NodeIndex(module))
    assert literal_arguments(facts, facts.launches[-1]) == {"BM": 128, "BN": 128, "BK": 64}


def test_the_branch_holding_the_launch_is_not_read_as_an_early_exit():
    """``if M > 0: launch; return`` holds ``M > 0`` at the launch, not its negation (``M <= 0``, a bound)."""
    head, guard = CORE_GUARDS["device property"]
    source = _core_guarded(head, guard).replace(guard.strip(), "if M > 0:")
    assert [d.code for d in lint(source, "ASC105", "ASC110")] == ["ASC105"]
