"""ASC303 reads the kernel's own compile-time asserts: ``tl.static_assert(M % BLOCK_M == 0)`` fails compilation
unless the block divides the extent, so every compiled kernel has whole tiles there."""

from __future__ import annotations

import pytest

from tests.helpers import lint

KERNEL = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def tile_add(a_ptr, b_ptr, M: tl.constexpr, N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
{asserts}    i_m = tl.program_id(0)
    i_n = tl.program_id(1)
    p_a = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (i_m * BLOCK_M, i_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0))
    p_b = tl.make_block_ptr(b_ptr, (M, N), (N, 1), (i_m * BLOCK_M, i_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(p_b, tl.load(p_a) + tl.load(p_b))
"""

ASSERTS = {
    "both dimensions, one assert each": (
        "    tl.static_assert(M % BLOCK_M == 0)\n    tl.static_assert(N % BLOCK_N == 0, 'N must be tiled')\n", []),
    "both dimensions in one conjunction": ("    tl.static_assert(M % BLOCK_M == 0 and N == BLOCK_N)\n", []),
    "one dimension only": ("    tl.static_assert(M % BLOCK_M == 0)\n", ["ASC303"] * 3),
    "inside a constexpr branch only": (
        "    if M > 64:\n        tl.static_assert(M % BLOCK_M == 0 and N % BLOCK_N == 0)\n", ["ASC303"] * 3),
    "no assert": ("", ["ASC303"] * 3),
}


@pytest.mark.parametrize("asserts, codes", ASSERTS.values(), ids=ASSERTS.keys())
def test_static_asserts_in_the_kernel_make_block_pointers_exact(asserts, codes):
    source = KERNEL.replace("{asserts}", asserts)
    assert [d.code for d in lint(source, "ASC303")] == codes
