"""A host helper that returns one of a few literals (``return 64 if n < 4096 else 128``) gives those literals to
every rule that reads a tile size: the grid analysis, the launch values the Unified Buffer estimate reads, ASC304's
tile extents, ASC107's constexprs and the blocks ASC303 checks divisibility against."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.grid import launch_grid
from ascendlint.analysis.grid_factors import Kind
from ascendlint.analysis.launch_arguments import literal_arguments
from ascendlint.analysis.literal_helpers import helper_literals
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from tests.helpers import lint

HELPERS = """\
import torch
import triton
import triton.language as tl

@triton.jit
def rows_scale(x, y, C, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    offs = rows[:, None] * C + cols[None, :]
    tl.store(y + offs, tl.load(x + offs, mask=cols[None, :] < C), mask=cols[None, :] < C)

def _block_for(n):
    if n <= 1024:
        return 1024
    return 2048 if n <= 8192 else 4096

def _tiles(n):
    return (4, 1024) if n < 4096 else (2, 2048)

def _computed(n):
    return triton.next_power_of_2(n)

"""


def facts_of(source: str) -> ModuleFacts:
    module = cst.parse_module(textwrap.dedent(source))
    return ModuleFacts(module, NodeIndex(module))


@pytest.mark.parametrize("call, expected", [
    ("_block_for(C)", (1024, 2048, 4096)),
    ("_tiles(C)", ((2, 2048), (4, 1024))),
    ("_computed(C)", None),
])
def test_helper_literals(call, expected):
    facts = facts_of(HELPERS + f"value = {call}\n")
    assert helper_literals(facts, facts.module.body[-1].body[0].value) == expected


LAUNCHES = """\
def scale(x):
    n, C = x.shape
    y = torch.empty_like(x)
    {binding}
    rows_scale[(triton.cdiv(n, 4),)](x, y, C, ROWS={rows}, BLOCK_C={block})
    return y
"""


@pytest.mark.parametrize("binding, rows, block", [
    ("BLOCK_C = _block_for(C)", "4", "BLOCK_C"),
    ("ROWS, BC = _tiles(C)", "ROWS", "BC"),
])
def test_asc304_and_asc107_read_a_helpers_literals(binding, rows, block):
    source = HELPERS + LAUNCHES.format(binding=binding, rows=rows, block=block)
    assert [d.code for d in lint(source, "ASC304", "ASC107")] == []


def test_asc304_still_reports_a_tile_the_host_sizes_from_the_data():
    source = HELPERS + LAUNCHES.format(binding="BLOCK_C = C", rows="4", block="BLOCK_C")
    # fp32 rows (with the compiler installed, an fp16 row fits up to the sweep's limit and is not reported)
    options = {"ASC304": {"pointer-dtype": "fp32"}}
    assert [d.code for d in lint(source, "ASC304", options=options)] == ["ASC304"]


def test_launch_values_take_the_largest_literal_a_helper_can_give():
    facts = facts_of(HELPERS + LAUNCHES.format(binding="ROWS, BC = _tiles(C)", rows="ROWS", block="BC"))
    assert literal_arguments(facts, facts.launches[-1]) == {"ROWS": 4, "BLOCK_C": 2048}


def test_a_grid_axis_a_helper_gives_is_a_literal():
    source = HELPERS + (
        "def run(x):\n    n, C = x.shape\n    y = torch.empty_like(x)\n"
        "    rows_scale[(_block_for(C),)](x, y, C, ROWS=1, BLOCK_C=1024)\n"
    )
    facts = facts_of(source)
    (axis,) = launch_grid(facts, facts.launches[-1]).axes
    assert [(f.kind, f.value) for f in axis] == [(Kind.LITERAL, 4096)]


TILES = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def tile_copy(a_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    p_a = tl.make_block_ptr(a_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    p_c = tl.make_block_ptr(c_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
    tl.store(p_c, tl.load(p_a))

def _rows_per_tile(m):
    return {rows}

def run(a, c):
    M, N = a.shape
    if (M, N) not in {{(2048, 256), (4096, 256)}}:
        return a.clone()
    BM = _rows_per_tile(M)
    tile_copy[(M // BM,)](a, c, M, N, BM=BM, BN=256)
"""


@pytest.mark.parametrize("rows, codes", [
    ("64 if m < 4096 else 128", []),
    ("96 if m < 4096 else 128", ["ASC303", "ASC303"]),
])
def test_asc303_checks_every_block_a_helper_can_pick(rows, codes):
    assert [d.code for d in lint(TILES.format(rows=rows), "ASC303")] == codes
