"""Minimal kernels for the classes of mistakes found by reading the rules' findings on real kernels: each false
positive class must stay quiet, each missed trap must be reported. (Written for these tests; the real files are
only where the classes were seen.)"""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = "import triton\nimport triton.language as tl\n\n"

QUIET = {
    # ASC102: the compiler turns a plain-assigned value into a tensor, so `.to()` compiles.
    "ASC102 plain-assigned local": """
@triton.jit
def kernel(x, BT: tl.constexpr, NTS: tl.constexpr):
    base_idx = 0
    acc = 0.0
    for i_t in tl.static_range(0, 4):
        i_s = i_t // NTS
        tl.store(x + i_t, base_idx.to(tl.int64) + i_s.to(tl.int64) + acc.to(tl.int32))
""",
    # ASC102: a helper parameter that receives a tensor.
    "ASC102 helper parameter given a tensor": """
@triton.jit
def select(indices, v):
    return v + indices.to(tl.float32)

@triton.jit
def kernel(x, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, select(offs, tl.load(x + offs)))
""",
    # ASC102: a stride passed by the launch can be 1 only for a one-column tensor: not worth a warning.
    "ASC102 row stride at a launch": """
@triton.jit
def kernel(x, logits_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    tl.store(x + row * logits_row_stride.to(tl.int64) + tl.arange(0, BLOCK), 0.0)

def launch(logits):
    kernel[(logits.shape[0],)](logits, logits.stride(0), BLOCK=1024)
""",
    # ASC201: a tile id times its tile size, a chunk index times the head count, a head index times a head dim.
    "ASC201 bounded products": """
@triton.jit
def kernel(x, HV, K, V, D, BD: tl.constexpr):
    i_d, i_tg, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    o_d = (i_d * BD + tl.arange(0, BD)).to(tl.int64)
    state = (i_tg * HV + i_h).to(tl.int64) * K * V
    tl.store(x + state + (i_h * D).to(tl.int64) + o_d, 0.0, mask=o_d < D)
""",
    # ASC201: a sequence start is bounded by the tokens of a launch; the per-token size is outside the cast.
    "ASC201 token offset widened before the per-token size": """
@triton.jit
def kernel(x, T, H, K, BT: tl.constexpr):
    i_b, i_h = tl.program_id(0), tl.program_id(1)
    bos = (i_b * T).to(tl.int64)
    tl.store(x + (bos * H + i_h) * K + tl.arange(0, BT), 0.0)
""",
    # ASC202: offsets into integer tables (block tables, per-request vectors) hold few entries.
    "ASC202 block table and per-request vector": """
@triton.jit
def kernel(block_table, out, counts, stride_bt, stride_counts, BD: tl.constexpr):
    req_idx = tl.program_id(0)
    block = tl.load(block_table + req_idx * stride_bt).to(tl.int64)
    tl.store(counts + req_idx * stride_counts, tl.load(counts + req_idx * stride_counts) + 1)
    tl.store(out + block * BD + tl.arange(0, BD), 0.0)
""",
    # ASC202: one program per core.
    "ASC202 core-grid program id": """
@triton.jit
def kernel(dw, n_rows, stride_dw_row, BD: tl.constexpr):
    pid = tl.program_id(0)
    n_progs = tl.num_programs(0)
    for row in range(pid, n_rows, n_progs):
        tl.store(dw + pid * stride_dw_row + tl.arange(0, BD), 0.0)
""",
    # ASC202: a buffer id reduced by a small modulus.
    "ASC202 ring buffer index": """
@triton.jit
def kernel(buf, n, buffer_num, BM: tl.constexpr, BK: tl.constexpr):
    for i in range(0, n):
        buffer_id = i % buffer_num
        tl.store(buf + buffer_id * BM * BK + tl.arange(0, BK), 0.0)
""",
    # ASC202: a per-token statistic read one value per row.
    "ASC202 per-row statistic": """
@triton.jit
def kernel(x, rstd, stride_x, stride_rstd, n_rows, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    b = tl.load(x + rows[:, None] * BN + cols[None, :], mask=rows[:, None] < n_rows)
    tl.store(rstd + rows * stride_rstd, tl.sum(b, 1), mask=rows < n_rows)

def launch(x, rstd):
    n_rows = x.shape[0]
    kernel[(triton.cdiv(n_rows, 8),)](x, rstd, x.stride(0), rstd.stride(0), n_rows, BM=8, BN=128)
""",
    # ASC202: a contiguous last dimension, passed as x.stride(-1), is specialised to 1.
    "ASC202 stride of the last dimension": """
@triton.jit
def kernel(x, y, positions, stride_k, BD: tl.constexpr):
    t = tl.program_id(0)
    pos = tl.load(positions + t)
    tl.store(y + t * BD + tl.arange(0, BD), tl.load(x + pos * stride_k))

def launch(x, y, positions):
    kernel[(positions.shape[0],)](x, y, positions, x.stride(-1), BD=64)
""",
    # ASC203: a chunk index narrowed from chunk_indices is small.
    "ASC203 chunk index": """
@triton.jit
def kernel(x, chunk_indices, cu_seqlens, T, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
    i_c, i_h = tl.program_id(0), tl.program_id(1)
    i_n = tl.load(chunk_indices + i_c * 2).to(tl.int32)
    i_t = tl.load(chunk_indices + i_c * 2 + 1).to(tl.int32)
    bos = tl.load(cu_seqlens + i_n).to(tl.int64)
    o_t = i_t * BT + tl.arange(0, BT)
    tl.store(x + (bos + o_t) * H * D + i_h * D, 0.0, mask=o_t < T)
""",
    # ASC104: the host allocates the pointer before every launch.
    "ASC104 always allocated": """
import torch

@triton.heuristics({"STORE": lambda args: args["kg"] is not None})
@triton.jit
def kernel(k, kg, T, STORE: tl.constexpr, BT: tl.constexpr):
    offs = tl.program_id(0) * BT + tl.arange(0, BT)
    tl.store(kg + offs, tl.load(k + offs, mask=offs < T), mask=offs < T)

def launch(k):
    kg = torch.empty_like(k)
    kernel[(4,)](k, kg, k.shape[0], BT=16)
""",
}

