"""Classes of traps real teams fixed that the size rules used to miss, each on kernels of our own: a launch through a
name bound to one of several kernels, a conditional grid axis with an uncapped side, routed token tiles in a
`lambda meta:` grid, a row index times a row length, a block id narrowed to int32 (and the converse, an index read
from an int64 tensor), and the fix that caps a grid axis."""

from __future__ import annotations

import textwrap

from tests.helpers import lint

HEADER = """\
import torch
import triton
import triton.language as tl
"""


def codes(source: str, *selected: str) -> list[tuple[str, int]]:
    found = lint(HEADER + textwrap.dedent(source), *selected)
    return [(d.code, d.location.row) for d in found if d.code in selected]


def messages(source: str, code: str) -> list[str]:
    return [d.message for d in lint(HEADER + textwrap.dedent(source), code) if d.code == code]


DISPATCH = """
@triton.jit
def fwd_bt32(x_ptr, T, H, BT: tl.constexpr):
    pass

@triton.jit
def fwd_bt64(x_ptr, T, H, BT: tl.constexpr):
    pass

def chunk_fwd(q, BT):
    B, T, H, K = q.shape
    NT = triton.cdiv(T, BT)
    fn = fwd_bt32 if BT == 32 else fwd_bt64
    fn[(NT, B * H)](q, T, H, BT=BT, num_warps=4)
"""


def test_a_launch_through_a_name_bound_to_one_of_several_kernels_is_a_launch():
    assert sorted(codes(DISPATCH, "ASC105", "ASC101")) == [("ASC101", 17), ("ASC105", 17)]


def test_a_name_bound_to_something_else_is_still_no_launch():
    source = DISPATCH.replace("fn = fwd_bt32 if BT == 32 else fwd_bt64", "fn = kernels[BT]")
    assert codes(source, "ASC105") == []


def test_a_conditional_grid_axis_with_an_uncapped_side_states_both_thresholds():
    source = """
    @triton.jit
    def fwd(x_ptr, T, H, BT: tl.constexpr):
        pass

    def chunk_fwd(q, chunk_indices, cu_seqlens):
        B, T, H, K = q.shape
        NT = len(chunk_indices) if cu_seqlens is not None else triton.cdiv(T, 16)
        fwd[(NT, B * H)](q, T, H, BT=16)
    """
    found = messages(source, "ASC105")
    assert len(found) == 1
    assert "once `len(chunk_indices)` > 65,535 or `T` > 1,048,560 (`NT` x `B` x `H`" in found[0]


ROUTED = """
@triton.jit
def up_proj(x_ptr, tile_row_start_ptr, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass

def moe(x, expert_tile_offset, intermediate_dim):
    num_m_tiles = int(expert_tile_offset[-1].item())
    tile_row_start = torch.empty(num_m_tiles, dtype=torch.int32, device=x.device)
    num_m_tiles = tile_row_start.shape[0]
    up_proj[lambda meta: (num_m_tiles, triton.cdiv(intermediate_dim, meta["BLOCK_N"]))](
        x, tile_row_start, intermediate_dim, BLOCK_M=64, BLOCK_N=128)
"""


def test_routed_token_tiles_times_a_model_tile_count_pass_the_limit():
    found = messages(ROUTED, "ASC105")
    assert len(found) == 1 and "routed token tiles `num_m_tiles`" in found[0]
    assert codes(ROUTED, "ASC110") == []


def test_the_one_dimensional_grid_over_routed_tiles_that_fixed_it_is_quiet():
    fixed = ROUTED.replace('(num_m_tiles, triton.cdiv(intermediate_dim, meta["BLOCK_N"]))', "(num_m_tiles,)")
    assert codes(fixed, "ASC105", "ASC110") == []


