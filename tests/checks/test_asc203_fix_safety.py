"""ASC203's fix widens a load, or, when the value also sizes block pointer offsets, widens it where it enters pointer
arithmetic: either way no block pointer offset becomes int64 (ASC103)."""

from __future__ import annotations

from ascendlint.catalog.registry import all_rules
from tests.helpers import fix, lint

RULE = next(r for r in all_rules() if r.code == "ASC203")
SIZES_BLOCK_OFFSETS = RULE.INVALID[-1].code


def test_a_value_that_sizes_block_pointer_offsets_is_widened_at_the_pointer_base_not_at_the_load():
    widened = fix(SIZES_BLOCK_OFFSETS, "ASC203", unsafe=False).text
    assert "bos = tl.load(cu_seqlens + i_n).to(tl.int32)" in widened
    assert "o + (tl.cast(bos, tl.int64) * H + i_h) * D" in widened
    assert lint(widened, "ASC103") == []
    assert lint(widened, "ASC203") == []


def test_the_fix_stays_safe_when_only_a_length_computed_from_the_value_reaches_block_pointers():
    source = """
import triton
import triton.language as tl

@triton.jit
def kernel(x, o, cu_seqlens, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    T = eos - bos
    for i_t in range(tl.cdiv(T, BT)):
        p_x = tl.make_block_ptr(x + (bos * H + i_h) * D, (T, D), (H * D, 1), (i_t * BT, 0), (BT, D), (1, 0))
        tl.store(o + (bos * H + i_h) * D + i_t, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
"""
    fixed = fix(source, "ASC203", unsafe=False).text
    assert "bos = tl.load(cu_seqlens + i_n).to(tl.int64)" in fixed
    assert "T = (eos - bos).to(tl.int32)" in fixed
    assert lint(fixed, "ASC103") == []
    assert lint(fixed, "ASC203") == []
