"""A host name assigned again from its own value (``BLOCK = max(BLOCK, TILE)``, ``BLOCK = BLOCK * 2``) is read as
the value it had before that assignment, so the grid analysis keeps what the first value said: a block of at least
``ceil(n / CORES)`` elements still makes ``cdiv(n, BLOCK)`` a core count, and a doubled literal block is that
literal doubled."""

from __future__ import annotations

from tests.helpers import lint

SHARE = """\
import math

import torch
import triton
import triton.language as tl

CORE_NUM = 40


@triton.jit
def less_than_kernel(inp, out, scalar_val, data_len, BLOCK_SIZE: tl.constexpr, TILE_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    for idx in tl.range(0, tl.cdiv(BLOCK_SIZE, TILE_SIZE)):
        offsets = pid * BLOCK_SIZE + idx * TILE_SIZE + tl.arange(0, TILE_SIZE)
        mask = offsets < data_len
        tl.store(out + offsets, tl.load(inp + offsets, mask=mask) < scalar_val, mask=mask)


def less_than(a, b):
    data_len = a.numel()
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    BLOCK_SIZE = math.ceil(data_len / CORE_NUM)
    TILE_SIZE = 8192
    BLOCK_SIZE = max(BLOCK_SIZE, TILE_SIZE)
    grid = lambda meta: (triton.cdiv(data_len, meta["BLOCK_SIZE"]),)
    less_than_kernel[grid](a, out, float(b), data_len, BLOCK_SIZE, TILE_SIZE)
    return out
"""


def grid_findings(source: str) -> list[str]:
    return [f"{d.code}: {d.message}" for d in lint(source, "ASC105", "ASC110")]


def test_a_per_core_share_raised_to_a_minimum_tile_keeps_the_grid_at_the_core_count():
    assert grid_findings(SHARE) == []


def test_a_per_core_share_capped_by_a_tile_is_reported_at_that_tile():
    (finding,) = grid_findings(SHARE.replace("max(BLOCK_SIZE, TILE_SIZE)", "min(BLOCK_SIZE, TILE_SIZE)"))
    assert "8,192" in finding


def test_a_doubled_literal_block_is_the_doubled_literal():
    source = SHARE.replace("math.ceil(data_len / CORE_NUM)", "1024").replace(
        "max(BLOCK_SIZE, TILE_SIZE)", "BLOCK_SIZE * 2")
    (finding,) = grid_findings(source)
    assert finding.startswith("ASC105") and "134,215,680" in finding and "2,048" in finding
