"""The UB estimate follows BiShengIR where the two were probed side by side: each kernel here was compiled and
the compiler's planned UB peak is written beside it (KB, fp32 tiles). The model is checked against those figures
always; with the compiler installed, the figures themselves are checked against a fresh compile."""

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis import ub
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from ascendlint.compiler import missing, service
from ascendlint.compiler import verdict as v
from ascendlint.compiler.jobs import CompileJob

HEADER = "import triton\nimport triton.language as tl\n"

LOOP = """
@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    for s in range(0, n, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        a = tl.load(x + offs, mask=offs < n)
        tl.store(y + offs, a * 2, mask=offs < n)
"""
TWO_LOADS = """
@triton.jit
def k(x, z, y, n, BLOCK: tl.constexpr):
    for s in range(0, n, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        a = tl.load(x + offs, mask=offs < n)
        b = tl.load(z + offs, mask=offs < n)
        tl.store(y + offs, a + b, mask=offs < n)
"""
ACCUMULATE = """
@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, n, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        acc += tl.load(x + offs, mask=offs < n)
    tl.store(y + tl.arange(0, BLOCK), acc)
"""
LOOP_FREE = """
@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs, mask=offs < n)
    tl.store(y + offs, a * 2, mask=offs < n)
"""
UPCAST = """
@triton.jit
def k(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs, mask=offs < n).to(tl.float32)
    tl.store(y + offs, a * 2, mask=offs < n)
"""
STORE_2D = """
@triton.jit
def k(x, y, n, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    for c in range(0, n, BN):
        cols = c + tl.arange(0, BN)
        t = tl.load(x + rows[:, None] * n + cols[None, :])
        tl.store(y + rows[:, None] * n + cols[None, :], t * 2)
"""
DOT = """
@triton.jit
def k(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    acc = tl.zeros((M, N), dtype=tl.float32)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)
"""

CUMSUM = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    c = tl.cumsum(a, 0)
    tl.store(y + offs, c)
"""
SUM = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    s = tl.sum(a, 0)
    tl.store(y, s)
"""
MAX = SUM.replace("tl.sum", "tl.max")
ROW_SUMS = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs[:, None] * 64 + tl.arange(0, 64)[None, :])
    tl.store(y + offs, tl.sum(a, 1))
"""
SOFTMAX = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    e = tl.exp(a - tl.max(a, 0))
    p = e / tl.sum(e, 0)
    tl.store(y + offs, p)
"""
SELECT_NAMED_MASK = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    m = a > 0
    b = tl.where(m, a, 0.0)
    tl.store(y + offs, b)