REPORTED = {
    # ASC102: a batch the host sets to 1 on one side of a conditional expression (a real upstream fix).
    "ASC102 batch of one from a conditional expression": ("ASC102", """
@triton.jit
def mix_bwd(dk_ptr, batch_size, token_length, hidden_dim: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    valid = offs < batch_size.to(tl.int64) * token_length * hidden_dim
    tl.store(dk_ptr + offs, 0.0, mask=valid)

def backward(dk, x):
    batch_size = x.shape[0] if x.dim() == 3 else 1
    seq_len = x.shape[-2]
    mix_bwd[(triton.cdiv(dk.numel(), 1024),)](dk, batch_size, seq_len, x.shape[-1], BLOCK=1024)
"""),
    # ASC104: a guard by another constexpr switch does not remove the branch when the pointer has its own flag.
    "ASC104 unrelated flag": ("ASC104", """
@triton.heuristics({"USE_G": lambda args: args["g"] is not None})
@triton.jit
def kernel(x, g, cu_seqlens, T, USE_G: tl.constexpr, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
    offs = tl.arange(0, BT)
    b = tl.load(x + offs)
    if IS_VARLEN:
        b += tl.load(g + offs)
    tl.store(x + offs, b)

def launch(x, g=None, cu_seqlens=None):
    kernel[(1,)](x, g, cu_seqlens, x.shape[0], IS_VARLEN=cu_seqlens is not None, BT=16)
"""),
    # ASC202: a branch that reassigns the extent (T = eos - bos) must not hide it in the other branch.
    "ASC202 extent reassigned in one branch": ("ASC202", """
@triton.jit
def kernel(x, cu_seqlens, T, H, V, IS_VARLEN: tl.constexpr, BV: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
        T = (eos - bos).to(tl.int32)
    tl.store(x + (i_n * H + i_h) * T * V + tl.arange(0, BV), 0.0)
"""),
    # ASC202: a jit helper's product of a loaded token offset and a head size.
    "ASC202 loaded offset times a per-token size": ("ASC202", """
@triton.jit
def kernel(k_cache, out, slot_mapping, stride_k_cache, BD: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_mapping + token)
    tl.store(out + token * BD + tl.arange(0, BD), tl.load(k_cache + slot * stride_k_cache + tl.arange(0, BD)))
"""),
    # ASC201: a sum of products, each term wide enough to wrap.
    "ASC201 sum of products": ("ASC201", """
@triton.jit
def kernel(q, stride_z, stride_h, BLOCK: tl.constexpr):
    batch, q_head = tl.program_id(0), tl.program_id(1)
    offset = (stride_h * q_head + stride_z * batch).to(tl.int64)
    tl.store(q + offset + tl.arange(0, BLOCK), 0.0)
"""),
}


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_false_positive_class_stays_quiet(name):
    code = name.split()[0]
    found = [d for d in lint(HEADER + QUIET[name], code) if d.code == code]
    assert found == [], [f"{d.location}: {d.message}" for d in found]


def test_the_same_gather_with_a_row_stride_is_reported():
    source = QUIET["ASC202 stride of the last dimension"].replace("x.stride(-1)", "x.stride(0)")
    assert [d.code for d in lint(HEADER + source, "ASC202")] == ["ASC202"]


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_missed_trap_is_reported(name):
    code, source = REPORTED[name]
    assert [d.code for d in lint(HEADER + source, code) if d.code == code] == [code]
