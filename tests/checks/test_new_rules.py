"""Non-triggers RULES.md lists for ASC106-ASC109, ASC205, ASC206, ASC415 and ASC416, their options, and a few
cases of our own beyond the rules' examples."""

from __future__ import annotations

import pytest

from tests.helpers import fix, lint


def _found(code: str, text: str, options=None) -> list:
    return [d for d in lint(text, code, options=options) if d.code == code]


# -- ASC107: do not trigger on model dimensions, block sizes, flags, small fixed sets, bucketed sizes ------------
ASC107_HOST = """
import triton
import triton.language as tl

@triton.jit
def kernel(q, o, T, {param}: tl.constexpr):
    pass

def run(q, o, flag, cu_seqlens):
    B, T, H, K = q.shape
    hidden = q.shape[-1]
    num_tokens = q.shape[0] * q.shape[1]
    {setup}
    kernel[(B * H,)](q, o, T, {value})
"""

ASC107_SILENT = [
    ("K", "pass", "K"),  # a head dim
    ("HIDDEN", "pass", "hidden"),  # a hidden size, the last dimension
    ("H", "pass", "H"),  # heads
    ("BLOCK_T", "BLOCK_T = 64", "BLOCK_T"),  # a block size
    ("IS_VARLEN", "pass", "cu_seqlens is not None"),  # a flag
    ("CHUNK", "CHUNK = 64 if T > 4096 else 32", "CHUNK"),  # a value from a small fixed set
    ("BT", "pass", "triton.next_power_of_2(T)"),  # a bucketed size
    ("SIZE", "SIZE = triton.next_power_of_2(min(T, 256))", "SIZE"),  # bucketed and capped
    ("CAP", "pass", "min(T, 128)"),  # capped
]


@pytest.mark.parametrize(("param", "setup", "value"), ASC107_SILENT, ids=[p for p, _, _ in ASC107_SILENT])
def test_asc107_is_silent_on_sizes_fixed_per_model_or_configuration(param, setup, value):
    text = ASC107_HOST.format(param=param, setup=setup, value=value)
    assert _found("ASC107", text) == []


@pytest.mark.parametrize(("param", "value"), [
    ("T_LEN", "T"),  # a sequence length
    ("N_TOK", "num_tokens"),  # a token count
    ("NT", "triton.cdiv(T, 64)"),  # a count of chunks of the sequence
    ("ROWS", "q.shape[0]"),  # the first dimension of an activation
    ("TASKS", "triton.cdiv(T, 64) * B * H"),  # tasks computed from shapes
])
def test_asc107_reports_data_dependent_sizes(param, value):
    text = ASC107_HOST.format(param=param, setup="pass", value=value)
    assert len(_found("ASC107", text)) == 1


def test_asc107_is_opt_in():
    from ascendlint.catalog.registry import rule_by_code_or_name

    assert rule_by_code_or_name("ASC107").default is False


def test_asc107_leaves_do_not_specialize_alone():
    text = """
import triton
import triton.language as tl

@triton.jit(do_not_specialize=["T"])
def kernel(x, T: tl.constexpr):
    pass

def run(x):
    kernel[(1,)](x, x.shape[0])
"""
    assert _found("ASC107", text) == []


# -- ASC108: the overflow_mode option ------------------------------------------------------------------------------
QUANT = """
import triton
import triton.language as tl

@triton.jit
def quantise(x_ptr, q_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(q_ptr + offs, tl.cast(x, tl.int8, overflow_mode="saturate") + x.cast(tl.int8, overflow_mode="trunc"))
"""


def test_asc108_leaves_cast_overflow_mode_alone_by_default():
    assert _found("ASC108", QUANT) == []


def test_asc108_reports_cast_overflow_mode_as_a_warning_when_asked():
    found = _found("ASC108", QUANT, {"ASC108": {"report-cast-overflow-mode": True}})
    assert [d.severity.value for d in found] == ["warning", "warning"]
    assert all("byted-triton-x 3.2.0.post24" in d.message for d in found)


