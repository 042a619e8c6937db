"""ASC303's opt-in case: tails of model dimensions are reported only with `check-model-dimensions`."""

from __future__ import annotations

from tests.helpers import lint

HEAD_DIM_TILES = """
import triton
import triton.language as tl

@triton.jit
def head_tiles(q_ptr, o_ptr, T, K, BT: tl.constexpr, BK: tl.constexpr):
    i_t, i_k = tl.program_id(0), tl.program_id(1)
    p_q = tl.make_block_ptr(q_ptr, (T, K), (K, 1), (i_t * BT, i_k * BK), (BT, BK), (1, 0))
    tl.store(p_q, tl.load(p_q, boundary_check=(0,)) * 2, boundary_check=(0,))
    p_w = tl.make_block_ptr(o_ptr, (BT, K), (K, 1), (0, i_k * BK), (BT, BK), (1, 0))
    tl.store(p_w, tl.zeros((BT, BK), dtype=tl.float32))
"""


def _rows(options):
    return [d.location.row for d in lint(HEAD_DIM_TILES, "ASC303", options=options) if d.code == "ASC303"]


def test_model_dimension_tails_are_not_reported_by_default():
    assert _rows(None) == []


def test_model_dimension_tails_are_reported_when_asked():
    # line 9 checks only axis 0, leaving out the K tail (a partial boundary_check); line 11 checks nothing
    assert _rows({"ASC303": {"check-model-dimensions": True}}) == [9, 9, 11]
