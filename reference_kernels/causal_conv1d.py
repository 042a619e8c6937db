"""Causal depthwise conv1d over ``[B, T, D]`` on a 1-D core grid.

``y[b, t, d] = act(bias[d] + sum_k weight[d, k] * x[b, t - (W - 1) + k, d])`` with ``x`` zero before
``t = 0``. Time is cut into ``BT``-row tiles and channels into ``BD``-wide tiles. Interior tiles, whose
whole causal window lies inside the sequence, move data with block pointers; the edge tiles (the first
one, whose window starts before ``t = 0``, and a ragged last one) use masked loads. The two kinds are
separate launches of one kernel with a constexpr ``EDGE_MODE``, so each compiled variant holds a single
DMA path in the Unified Buffer.
"""

import torch
import triton
import triton.language as tl

from reference_kernels._cores import vector_core_count

TIME_TILE = 64
TILE_BYTES = 512
# The fp32 accumulator [TIME_TILE, BD] and the loaded taps it sums are multi-buffered in the loop over tiles:
# BiShengIR fits 64 x 128 on A2/A3 at the launch's default options, 64 x 256 only after dropping multi-buffering.
ACC_ELEMENTS = 8192


@triton.jit(do_not_specialize=["T", "D", "first_tile", "tile_step", "n_tiles", "n_tasks"])
def _causal_conv1d_kernel(
    x,
    w_t,
    bias,
    y,
    T,
    D,
    first_tile,
    tile_step,
    n_tiles,
    n_tasks,
    W: tl.constexpr,
    BT: tl.constexpr,
    BD: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    APPLY_SILU: tl.constexpr,
    EDGE_MODE: tl.constexpr,
):
    n_d_tiles = tl.cdiv(D, BD)
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        i_d = task % n_d_tiles
        i_tile = (task // n_d_tiles) % n_tiles
        i_b = task // (n_d_tiles * n_tiles)
        t0 = (first_tile + i_tile * tile_step) * BT
        # Fresh per-task bases: int64 batch offset in the pointer, never accumulated across tasks.
        x_b = x + tl.cast(i_b, tl.int64) * T * D
        y_b = y + tl.cast(i_b, tl.int64) * T * D
        cols = i_d * BD + tl.arange(0, BD)
        col_ok = cols < D

        acc = tl.zeros([BT, BD], dtype=tl.float32)
        for k in tl.static_range(W):
            p_w = tl.make_block_ptr(w_t, (W, D), (D, 1), (k, i_d * BD), (1, BD), (1, 0))
            b_w = tl.load(p_w, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
            if EDGE_MODE:
                rows = t0 - (W - 1) + k + tl.arange(0, BT)
                row_ok = (rows >= 0) & (rows < T)
                p_x = x_b + tl.cast(rows, tl.int64)[:, None] * D + cols[None, :]
                b_x = tl.load(p_x, mask=row_ok[:, None] & col_ok[None, :], other=0.0)
            else:
                p_x = tl.make_block_ptr(x_b, (T, D), (D, 1), (t0 - (W - 1) + k, i_d * BD), (BT, BD), (1, 0))
                b_x = tl.load(p_x, boundary_check=(0, 1), padding_option="zero")
            acc += b_x.to(tl.float32) * b_w

        if HAS_BIAS:
            acc += tl.load(bias + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
        if APPLY_SILU:
            acc = acc * tl.sigmoid(acc)

        if EDGE_MODE:
            rows = t0 + tl.arange(0, BT)
            p_y = y_b + tl.cast(rows, tl.int64)[:, None] * D + cols[None, :]
            tl.store(p_y, acc.to(y.dtype.element_ty), mask=(rows < T)[:, None] & col_ok[None, :])
        else:
            p_y = tl.make_block_ptr(y_b, (T, D), (D, 1), (t0, i_d * BD), (BT, BD), (1, 0))
            tl.store(p_y, acc.to(y.dtype.element_ty), boundary_check=(0, 1))


def _tile_plan(seq_len: int, time_tile: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(first_tile, tile_step, n_tiles) for the interior launch and for the edge launch.

    Interior tiles are the full tiles after the first. Edge tiles are tile 0 and, when ``T`` is not a
    multiple of the tile, the ragged tile ``T // BT``: both are reached as ``0 + j * (T // BT)``.
    """
    n_full = seq_len // time_tile
    interior = (1, 1, max(n_full - 1, 0))
    has_ragged_tail = seq_len % time_tile != 0 and n_full > 0
    edge = (0, max(n_full, 1), 2 if has_ragged_tail else 1)
    return interior, edge


def run(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    activation: str | None = None,
    n_cores: int | None = None,
) -> torch.Tensor:
    """Causal depthwise conv1d of ``x [B, T, D]`` with ``weight [D, W]`` and optional ``bias [D]``.

    ``activation`` is ``None`` or ``"silu"``. ``n_cores`` overrides the device's vector core count.
    """
    if activation not in (None, "silu"):
        raise ValueError(f"unsupported activation {activation!r}")
    batch, seq_len, dim = x.shape
    width = weight.shape[1]
    if width - 1 > TIME_TILE:
        raise ValueError(f"kernel width {width} is wider than {TIME_TILE + 1} taps")
    x = x.contiguous()
    # [W, D] with channels stride-1, so every tap loads one contiguous channel row.
    w_t = weight.transpose(0, 1).contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    n_cores = n_cores or vector_core_count(x.device)
    block_d = min(TILE_BYTES // x.element_size(), ACC_ELEMENTS // TIME_TILE, triton.next_power_of_2(dim))
    n_d_tiles = triton.cdiv(dim, block_d)

    for edge_mode, (first_tile, tile_step, n_tiles) in zip((False, True), _tile_plan(seq_len, TIME_TILE)):
        n_tasks = batch * n_tiles * n_d_tiles
        if n_tasks == 0:
            continue
        _causal_conv1d_kernel[(n_cores,)](
            x,
            w_t,
            bias,
            y,
            seq_len,
            dim,
            first_tile,
            tile_step,
            n_tiles,
            n_tasks,
            W=width,
            BT=TIME_TILE,
            BD=block_d,
            HAS_BIAS=bias is not None,
            APPLY_SILU=activation == "silu",
            EDGE_MODE=edge_mode,
        )
    return y


def reference(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    activation: str | None = None,
) -> torch.Tensor:
    """The same conv with torch, in float32."""
    width = weight.shape[1]
    x_cf = torch.nn.functional.pad(x.float().transpose(1, 2), (width - 1, 0))
    b = None if bias is None else bias.float()
    out = torch.nn.functional.conv1d(x_cf, weight.float().unsqueeze(1), b, groups=x.shape[2])
    if activation == "silu":
        out = torch.nn.functional.silu(out)
    return out.transpose(1, 2).to(x.dtype)