def test_asc108_offers_no_fix_without_a_module_alias_for_triton_language():
    text = """
import triton
from triton.language import float32, load, store, arange, constexpr, maximum

@triton.jit
def k(x_ptr, BLOCK: constexpr):
    offs = arange(0, BLOCK)
    store(x_ptr + offs, maximum(load(x_ptr + offs), float32(0.0)))
"""
    (finding,) = _found("ASC108", text)
    assert finding.fix is None and finding.severity.value == "error"


def test_asc108_ignores_dtype_calls_in_host_code():
    text = """
import numpy as np
import triton.language as tl

def host(x):
    return tl.float32(x)
"""
    assert _found("ASC108", text) == []


# -- ASC109: the version option ----------------------------------------------------------------------------------
CONFIGS = """
import triton

configs = [
    triton.Config({"BLOCK": 64}, multibuffer=True, unit_flag=False),
    triton.Config({"BLOCK": 64}, enable_ubuf_saving=True),
    triton.Config({"BLOCK": 64}, {"multibuffer": True}),
]
"""


def test_asc109_reports_all_three_placements_for_newer_versions():
    found = _found("ASC109", CONFIGS)
    assert [d.location.row for d in found] == [5, 6, 7]
    assert "`multibuffer`, `unit_flag`" in found[0].message


def test_asc109_takes_config_keywords_as_honoured_on_3_2():
    found = _found("ASC109", CONFIGS, {"ASC109": {"triton-ascend-version": "3.2.0"}})
    assert [d.location.row for d in found] == [6, 7]


def test_asc109_leaves_other_calls_named_config_alone():
    text = """
from dataclasses import dataclass

@dataclass
class Config:
    multibuffer: bool = True

cfg = Config(multibuffer=False)
"""
    assert _found("ASC109", text) == []


# -- ASC205: pointers are ASC204's; loops that are not task loops --------------------------------------------------
def test_asc205_leaves_pointer_parameters_to_asc204():
    text = """
import triton
import triton.language as tl

@triton.jit
def kernel(q, o, n_tasks, n_cores, BT: tl.constexpr):
    for task in range(tl.program_id(0), n_tasks, n_cores):
        q += BT
        tl.store(o + task * BT + tl.arange(0, BT), tl.load(q + tl.arange(0, BT)))
"""
    assert _found("ASC205", text) == []
    assert len(_found("ASC204", text)) == 1


def test_asc205_reports_once_per_binding_in_nested_task_loops():
    text = """
import triton
import triton.language as tl

@triton.jit
def kernel(x, T, n_tasks, n_cores, BT: tl.constexpr):
    pid = tl.program_id(0)
    for outer in range(pid, n_tasks, n_cores):
        for inner in range(pid, n_tasks, n_cores):
            T = T - 1
        tl.store(x + outer * BT + tl.arange(0, BT), tl.zeros([BT], dtype=tl.float32), mask=tl.arange(0, BT) < T)
"""
    assert len(_found("ASC205", text)) == 1


# -- ASC206: the catalog's fix is silent ---------------------------------------------------------------------------
def test_asc206_is_silent_on_the_volatile_poll_with_threaded_addresses():
    text = """
import triton
import triton.language as tl

@triton.jit
def consumer(flag_ptr, data, out, BLOCK: tl.constexpr):
    seen = tl.load(flag_ptr, volatile=True)
    while seen == 0:
        seen = tl.load(flag_ptr, volatile=True)
    tl.atomic_add(flag_ptr, 0, sem="acquire")
    offs = tl.arange(0, BLOCK) + (seen - seen)
    tl.store(out + offs, tl.load(data + offs))
"""
    assert _found("ASC206", text) == []


def test_asc206_reports_a_spin_once_even_with_both_problems():
    text = """
import triton
import triton.language as tl

@triton.jit
def consumer(ctr, data, out, n, BLOCK: tl.constexpr):
    while tl.atomic_cas(ctr, n, n) != n:
        pass
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(data + offs))
"""
    (finding,) = _found("ASC206", text)
    assert "atomic_cas" in finding.message and "line 10" in finding.message


