"""Int32 offset overflow decided by the host code: real misses of ASC202 (minimal kernels of our own, each with the
host launch that shows the tensor large) and the bounded shapes it and ASC203 leave alone."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = "import triton\nimport triton.language as tl\n\n"

# A row loop over [B, V] logits whose row base is computed once per row, above the vocab tile loop.
LOGITS_ROW_BASE = """
@triton.jit
def argmax_prob(logits_ptr, out_ptr, B, V, stride_b, BLOCK_V: tl.constexpr):
    pid = tl.program_id(0)
    for row in tl.range(pid, B, tl.num_programs(0)):
        base = row * stride_b
        best = tl.full((), float("-inf"), tl.float32)
        for start in range(0, V, BLOCK_V):
            offs = start + tl.arange(0, BLOCK_V)
            x = tl.load(logits_ptr + base + offs, mask=offs < V, other=float("-inf"))
            best = tl.maximum(best, tl.max(x, axis=0))
        tl.store(out_ptr + row, best)

def run(logits, cores):
    B, V = logits.shape
    out = torch.empty(B, device=logits.device)
    argmax_prob[(min(cores, B),)](logits, out, B, V, logits.stride(0), BLOCK_V=8192)
"""

# A recurrent state the host allocates as [N, HV, K, V]: one program per (sequence, head) times K * V.
STATE_PER_HEAD = """
@triton.jit
def recurrent_fwd(k, ht, T, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BK: tl.constexpr,
                  BV: tl.constexpr):
    i_k, i_v, i_nh = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    o_k = i_k * BK + tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    b_h = tl.zeros([BK, BV], dtype=tl.float32)
    p_ht = ht + i_nh * K * V + o_k[:, None] * V + o_v[None, :]
    tl.store(p_ht, b_h)

def run(k, v):
    B, T, H, K, V = *k.shape, v.shape[-1]
    HV = v.shape[2]
    final_state = k.new_empty(B, HV, K, V, dtype=torch.float32)
    recurrent_fwd[(1, 1, B * HV)](k, final_state, T, HV=HV, K=K, V=V, BK=64, BV=64)
    return final_state
"""

# A varlen start loaded as it is (int32 in practice) on one path and widened on the other.
VARLEN_START = """
@triton.jit
def kkt_fwd(k, A, cu_seqlens, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_b, i_h = tl.program_id(0), tl.program_id(1)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_b)
    else:
        bos = i_b.to(tl.int64) * T
    o_t = tl.arange(0, BT)
    b_k = tl.load(k + (bos * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :])
    tl.store(A + o_t, tl.sum(b_k, 1))

def run(k, cu_seqlens=None):
    B, T, H, K = k.shape
    A = torch.empty(B, T, device=k.device)
    kkt_fwd[(B, H)](k, A, cu_seqlens, T, H=H, K=K, BT=64, IS_VARLEN=cu_seqlens is not None)