def test_a_fix_that_caps_the_grid_axis_leaves_the_launch_quiet():
    source = """
    @triton.jit
    def fwd(x_ptr, T, H, BT: tl.constexpr):
        pass

    def chunk_fwd(q):
        B, T, H, K = q.shape
        NT = triton.cdiv(T, 16)
        fwd[(NT, B * H)](q, T, H, BT=16)

    def chunk_fwd_capped(q):
        B, T, H, K = q.shape
        NT = min(triton.cdiv(T, 16), 65535 // (B * H))
        fwd[(NT, B * H)](q, T, H, BT=16)
    """
    assert codes(source, "ASC105", "ASC110") == [("ASC105", 12)]


def test_a_row_index_times_a_row_length_passed_as_constexpr_is_reported():
    source = """
    @triton.jit
    def copy_rows(x_ptr, y_ptr, N: tl.constexpr, ROWS: tl.constexpr):
        pid = tl.program_id(0)
        cols = tl.arange(0, N)
        for i in range(ROWS):
            row = pid * ROWS + i
            tl.store(y_ptr + row * N + cols, tl.load(x_ptr + row * N + cols))

    def run(x, y):
        n_rows, n = x.shape
        copy_rows[(triton.cdiv(n_rows, 4),)](x, y, N=n, ROWS=4)
    """
    found = messages(source, "ASC202")
    assert len(found) == 1 and found[0].startswith("`row * N` multiplies a runtime index")
    tile = source.replace("N=n, ROWS=4", "N=128, ROWS=4")  # a literal tile: no row length of the activation
    assert codes(tile, "ASC202") == []


def test_a_row_from_a_start_row_and_the_program_id_times_a_row_length_is_reported():
    source = """
    @triton.jit
    def copy_from(x_ptr, y_ptr, start_row, HIDDEN: tl.constexpr):
        off = tl.program_id(0)
        row = start_row + off
        cols = tl.arange(0, HIDDEN)
        tl.store(y_ptr + row * HIDDEN + cols, tl.load(x_ptr + row * HIDDEN + cols))

    def run(x, y, start_row, count):
        copy_from[(count,)](x, y, start_row, HIDDEN=x.shape[-1])
    """
    assert [code for code, _ in codes(source, "ASC202")] == ["ASC202"]


BLOCK_TABLE = """
@triton.jit
def gather_blocks(k_cache, out, block_table, stride_kb, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    block_id = tl.load(block_table + i)
    offs = tl.arange(0, BLOCK)
    tl.store(out + i * BLOCK + offs, tl.load(k_cache + block_id * stride_kb + offs))

def run(k_cache, out, seq_blocks):
    block_table = seq_blocks.flatten().to(torch.int64)
    gather_blocks[(block_table.numel(),)](k_cache, out, block_table, k_cache.stride(0), BLOCK=128)
"""


def test_a_block_id_narrowed_to_int32_times_the_block_stride_is_reported():
    narrowed = BLOCK_TABLE.replace("tl.load(block_table + i)", "tl.load(block_table + i).to(tl.int32)")
    assert [code for code, _ in codes(narrowed, "ASC202", "ASC203")] == ["ASC203", "ASC202"]


def test_an_index_loaded_from_an_int64_tensor_is_int64_already():
    assert codes(BLOCK_TABLE, "ASC202", "ASC203", "ASC207") == []
    for spelled in ("torch.zeros(n, dtype=torch.int64)", "seq_blocks.long()", "seq_blocks[:, 0].contiguous().long()"):
        source = BLOCK_TABLE.replace("seq_blocks.flatten().to(torch.int64)", spelled).replace(
            "seq_blocks):", "seq_blocks, n=8):")
        assert codes(source, "ASC202", "ASC207") == [], spelled


def test_the_same_index_loaded_from_an_int32_tensor_wraps():
    int32 = BLOCK_TABLE.replace("to(torch.int64)", "to(torch.int32)")
    assert [code for code, _ in codes(int32, "ASC202")] == ["ASC202"]
    unknown = BLOCK_TABLE.replace("block_table = seq_blocks.flatten().to(torch.int64)\n", "").replace(
        "seq_blocks):", "block_table):")
    assert [code for code, _ in codes(unknown, "ASC202")] == ["ASC202"]  # no dtype shown: as before