# -- ASC415 ---------------------------------------------------------------------------------------------------------
def test_asc415_accepts_every_acquiring_semantic_at_gpu_and_sys_scope():
    text = """
import triton
import triton.language as tl
import triton_dist.language as dl

@triton.jit
def consumer(buf, sig, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for scope in ("gpu", "sys"):
        pass
    t1 = dl.wait(sig, 1, "gpu", "acquire")
    tl.store(out + offs, tl.load(dl.consume_token(buf, t1) + offs))
    t2 = dl.wait(sig, 1, "sys", "acq_rel")
    tl.store(out + offs, tl.load(dl.consume_token(buf, t2) + offs))
    t3 = dl.wait(sig, 1, scope="gpu", semantic="acquire", waitValue=2)
    tl.store(out + offs, tl.load(dl.consume_token(buf, t3) + offs))
"""
    assert _found("ASC415", text) == []


def test_asc415_reports_a_misspelt_semantic_even_without_reads():
    text = """
import triton
import triton_dist.language as dl

@triton.jit
def waiter(sig):
    dl.wait(sig, 1, "gpu", "aquire")
"""
    (finding,) = _found("ASC415", text)
    assert "'aquire'" in finding.message


# -- ASC416 ---------------------------------------------------------------------------------------------------------
def test_asc416_ignores_kernels_that_do_not_split_over_sub_blocks():
    text = """
import triton
import triton.language as tl
import triton_dist.language as dl

@triton.jit
def publish(dst, sig, peer, BLOCK: tl.constexpr):
    tl.store(dst + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float32))
    dl.notify(sig, peer, signal=1, sig_op="add", comm_scope="intra_node")
"""
    assert _found("ASC416", text) == []


def test_asc416_accepts_an_else_branch_that_one_sub_block_takes():
    text = """
import triton
import triton.language as tl
import triton_dist.language as dl
from triton.language.extra.cann.extension import sub_vec_id

@triton.jit
def publish(dst, sig, peer, BLOCK: tl.constexpr):
    if sub_vec_id() != 0:
        pass
    else:
        dl.notify(sig, peer, signal=1, sig_op="add", comm_scope="intra_node")
    sid = sub_vec_id()
    if not sid:
        tl.store(dst + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float32))
"""
    assert _found("ASC416", text) == []


def test_asc416_leaves_writes_of_a_cube_scope_alone():
    text = """
import triton
import triton.language as tl
import triton.language.extra.cann.extension as al
from triton.language.extra.cann.extension import sub_vec_id
from triton_dist.language.extra import libshmem_device

@triton.jit
def stage_then_flag(src, dst, flag, rank, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    with al.scope(core_mode="vector"):
        if sub_vec_id() == 0:
            offs = tl.arange(0, BLOCK)
            tl.store(dst + offs, tl.load(src + offs))
    with al.scope(core_mode="cube"):
        libshmem_device.fence()
        libshmem_device.signal_op(flag + pid * 16, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
"""
    assert _found("ASC416", text) == []
    vector = text.replace('with al.scope(core_mode="cube"):', 'with al.scope(core_mode="vector"):')
    assert [f.location.row for f in _found("ASC416", vector)] == [
        i for i, row in enumerate(vector.splitlines(), start=1) if "signal_op(" in row]


def test_asc416_accepts_a_store_whose_mask_splits_the_rows_between_sub_blocks():
    text = """
import triton
import triton.language as tl
from triton.language.extra.cann.extension import sub_vec_id

@triton.jit
def scatter(keys, rows_out, n, HALF: tl.constexpr, BLOCK: tl.constexpr):
    first = sub_vec_id() * HALF
    offs = tl.arange(0, BLOCK)
    key = tl.load(keys + offs, mask=offs < n, other=-1)
    mine = (offs < n) & (key >= first) & (key < first + HALF)
    tl.store(rows_out + offs, key, mask=mine)
"""
    assert _found("ASC416", text) == []
    shared = text.replace("mask=mine)", "mask=offs < n)")
    assert [f.location.row for f in _found("ASC416", shared)] == [
        i for i, row in enumerate(shared.splitlines(), start=1) if "tl.store(rows_out" in row]


# -- fixes -----------------------------------------------------------------------------------------------------------
def test_asc106_fix_is_safe_and_removes_both_hints():
    text = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, cache_modifier=".cg", eviction_policy="evict_last"))
"""
    outcome = fix(text, "ASC106", unsafe=False)
    assert "cache_modifier" not in outcome.text and "eviction_policy" not in outcome.text
    assert "tl.load(x_ptr + offs)" in outcome.text
