"""Stand-in for ``triton_dist.language.extra.ascend.algorithm``: the Nz tile orders of fused kernels.

Both functions map a flat iteration id to a tile; each is a permutation of the tiles, chosen for
locality on the device, so a kernel that covers every id covers every tile exactly once.

``gemm_swizzle2d_Nz`` groups the column tiles ``swizzle_offset`` at a time (the last group may be
narrower). Inside a group the ids walk the group's columns for one row, then the next row; odd
groups walk the rows bottom-up, a zigzag that keeps the rows of one group's end close to the next
group's start. Returns ``(row tile, column tile)``.

``dist_swizzle2d_Nz`` spreads communication tiles over ranks: ids come in groups of
``comm_npu_split`` ranks per data tile, the rank index is permuted by the stride step
``(r * stride) % stride + (r * stride) // rank_size`` with ``stride = rank_size // comm_npu_split``
and shifted by the data tile, ``(r + tile) % rank_size``, so consecutive ids point at different
ranks. Returns ``(row tile, column tile, rank, rows in the tile, columns in the tile)``. With
``comm_npu_split=1`` (the usual value) it is a permutation of (rank, tile) pairs; the stride step as
written maps several ranks to one for larger splits.

Arguments arrive as ints, constexprs or one-element tensors; results are int32 tensors.
"""

from __future__ import annotations

from .. import memory


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def gemm_swizzle2d_Nz(iter_id, data_row_shape, data_col_shape, tile_row_shape, tile_col_shape, swizzle_offset=7):
    step, rows, cols, tile_rows, tile_cols, group_width = (memory.as_int(v) for v in (
        iter_id, data_row_shape, data_col_shape, tile_row_shape, tile_col_shape, swizzle_offset))
    row_tiles, col_tiles = _cdiv(rows, tile_rows), _cdiv(cols, tile_cols)
    group, inside = divmod(step, group_width * row_tiles)
    width = min(group_width, col_tiles - group * group_width)
    row, col = inside // width, group * group_width + inside % width
    if group % 2 == 1:
        row = row_tiles - 1 - row
    return memory.int32_tensor(row), memory.int32_tensor(col)


def dist_swizzle2d_Nz(iter_id, rank_size, data_row_shape, data_col_shape, tile_row_shape, tile_col_shape,
                      comm_npu_split=1):
    step, ranks, rows, cols, tile_rows, tile_cols, split = (memory.as_int(v) for v in (
        iter_id, rank_size, data_row_shape, data_col_shape, tile_row_shape, tile_col_shape, comm_npu_split))
    col_tiles = _cdiv(cols, tile_cols)
    data_tiles = _cdiv(rows, tile_rows) * col_tiles
    stride = ranks // split
    rank_group, inside = divmod(step, split * data_tiles)
    group_size = split if rank_group < _cdiv(ranks, split) - 1 else ranks - split * rank_group
    data_tile = inside // group_size
    rank = rank_group * split + inside % group_size
    rank = (rank * stride) % stride + (rank * stride) // ranks
    rank = (rank + data_tile) % ranks
    row, col = divmod(data_tile, col_tiles)
    rows_here = min(rows - row * tile_rows, tile_rows)
    cols_here = min(cols - col * tile_cols, tile_cols)
    return tuple(memory.int32_tensor(v) for v in (row, col, rank, rows_here, cols_here))