"""

# The dispatch shape of a real MoE kernel: a signal slot built from a loaded segment and a tile loop, times 16.
SIGNAL_SLOT = """
@triton.jit
def push_runs(input_ptr, sig_ptr, run_seg_ptr, run_count_ptr, num_runs, epoch, hidden, stride_input_m,
              LOCAL_RANK: tl.constexpr, SEG: tl.constexpr, MAX_SOURCE_TILES: tl.constexpr, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    for run in range(pid, num_runs, tl.num_programs(0)):
        seg = tl.load(run_seg_ptr + run)
        cnt = tl.load(run_count_ptr + run)
        for t in range(0, tl.cdiv(cnt, BLOCK_M)):
            signal_slot = (LOCAL_RANK * SEG + seg) * MAX_SOURCE_TILES + t
            tl.atomic_xchg(sig_ptr + signal_slot * 16, epoch)

def launch(hidden_states, signal_mem, run_seg, run_count, epoch, cores, rank, segments, max_tiles):
    push_runs[(cores,)](hidden_states, signal_mem, run_seg, run_count, run_seg.numel(), epoch,
                        hidden_states.shape[1], hidden_states.stride(0), LOCAL_RANK=rank, SEG=segments,
                        MAX_SOURCE_TILES=max_tiles, BLOCK_M=16)
"""

# A reference copy of a varlen kernel in a pytest module, run by its tests over small literal shapes.
TEST_MODULE = """
import pytest
import torch


@triton.jit
def ref_chunk_fwd(q, o, cu_seqlens, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
    o_t = tl.arange(0, BT)
    b_q = tl.load(q + (bos * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :])
    tl.store(o + (bos * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :], b_q)


def ref_chunk(q, cu_seqlens):
    B, T, H, K = q.shape
    o = torch.empty_like(q)
    ref_chunk_fwd[(len(cu_seqlens) - 1, H)](q, o, cu_seqlens, H=H, K=K, BT=64)
    return o


@pytest.mark.parametrize(
    ("B", "T", "H", "D", "cu_seqlens"),
    [
        pytest.param(*case, id=str(case))
        for case in [
            (1, 1024, 32, 128, [0, 300, 1024]),
            (1, 2048, 32, 128, [0, 1000, 2048]),
        ]
    ],
)
def test_ref_chunk(B, T, H, D, cu_seqlens):
    K = D
    q = torch.randn(B, T, H, K, dtype=torch.bfloat16)
    ref_chunk(q, torch.tensor(cu_seqlens))
"""


def _found(source: str, code: str):
    return [d for d in lint(HEADER + source, code) if d.code == code]


def test_a_row_base_computed_above_the_tile_loop_is_reported_from_its_product():
    found = _found(LOGITS_ROW_BASE, "ASC202")
    assert len(found) == 1, [f"{d.location}: {d.message}" for d in found]
    lines = (HEADER + LOGITS_ROW_BASE).splitlines()
    product = next(i for i, line in enumerate(lines, 1) if "base = row * stride_b" in line)
    pointer = next(i for i, line in enumerate(lines, 1) if "logits_ptr + base + offs" in line)
    assert (found[0].location.row, found[0].end_location.row) == (product, pointer)
    assert found[0].noqa_row == product


def test_a_noqa_on_the_product_line_suppresses_it():
    source = LOGITS_ROW_BASE.replace("base = row * stride_b", "base = row * stride_b  # noqa: ASC202")
    assert _found(source, "ASC202") == []


def test_a_state_allocated_per_sequence_and_head_is_reported():
    found = _found(STATE_PER_HEAD, "ASC202")
    assert [d.message.split("`")[1] for d in found] == ["i_nh * K * V"]


def test_a_state_the_host_does_not_allocate_stays_small():
    source = STATE_PER_HEAD.replace("final_state = k.new_empty(B, HV, K, V, dtype=torch.float32)",
                                    "final_state = initial_state")
    assert _found(source, "ASC202") == []


def test_a_state_vector_per_sequence_and_head_stays_small():
    source = STATE_PER_HEAD.replace("k.new_empty(B, HV, K, V, dtype=torch.float32)",
                                    "k.new_empty(B, HV, K * V, dtype=torch.float32)")
    assert _found(source, "ASC202") == []


def test_a_start_widened_on_one_path_only_is_reported():
    found = _found(VARLEN_START, "ASC202")
    assert [d.message.split("`")[1] for d in found] == ["(bos * H + i_h) * K"]


def test_a_start_widened_on_every_path_is_not():
    source = VARLEN_START.replace("bos = tl.load(cu_seqlens + i_b)", "bos = tl.load(cu_seqlens + i_b).to(tl.int64)")
    assert _found(source, "ASC202") == []


@pytest.mark.parametrize("code", ["ASC202", "ASC207"])
def test_a_signal_slot_times_a_literal_is_not_an_extent(code):
    assert _found(SIGNAL_SLOT, code) == [], code


@pytest.mark.parametrize("code", ["ASC202", "ASC203"])
def test_a_reference_kernel_of_a_test_module_over_small_shapes_is_quiet(code):
    assert _found(TEST_MODULE, code) == []


@pytest.mark.parametrize("code", ["ASC202", "ASC203"])
def test_a_test_module_allocating_past_2_31_elements_is_not_bounded(code):
    source = TEST_MODULE.replace("(1, 2048, 32, 128, [0, 1000, 2048])", "(1, 2 ** 20, 64, 128, [0, 2 ** 20])")
    large = source.replace("2 ** 20", str(2**20))
    assert [d.code for d in _found(large, code)] == [code]


def test_a_kernel_module_with_its_own_self_test_is_not_bounded_by_it():
    source = TEST_MODULE.replace("import pytest\n", "")
    source = source.replace("@pytest.mark.parametrize(", "@parametrize(")
    assert [d.code for d in _found(source, "ASC203")] == ["ASC203"]


def test_asc203_leaves_a_vector_of_gathered_row_ids_alone():
    source = """
@triton.jit
def sample(d_ptr, row_ptr, col_ptr, val_ptr, N, MN, nnz, BLOCK: tl.constexpr):
    chunk = tl.program_id(0)
    b = tl.program_id(1).to(tl.int64)
    offs = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < nnz
    r = tl.load(row_ptr + b * nnz + offs, mask=mask, other=0).to(tl.int32)
    c = tl.load(col_ptr + b * nnz + offs, mask=mask, other=0).to(tl.int32)
    tl.store(val_ptr + b * nnz + offs, tl.load(d_ptr + b * MN + r * N + c, mask=mask), mask=mask)
"""
    assert _found(source, "ASC203") == []
    scalar = source.replace("b * nnz + offs, mask=mask, other=0).to(tl.int32)\n    c", "b).to(tl.int32)\n    c")
    assert [d.code for d in _found(scalar, "ASC203")] == ["ASC203"]


def test_rows_of_a_loop_without_host_evidence_are_the_sweeps():
    source = """
@triton.jit
def clear_rows(x_ptr, T, stride_t, BT: tl.constexpr, D: tl.constexpr):
    for i_t in range(tl.cdiv(T, BT)):
        rows = i_t * BT + tl.arange(0, BT)
        tl.store(x_ptr + rows[:, None] * stride_t + tl.arange(0, D)[None, :], tl.zeros([BT, D], dtype=tl.float32))

def run(x, row_stride):
    clear_rows[(1,)](x, x.shape[0], row_stride, BT=64, D=128)
"""
    assert _found(source, "ASC202") == []
    assert [d.code for d in _found(source, "ASC207")] == ["ASC207"]
    shown = source.replace("x.shape[0], row_stride", "x.shape[0], x.stride(0)")
    assert [d.code for d in _found(shown, "ASC202")] == ["ASC202"]
    assert _found(shown, "ASC207") == []


def test_the_unproven_rows_option_reports_rows_without_host_evidence():
    source = """
@triton.jit
def chunk_states(h, NT, K: tl.constexpr, V: tl.constexpr):
    for i_t in range(NT):
        tl.store(h + i_t * K * V + tl.arange(0, V), tl.zeros([V], dtype=tl.float32))

def run(k, v, h, NT):
    B, T, H, K = k.shape
    chunk_states[(1,)](h, NT, K=K, V=v.shape[-1])
"""
    assert _found(source, "ASC202") == []
    asked = lint(HEADER + source, "ASC202", options={"ASC202": {"report-unproven-rows": True}})
    assert [d.code for d in asked] == ["ASC202"]
