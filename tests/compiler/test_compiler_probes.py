"""Facts about BiShengIR the rules rest on, probed on the real compiler (skipped without the `compiler` extra)."""

import time

import pytest

from ascendlint.compiler import service
from ascendlint.compiler import verdict as v
from tests.compiler.support import by_label, compile_outcomes

LOOP = '''
import triton
import triton.language as tl

@triton.jit
def acc_loop(x, out, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(0, n, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n) * 2
    tl.store(out + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), acc)

def run(x, out, n):
    acc_loop[(1,)](x, out, n, BLOCK={block}{options})
'''

FLAT = '''
import triton
import triton.language as tl

@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + offs, mask=offs < n{hint})
    b = tl.load(y + offs, mask=offs < n)
    tl.store(out + offs, a + b, mask=offs < n)

def run(x, y, out, n):
    add[(4,)](x, y, out, n, BLOCK={block}{options})
'''


def _one(source: str, **kwargs):
    (outcome,) = compile_outcomes(source, pointer_dtype="fp32", **kwargs)
    return outcome.verdict


def test_multibuffering_multiplies_a_loops_tiles():
    on = _one(LOOP.format(block=8192, options=""))  # triton-ascend's default: multibuffer=True
    off = _one(LOOP.format(block=8192, options=", multibuffer=False"))
    assert on.status == off.status == v.FITS
    assert on.scope("ub").peak_bits >= 1.4 * off.scope("ub").peak_bits


def test_a_loop_free_kernel_uses_the_same_buffer_either_way():
    on = _one(FLAT.format(block=4096, options="", hint=""))
    off = _one(FLAT.format(block=4096, options=", multibuffer=False", hint=""))
    assert on.scope("ub").peak_bits == off.scope("ub").peak_bits


def test_an_overflow_only_multibuffering_causes_is_the_first_attempts_and_the_retry_is_noted():
    found = _one(LOOP.format(block=24576, options=""))
    assert found.status == v.OVERFLOW and found.fits_after_retry is True
    assert found.overflow.available_bits == 1572864 and found.overflow.required_bits > 1572864
    assert _one(LOOP.format(block=24576, options=", multibuffer=False")).status == v.FITS


def test_ub_capacity_is_192_kb_on_a2_a3():
    found = _one(FLAT.format(block=65536, options="", hint=""))
    assert found.status == v.OVERFLOW and found.overflow.label == "UB"
    assert found.overflow.available_bits == 192 * 1024 * 8


@pytest.mark.parametrize("hint", [', eviction_policy="evict_last"', ', cache_modifier=".cg"'])
def test_cuda_cache_hints_are_dropped_silently(hint):
    """ASC106's claim: the hint compiles and changes nothing the compiler plans."""
    plain = _one(FLAT.format(block=2048, options="", hint=""))
    hinted = _one(FLAT.format(block=2048, options="", hint=hint))
    assert hinted.status == v.FITS
    assert hinted.scope("ub").peak_bits == plain.scope("ub").peak_bits


def test_a_dot_accumulator_lives_in_l0c_not_in_the_unified_buffer():
    source = '''
import triton
import triton.language as tl

@triton.jit
def mm(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, 4):
        x = tl.load(a + rm[:, None] * BK + rk[None, :])
        y = tl.load(b + rk[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)

def run(a, b, c):
    mm[(1,)](a, b, c, BM=128, BN=128, BK=64)
'''
    (outcome,) = compile_outcomes(source, pointer_dtype="fp16")
    found = outcome.verdict
    assert found.status == v.FITS
    cc = found.scope("cc")
    assert cc is not None and cc.peak_bits >= 128 * 128 * 32  # the fp32 accumulator, in L0C


OVERFLOW_MODE = '''
import triton
import triton.language as tl

@triton.jit
def narrow(x, out, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(out + offs, {cast})

def run(x, out):
    narrow[(1,)](x, out, BLOCK=256)
'''


def test_overflow_mode_is_rejected_on_a_tensors_to_and_accepted_by_tl_cast():
    """ASC108's claim, at the frontend: `.to(..., overflow_mode=)` fails, `tl.cast(..., overflow_mode=)` compiles."""
    method = _one(OVERFLOW_MODE.format(cast='v.to(tl.int8, overflow_mode="saturate")'))
    function = _one(OVERFLOW_MODE.format(cast='tl.cast(v, tl.int8, overflow_mode="saturate")'))
    assert method.status == v.ERROR and "overflow_mode" in method.message
    assert function.status == v.FITS


def test_a_runtime_sized_tile_is_reported_from_the_smallest_size_that_overflows():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, out, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

def run(x, out, n):
    k[(1,)](x, out, n, BLOCK=triton.next_power_of_2(n))
'''
    (outcome,) = compile_outcomes(source, pointer_dtype="fp32")
    assert outcome.verdict.status == v.OVERFLOW
    at, below = outcome.overflow_from, outcome.overflow_from // 2
    assert 16 < at <= 65536
    found = compile_outcomes(source.replace("BLOCK=triton.next_power_of_2(n)", f"BLOCK={below}"),
                             pointer_dtype="fp32")
    assert found[0].verdict.status == v.FITS


def test_a_warm_cache_answers_without_starting_a_worker(monkeypatch):
    source = FLAT.format(block=1024, options="", hint="")
    cold = compile_outcomes(source)
    service._memory.clear()
    monkeypatch.setattr(service.subprocess, "Popen", lambda *a, **k: pytest.fail("a worker was started"))
    started = time.monotonic()
    warm = compile_outcomes(source)
    assert [o.verdict for o in warm] == [o.verdict for o in cold]
    assert time.monotonic() - started < 1.0


def test_each_autotune_config_gets_its_own_verdict():
    source = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 4096}), triton.Config({"BLOCK": 65536})], key=["n"])
@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n), mask=offs < n)
'''
    found = by_label(compile_outcomes(source))
    assert found["config 1"].verdict.status == v.FITS
    assert found["config 2"].verdict.status == v.OVERFLOW


def test_a5_compiles_with_its_own_binary_and_a_larger_unified_buffer():
    """A5 (``bishengir-compile-a5``): 248 KB of UB (2031616 bits) against A2/A3's 192 KB."""
    source = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 32768}), triton.Config({"BLOCK": 65536})], key=["n"])
@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n), mask=offs < n)
'''
    a5 = by_label(compile_outcomes(source, target="Ascend950PR_9589"))
    assert a5["config 1"].verdict.status == v.FITS
    assert a5["config 2"].verdict.status == v.OVERFLOW
    assert a5["config 2"].verdict.overflow.available_bits == 2031616
    a2 = by_label(compile_outcomes(source))
    assert a2["config 2"].verdict.overflow.available_bits == 1572864
