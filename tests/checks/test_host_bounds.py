"""Real misses of the size rules, as minimal kernels of our own: each fails when extents are guessed from
parameter names alone, and is reported once the launch's host code is read (``x.stride(0)`` of a vocab-sized
logits tensor, ``x.shape[0]`` of an activation, a block id loaded from a block table)."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = "import triton\nimport triton.language as tl\n\n"

MISSED = {
    # a row loop over a [B, V] logits tensor: row * stride wraps at 13662 rows of vocab 157184
    "ASC202 logits row loop": ("ASC202", """
@triton.jit
def penalize(logits_ptr, penalty_ptr, stride_logits, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row_idx in range(pid, n_rows, tl.num_programs(0)):
        p = tl.load(penalty_ptr + row_idx)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(logits_ptr + row_idx * stride_logits + cols, mask=cols < n_cols)
            tl.store(logits_ptr + row_idx * stride_logits + cols, x * p, mask=cols < n_cols)

def apply_penalty(logits, penalty, num_cores):
    n_rows, n_cols = logits.shape
    penalize[(num_cores,)](logits, penalty, logits.stride(0), n_rows, n_cols, BLOCK=1024)
"""),
    # one program per row of the logits
    "ASC202 logits row per program": ("ASC202", """
@triton.jit
def softcap(logits_ptr, row_stride, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, vocab, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(logits_ptr + row * row_stride + cols, mask=cols < vocab)
        tl.store(logits_ptr + row * row_stride + cols, x * 0.5, mask=cols < vocab)

def run(logits):
    V = logits.size(1)
    softcap[(logits.shape[0],)](logits, logits.stride(0), V, BLOCK=2048)
"""),
    # a block id loaded from a block table, narrowed to int32, times the KV block stride
    "ASC202 block id times KV block stride": ("ASC202", """
@triton.jit
def gather_kv(k_cache, out, block_tables, stride_bt, stride_kb, stride_ko, D: tl.constexpr, BS: tl.constexpr):
    seq = tl.program_id(0)
    i = tl.program_id(1)
    block_id = tl.load(block_tables + seq * stride_bt + i).to(tl.int32)
    offs = tl.arange(0, BS)[:, None] * D + tl.arange(0, D)[None, :]
    tl.store(out + seq * stride_ko + offs, tl.load(k_cache + block_id * stride_kb + offs))

def run(k_cache, out, block_tables):
    grid = (block_tables.shape[0], block_tables.shape[1])
    gather_kv[grid](k_cache, out, block_tables, block_tables.stride(0), k_cache.stride(0), out.stride(0),
                    D=128, BS=128)
"""),
    # a rope row index times the q/k row stride, one program per token in a grid-stride loop
    "ASC202 rope row times q row stride": ("ASC202", """
@triton.jit
def rope(q_ptr, k_ptr, cos_ptr, sin_ptr, q_stride, k_stride, num_tokens, HALF: tl.constexpr, NH: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, num_tokens, tl.num_programs(0)):
        d = tl.arange(0, HALF)
        c = tl.load(cos_ptr + row * HALF + d)
        h = tl.arange(0, NH)[:, None] * (2 * HALF)
        q1 = tl.load(q_ptr + row * q_stride + h + d[None, :])
        tl.store(q_ptr + row * q_stride + h + d[None, :], q1 * c)
        k1 = tl.load(k_ptr + row * k_stride + h + d[None, :])
        tl.store(k_ptr + row * k_stride + h + d[None, :], k1 * c)

def apply_rope(q, k, cos, sin, cores):
    num_tokens = q.shape[0]
    rope[(cores,)](q, k, cos, sin, q.stride(0), k.stride(0), num_tokens, HALF=64, NH=32)
"""),
    # a row stride passed as tl.constexpr: the product is still int32
    "ASC202 constexpr row stride": ("ASC202", """
@triton.jit
def scale_rows(x_ptr, n_rows, ROW_STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid, n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        tl.store(x_ptr + row * ROW_STRIDE + cols, tl.load(x_ptr + row * ROW_STRIDE + cols) * 2)

def run(logits, cores):
    scale_rows[(cores,)](logits, logits.shape[0], ROW_STRIDE=logits.stride(0), BLOCK=1024)
"""),
    # grids of one program per token or row
    "ASC105 tokens by heads": ("ASC105", """
@triton.jit
def rope_heads(q_ptr, D: tl.constexpr):
    pass

def run(q):
    num_tokens, num_heads, head_dim = q.shape
    rope_heads[(num_tokens, num_heads)](q, D=head_dim)
"""),
    "ASC105 rows": ("ASC105", """
@triton.jit
def rms_row(x_ptr, w_ptr, n_cols, BLOCK: tl.constexpr):
    pass

def rms(x, w):
    n_rows, n_cols = x.shape
    rms_row[(n_rows,)](x, w, n_cols, BLOCK=triton.next_power_of_2(n_cols))
"""),
    "ASC105 rows by vocab tiles": ("ASC105", """
@triton.jit
def ce_fwd(logits_ptr, V, BV: tl.constexpr):
    pass

def ce(logits):
    N, V = logits.shape
    BV = 4096
    ce_fwd[(N, triton.cdiv(V, BV))](logits, V, BV=BV)
"""),
    "ASC105 token tiles by batch heads": ("ASC105", """
@triton.jit
def chunk_fwd(q_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    pass

def run(q, BT=64):
    B, T, H, K = q.shape
    chunk_fwd[[triton.cdiv(T, BT), B * H]](q, T, H=H, BT=BT)
"""),
    # a boundary_check that leaves out the ragged axis of a head-first block
    "ASC303 partial boundary_check": ("ASC303", """
@triton.jit
def store_o(o, T, H: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_o = tl.make_block_ptr(o, (H, T), (T, 1), (0, i_t * BT), (H, BT), (1, 0))
    tl.store(p_o, tl.zeros([H, BT], dtype=tl.float32), boundary_check=(0,))

def run(o):
    H, T = o.shape
    store_o[(triton.cdiv(T, 64),)](o, T, H=H, BT=64)
"""),
}

QUIET = {
    # issue 29: a literal 16 is not a runtime extent
    "ASC202 signal slot times a literal": ("ASC202", """
@triton.jit
def notify(sig_ptr, n_slots):
    pid = tl.program_id(0)
    for signal_slot in range(pid, n_slots, tl.num_programs(0)):
        tl.store(sig_ptr + signal_slot * 16, 1)
"""),
    # a row loop over a weight-sized tensor: bounded by the weight
    "ASC202 row of a small per-head tensor": ("ASC202", """
@triton.jit
def head_scale(w_ptr, out_ptr, stride_w, n_heads, D: tl.constexpr):
    h = tl.program_id(0)
    d = tl.arange(0, D)
    tl.store(out_ptr + h * stride_w + d, tl.load(w_ptr + h * stride_w + d))

def run(w, out):
    head_scale[(w.shape[0],)](w, out, w.stride(0), w.shape[0], D=w.shape[1])
"""),
    # a decode batch times heads stays small by nature
    "ASC105 batch by heads": ("ASC105", """
@triton.jit
def decode(q_ptr, D: tl.constexpr):
    pass

def run(q, block_tables):
    batch = block_tables.shape[0]
    num_heads = q.shape[1]
    decode[(batch, num_heads)](q, D=128)
"""),
    # a cap written as min() bounds the token axis
    "ASC105 capped rows": ("ASC105", """
@triton.jit
def rms_row(x_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pass

def rms(x, cores):
    n_rows, n_cols = x.shape
    rms_row[(min(n_rows, 65535),)](x, n_rows, n_cols, BLOCK=1024)
"""),
    # a host guard before the launch bounds the rows
    "ASC105 guarded rows": ("ASC105", """
@triton.jit
def rms_row(x_ptr, n_cols, BLOCK: tl.constexpr):
    pass

def rms(x):
    n_rows, n_cols = x.shape
    assert n_rows <= 4096
    rms_row[(n_rows,)](x, n_cols, BLOCK=1024)
"""),
    # the host grows the block until the grid fits
    "ASC105 block grown until the grid fits": ("ASC105", """
@triton.jit
def rows_kernel(x_ptr, n_rows, BLOCK_M: tl.constexpr):
    pass

def run(x):
    n_rows = x.shape[0]
    block_m = 16
    while triton.cdiv(n_rows, block_m) > 65535:
        block_m *= 2
    rows_kernel[(triton.cdiv(n_rows, block_m),)](x, n_rows, BLOCK_M=block_m)
"""),
    # a boundary_check on every axis that can overshoot
    "ASC303 ragged axis checked": ("ASC303", """
@triton.jit
def store_o(o, T, H: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    p_o = tl.make_block_ptr(o, (H, T), (T, 1), (0, i_t * BT), (H, BT), (1, 0))
    tl.store(p_o, tl.zeros([H, BT], dtype=tl.float32), boundary_check=(1,))
"""),
}


@pytest.mark.parametrize("name", sorted(MISSED))
def test_a_real_miss_is_reported(name):
    code, source = MISSED[name]
    found = [d for d in lint(HEADER + source, code) if d.code == code]
    assert found, f"{name}: not reported"


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_bounded_case_stays_quiet(name):
    code, source = QUIET[name]
    found = [d for d in lint(HEADER + source, code) if d.code == code]
    assert found == [], [f"{d.location}: {d.message}" for d in found]


def test_a_block_grown_until_the_grid_fits_caps_a_token_grid():
    source = QUIET["ASC105 block grown until the grid fits"][1].replace(
        "[(triton.cdiv(n_rows, block_m),)]", "[(triton.cdiv(n_rows, block_m), x.shape[1])]")
    assert [d.code for d in lint(HEADER + source, "ASC105")] == []
    unguarded = source.replace("    while triton.cdiv(n_rows, block_m) > 65535:\n        block_m *= 2\n", "")
    assert [d.code for d in lint(HEADER + unguarded, "ASC105")] == ["ASC105"]