"""
SELECT_TWO = """
@triton.jit
def k(x, z, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    c = tl.load(z + offs)
    b = tl.where(a > c, a, c)
    tl.store(y + offs, b)
"""
SCALED = """
@triton.jit
def k(x, y, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = a * scale
    tl.store(y + offs, b)
"""
EXP = """
@triton.jit
def k(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.exp(a)
    tl.store(y + offs, b)
"""
WIDENED_SIGMOID = """
@triton.jit
def k(a, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a_chunk = tl.load(a + offs)
    a_f32 = a_chunk.to(tl.float32)
    s = tl.sigmoid(a_f32)
    t = a_f32 * s
    tl.store(y + offs, t)
"""
SIGMOID = """
@triton.jit
def k(a, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a_chunk = tl.load(a + offs)
    s = tl.sigmoid(a_chunk)
    tl.store(y + offs, s)
"""
SCALED_ROWS = """
@triton.jit
def k(x, g, n, BM: tl.constexpr, BN: tl.constexpr):
    scale = tl.load(g)
    rows = tl.arange(0, BM)
    for c in range(0, n, BN):
        cols = c + tl.arange(0, BN)
        p = x + rows[:, None] * n + cols[None, :]
        t = tl.load(p)
        r = t * scale
        tl.store(p, r)
"""
SCALED_SUM = """
@triton.jit
def k(x, z, y, scale, n, BLOCK: tl.constexpr):
    for s in range(0, n, BLOCK):
        offs = s + tl.arange(0, BLOCK)
        a = tl.load(x + offs)
        c = tl.load(z + offs)
        b = a * scale + c
        tl.store(y + offs, b)
"""

# (source, pointer dtypes, constexprs, multibuffer, the compiler's UB peak in KB, its verdict)
PROBES = [
    (LOOP, "fp32 fp32", {"BLOCK": 4096}, False, 16, v.FITS),
    (LOOP, "fp32 fp32", {"BLOCK": 4096}, True, 64, v.FITS),  # the load twice, a pair for the stored tile
    (LOOP, "fp32 fp32", {"BLOCK": 16384}, True, 192, v.FITS),  # 256 does not fit: a store's copy given up
    (LOOP, "fp32 fp32", {"BLOCK": 32768}, True, 256, v.OVERFLOW),  # the load's two copies alone do not fit
    (TWO_LOADS, "fp32 fp32 fp32", {"BLOCK": 8192}, True, 192, v.FITS),
    (TWO_LOADS, "fp32 fp32 fp32", {"BLOCK": 16384}, True, 256, v.OVERFLOW),
    (TWO_LOADS, "fp32 fp32 fp32", {"BLOCK": 16384}, False, 128, v.FITS),
    (ACCUMULATE, "fp32 fp32", {"BLOCK": 8192}, False, 64, v.FITS),  # the unnamed load is a buffer too
    (ACCUMULATE, "fp32 fp32", {"BLOCK": 8192}, True, 96, v.FITS),  # the carried accumulator is not doubled
    (LOOP_FREE, "fp32 fp32", {"BLOCK": 16384}, True, 64, v.FITS),  # no loop: multi-buffering changes nothing
    (UPCAST, "bf16 fp32", {"BLOCK": 8192}, False, 48, v.FITS),  # the bf16 copy beside the fp32 one
    (STORE_2D, "fp32 fp32", {"BM": 8, "BN": 1024}, True, 64, v.FITS),  # a 2-D stored tile gets no pair of its own
    (STORE_2D, "fp32 fp32", {"BM": 1, "BN": 8192}, True, 128, v.FITS),  # one row: planned as a 1-D tile
    (CUMSUM, "fp32 fp32", {"BLOCK": 4096}, True, 32, v.FITS),  # the scan's result never takes its input's buffer
    (SUM, "fp32 fp32", {"BLOCK": 4096}, True, 24, v.FITS),  # a whole-tile sum works in a half-size scratch
    (SUM, "fp16 fp32", {"BLOCK": 4096}, True, 32, v.FITS),  # ... of the fp32 copy of a narrow tile
    (MAX, "fp32 fp32", {"BLOCK": 4096}, True, 16, v.FITS),  # max and min reduce in place
    (MAX, "fp16 fp32", {"BLOCK": 4096}, True, 24, v.FITS),  # but in an fp32 copy of a narrow tile
    (ROW_SUMS, "fp32 fp32", {"BLOCK": 64}, True, 16, v.FITS),  # a sum along an axis of a 2-D tile: no scratch
    (SOFTMAX, "fp32 fp32", {"BLOCK": 4096}, True, 24, v.FITS),
    (SELECT_NAMED_MASK, "fp32 fp32", {"BLOCK": 4096}, True, 48, v.FITS),  # the mask at the data's width, a new result
    (SELECT_TWO, "fp32 fp32 fp32", {"BLOCK": 4096}, True, 48, v.FITS),
    (SCALED, "fp16 fp16", {"BLOCK": 4096}, True, 24, v.FITS),  # an fp32 scalar argument widens; stored back narrow
    (EXP, "fp16 fp16", {"BLOCK": 4096}, True, 8, v.FITS),  # a math function keeps the tile's fp16
    (WIDENED_SIGMOID, "fp16 fp32", {"BLOCK": 4096}, False, 40, v.FITS),  # the fp16 load stays live beside its fp32
    (SIGMOID, "fp16 fp16", {"BLOCK": 4096}, False, 40, v.FITS),  # a sigmoid is taken in fp32, into a new buffer
    (SCALED_ROWS, "fp16 fp16", {"BM": 32, "BN": 1024}, True, 128, v.FITS),  # the result written over the copy read
]
IDS = ["loop", "loop-mb", "loop-mb-shrunk", "loop-mb-over", "two-mb", "two-mb-over", "two", "acc", "acc-mb",
       "loop-free-mb", "upcast", "store-2d-mb", "store-one-row-mb", "cumsum", "sum", "sum-fp16", "max", "max-fp16",
       "row-sums", "softmax", "select-named-mask", "select-two", "scaled-fp16", "exp-fp16", "widened-sigmoid",
       "sigmoid-fp16", "scaled-rows-mb"]


def _pointer_types(source: str, dtypes: str, values: dict) -> dict[str, str]:
    names = [p.split(":")[0].strip() for p in source.split("def k(")[1].split(")")[0].split(",")]
    return dict(zip([n for n in names if n not in values and n not in ("n", "m", "scale")], dtypes.split()))


def _estimate_kb(source: str, values: dict, multibuffer: bool, dtypes: str = "") -> int:
    module = cst.parse_module(HEADER + textwrap.dedent(source))
    facts = ModuleFacts(module, NodeIndex(module))
    kernel = next(iter(facts.kernels.values()))
    config = ub.Config("probe", kernel.node, values, multibuffer)
    types = _pointer_types(source, dtypes, values) if dtypes else None
    return ub.estimate_at(facts, kernel, config, values, dtypes=types).bytes // 1024


@pytest.mark.parametrize("source, dtypes, values, multibuffer, compiler_kb, status", PROBES, ids=IDS)
def test_the_estimate_is_the_compilers_peak(source, dtypes, values, multibuffer, compiler_kb, status):
    # the estimate reads the pointer types the compile was given; a plan the compiler shrank to fit is the UB
    assert _estimate_kb(source, values, multibuffer, dtypes) == compiler_kb


def test_a_dot_accumulator_and_its_operands_are_not_unified_buffer():
    assert _estimate_kb(DOT, {"M": 128, "N": 128, "K": 128}, True) == 0


def test_a_launch_that_says_nothing_is_multi_buffered():
    module = cst.parse_module(HEADER + textwrap.dedent(LOOP) + "\n\ndef run(x, y):\n    k[(1,)](x, y, 4, BLOCK=64)\n")
    facts = ModuleFacts(module, NodeIndex(module))
    (config,) = ub.configs(facts, next(iter(facts.kernels.values())))
    assert config.multibuffer


@pytest.mark.skipif(missing() is not None, reason=f"no compiler: {missing()}")
@pytest.mark.parametrize("source, dtypes, values, multibuffer, compiler_kb, status", PROBES, ids=IDS)
def test_the_figures_are_what_the_compiler_plans(source, dtypes, values, multibuffer, compiler_kb, status):
    job = _job(source, dtypes, values, multibuffer)
    found = service.verdicts([job])[job.key()]
    assert found.status == status, found.message
    assert found.scope("ub").peak_bits // 8192 == compiler_kb


def _job(source: str, dtypes: str, values: dict, multibuffer: bool) -> CompileJob:
    names = [p.split(":")[0].strip() for p in source.split("def k(")[1].split(")")[0].split(",")]
    kinds = iter(dtypes.split())
    params = [{"name": n, "kind": "constexpr", "value": values[n]} if n in values
              else {"name": n, "kind": "int", "value": None} if n in ("n", "m")
              else {"name": n, "kind": "float", "value": None} if n == "scale"
              else {"name": n, "kind": "pointer", "dtype": next(kinds)} for n in names]
    return CompileJob("k", HEADER + textwrap.dedent(source), params, {"multibuffer": multibuffer})


EDGE = """
@triton.jit
def k(x, y, w, v, z, BLOCK: tl.constexpr, SMALL: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    c = tl.load(w + offs)
    s = tl.arange(0, SMALL)
    d = tl.load(v + s)
    tl.store(z + offs, a + b + c)
    tl.store(z + s, d)
"""


def test_a_plan_that_fills_the_unified_buffer_exactly_is_within_the_budget():
    values = {"BLOCK": 16384, "SMALL": 8}
    assert ub.UB_BUDGET == ub.UB_PHYSICAL == 192 * 1024
    three = _estimate_kb(THREE_TILES, {"BLOCK": 16384}, True, "fp32 fp32 fp32 fp32")
    assert three == 192 and three * 1024 <= ub.UB_BUDGET
    assert _estimate_kb(EDGE, values, True, "fp32 fp32 fp32 fp32 fp32") * 1024 > ub.UB_BUDGET - 1024


THREE_TILES = """
@triton.jit
def k(x, y, w, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    c = tl.load(w + offs)
    tl.store(z + offs, a + b + c)
"""


@pytest.mark.skipif(missing() is not None, reason=f"no compiler: {missing()}")
def test_the_compiler_reserves_nothing_of_the_unified_buffer():
    # three 64 KB fp32 tiles fill the 192 KB exactly and fit; 32 bytes more (eight fp32 elements) overflow
    full = _job(THREE_TILES, "fp32 fp32 fp32 fp32", {"BLOCK": 16384}, True)
    over = _job(EDGE, "fp32 fp32 fp32 fp32 fp32", {"BLOCK": 16384, "SMALL": 8}, True)
    found = service.verdicts([full, over])
    assert found[full.key()].status == v.FITS and found[full.key()].scope("ub").peak_bits == ub.UB_PHYSICAL * 8
    overflow = found[over.key()].overflow
    assert found[over.key()].status == v.OVERFLOW
    assert overflow.available_bits == ub.UB_BUDGET * 8 and overflow.required_bits == ub.UB_PHYSICAL * 8 + 32 * 8


def test_a_load_reads_the_type_the_compile_gives_its_pointer_else_the_assumed_one():
    module = cst.parse_module(HEADER + textwrap.dedent(LOOP_FREE))
    facts = ModuleFacts(module, NodeIndex(module))
    kernel = next(iter(facts.kernels.values()))
    config = ub.Config("probe", kernel.node, {"BLOCK": 16384}, True)
    at = lambda **kw: ub.estimate_at(facts, kernel, config, config.values, **kw).bytes // 1024
    assert at() == 32  # fp16 by default, as the compile assumes it (``pointer-dtype``)
    assert at(pointer_dtype="fp32") == 64
    assert at(dtypes={"x": "bf16"}, pointer_dtype="fp32") == 32


@pytest.mark.parametrize("block, over", [(8192, False), (16384, True)])
def test_a_wider_result_beside_a_multi_buffered_pair_overflows_where_the_compiler_does(block, over):
    # fp16 loads scaled by an fp32 argument: the fp32 result cannot be written over a 2-byte copy, and the copy
    # read stays live with the next transfer's copy; BiShengIR: 160 KB at 8192, an overflow (256 KB) at 16384
    estimate = _estimate_kb(SCALED_SUM, {"BLOCK": block}, True, "fp16 fp16 fp16")
    assert (estimate * 1024 > ub.UB_BUDGET) is over


@pytest.mark.skipif(missing() is not None, reason=f"no compiler: {missing()}")
@pytest.mark.parametrize("block, over", [(8192, False), (16384, True)])
def test_the_compiler_overflows_the_scaled_sum_only_at_16384(block, over):
    job = _job(SCALED_SUM, "fp16 fp16 fp16", {"BLOCK": block}, True)
    assert (service.verdicts([job])[job.key()].status == v.OVERFLOW) is over
