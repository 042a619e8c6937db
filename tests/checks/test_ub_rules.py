"""ASC304 and ASC305 beyond their examples: each catalog non-trigger, and minimal kernels of the real fixes the
rules were built for (an uncapped `BLOCK_C = C`, a vocab padded to a power of two, an rmsnorm backward tile)."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import lint

WIDE_BWD = """
import triton
import triton.language as tl

@triton.jit
def post_bwd(x, dy, dx, C, BLOCK_C: tl.constexpr):
    c = tl.arange(0, BLOCK_C)
    base = tl.program_id(0) * 4 * C
    x0 = tl.load(x + base + c).to(tl.float32)
    x1 = tl.load(x + base + C + c).to(tl.float32)
    d0 = tl.load(dy + base + c).to(tl.float32)
    d1 = tl.load(dy + base + C + c).to(tl.float32)
    tl.store(dx + base + c, d0 * x0 + d1 * x1)
    tl.store(dx + base + C + c, d0 * x1 + d1 * x0)

def backward(x, dy, dx):
    B, S, C = x.shape
    BLOCK_C = {block}
    post_bwd[(B * S,)](x, dy, dx, C, BLOCK_C)
"""


def _found(code: str, rule: str, confirm: bool = True, pointer_dtype: str = "fp32"):
    # the kernels here were sized for fp32 data; the rules' own default for a pointer of unknown type is fp16
    options = {rule: {"pointer-dtype": pointer_dtype, **({} if confirm else {"confirm-with-compiler": False})}}
    return [d for d in lint(textwrap.dedent(code), rule, options=options) if d.code == rule]


def test_asc304_uncapped_whole_hidden_tile_is_reported_on_the_assignment():
    found = _found(WIDE_BWD.format(block="C"), "ASC304")
    assert len(found) == 1
    assert found[0].location.row == WIDE_BWD.splitlines().index("    BLOCK_C = {block}") + 1
    assert "`BLOCK_C = C`" in found[0].message


@pytest.mark.parametrize("block", ["4096 if C > 4096 else C", "min(C, 4096)", "min(triton.next_power_of_2(C), 2048)",
                                   "2048"])
def test_asc304_capped_sizes_are_not_reported(block):
    assert _found(WIDE_BWD.format(block=block), "ASC304") == []


def test_asc304_vocab_padded_to_power_of_two_is_reported_at_the_launch_argument():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def recover(probs, out, vocab_size, PADDED_VOCAB_SIZE: tl.constexpr):
        offs = tl.arange(0, PADDED_VOCAB_SIZE)
        p = tl.load(probs + offs, mask=offs < vocab_size, other=0.0)
        tl.store(out, tl.argmax(p, axis=0))

    def run(probs, out, vocab_size):
        recover[(probs.shape[0],)](
            probs,
            out,
            vocab_size,
            triton.next_power_of_2(vocab_size),
        )
    """
    found = _found(code, "ASC304")
    assert [d.location.row for d in found] == [16]  # the argument, not the call


def test_asc304_padded_size_not_used_as_a_tile_is_not_reported():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def recover(probs, out, vocab_size, PADDED_VOCAB_SIZE: tl.constexpr, SUB: tl.constexpr):
        for start in range(0, vocab_size, SUB):
            offs = start + tl.arange(0, SUB)
            p = tl.load(probs + offs, mask=offs < vocab_size, other=0.0)
            tl.store(out + offs, p)

    def run(probs, out, vocab_size):
        recover[(probs.shape[0],)](probs, out, vocab_size, triton.next_power_of_2(vocab_size), SUB=4096)
    """
    assert _found(code, "ASC304") == []


def test_asc304_small_model_dimensions_are_not_reported():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def attn(q, o, BLOCK_D: tl.constexpr, BLOCK_H: tl.constexpr, W: tl.constexpr):
        d = tl.arange(0, BLOCK_D)
        h = tl.arange(0, BLOCK_H)
        w = tl.arange(0, W)
        tl.store(o + h[:, None] * BLOCK_D + d[None, :], tl.load(q + h[:, None] * BLOCK_D + d[None, :]) + tl.sum(w))

    def run(q, o, weight):
        T, num_heads, head_dim = q.shape
        W = weight.shape[0]
        attn[(T,)](q, o, triton.next_power_of_2(head_dim), triton.next_power_of_2(num_heads), W)
    """
    assert _found(code, "ASC304") == []


def test_asc304_hidden_size_whose_whole_tile_fits_is_not_reported():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def l1(x, y, hidden_size: tl.constexpr):
        cols = tl.arange(0, hidden_size)
        v = tl.load(x + tl.program_id(0) * hidden_size + cols)
        tl.store(y + tl.program_id(0) * hidden_size + cols, v)

    def run(x, y):
        hidden_size = x.shape[1]
        l1[(x.shape[0],)](x, y, hidden_size)
    """
    assert _found(code, "ASC304") == []


def test_asc304_guarded_size_and_root_sized_blocks_are_not_reported():
    code = """
    import math
    import triton
    import triton.language as tl

    @triton.jit
    def part(x, y, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n))

    def scan(x, y, B):
        BLOCK_SIZE = 512
        if B <= BLOCK_SIZE:
            BLOCK_SIZE = triton.next_power_of_2(B)
        part[(1,)](x, y, B, BLOCK_SIZE)

    def reduce(x, y):
        n_elements = x.numel()
        block = triton.next_power_of_2(math.ceil(math.sqrt(n_elements)))
        mid = triton.cdiv(n_elements, block)
        part[(1,)](x, y, mid, triton.next_power_of_2(mid))
    """
    assert _found(code, "ASC304") == []


RMS = """
import triton
import triton.language as tl

@triton.jit
def rms_bwd(dy, x, w, dx, n_rows, n_cols, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr):
    for task in range(tl.program_id(0), tl.cdiv(n_rows, BLOCK_M), tl.num_programs(0)):
        rows = task * BLOCK_M + tl.arange(0, BLOCK_M)
        acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            g = tl.load(dy + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
            v = tl.load(x + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            wv = tl.load(w + cols, mask=cols < n_cols, other=0.0)
            m = g * wv[None, :]
            acc += tl.sum(m * v, axis=1)
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            g = tl.load(dy + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
            v = tl.load(x + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            wv = tl.load(w + cols, mask=cols < n_cols, other=0.0)
            m = (g * wv[None, :]).to(tl.float32)
            t1 = m * 2.0
            t2 = acc[:, None] * v
            tl.store(dx + rows[:, None] * n_cols + cols[None, :], t1 - t2, mask=mask)

COLS = {cols}

def backward(dy, x, w, dx):
    n_rows, n_cols = x.shape
    rms_bwd[(48,)](
        dy, x, w, dx, n_rows, n_cols,
        BLOCK_N=COLS,
        BLOCK_M=2,
    )
"""


def test_asc305_rmsnorm_backward_overflows_at_10240_and_fits_at_2048():
    found = _found(RMS.format(cols=10240), "ASC305")
    assert len(found) == 1
    assert found[0].location.row == RMS.splitlines().index("        BLOCK_N=COLS,") + 1
    assert " KB of 192 KB of Unified Buffer" in found[0].message and "~" in found[0].message
    assert _found(RMS.format(cols=2048), "ASC305") == []


def test_asc305_multibuffer_multiplies_a_loops_buffers_and_leaves_a_loop_free_kernel_alone():
    flat = """
    import triton
    import triton.language as tl

    @triton.jit
    def add(x, y, z, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        a = tl.load(x + offs)
        b = tl.load(y + offs)
        tl.store(z + offs, a + b)

    def run(x, y, z):
        add[(1,)](x, y, z, x.numel(), BLOCK=16384, multibuffer={mb})
    """
    # a, b: 2 x 64 KB = 128 KB either way (offs only addresses): the compiler plans a loop-free kernel the same
    assert _found(flat.format(mb="False"), "ASC305") == []
    assert _found(flat.format(mb="True"), "ASC305") == []
    looped = flat.replace("        offs = tl.arange(0, BLOCK)\n", "        for s in range(0, n, BLOCK):\n"
                          "            offs = s + tl.arange(0, BLOCK)\n").replace(
        "        a = tl.load", "            a = tl.load").replace("        b = tl.load", "            b = tl.load").replace(
        "        tl.store", "            tl.store")
    # in a loop each load is held twice (256 KB): over the budget with the default multi-buffering only
    assert _found(looped.format(mb="False"), "ASC305") == []
    assert "~256 KB" in _found(looped.format(mb="True"), "ASC305")[0].message


def test_asc305_shape_from_a_value_the_module_does_not_give_is_not_estimated():
    assert _found(RMS.format(cols=10240).replace("        BLOCK_M=2,\n", ""), "ASC305") == []


CHAIN = """
import triton
import triton.language as tl

@triton.jit
def chain(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(x + offs, mask=offs < n, other=0.0)
    b = a * 2.0
    c = b + 1.0
    d = tl.exp(c)
    tl.store(y + offs, {stored}, mask=offs < n)

def run(x, y, n):
    chain[(1,)](x, y, n, BLOCK=16384)
"""


def test_asc305_an_elementwise_chain_reuses_the_buffer_of_each_dying_operand():
    # a, b, c, d: 64 KB each, each dead at the statement that binds the next; offs forms addresses and masks only
    assert _found(CHAIN.format(stored="d * d"), "ASC305") == []


def test_asc305_operands_read_again_later_stay_live_beside_the_result():
    # a, b and c are all read by the store: with d, four 64 KB tiles live at once
    found = _found(CHAIN.format(stored="a + b + c + d"), "ASC305")
    assert len(found) == 1 and "~256 KB" in found[0].message


def test_asc305_an_index_tile_used_beside_the_data_is_counted():
    # offs is stored as data, so it is a 64 KB int32 tile of its own, live to the store
    code = CHAIN.format(stored="d + offs").replace("    b = a * 2.0\n", "    b = a * 2.0 + offs\n")
    estimate = _estimates(code)[0]
    assert {t.name for t in estimate.live} >= {"offs"}


def _estimates(code: str):
    import libcst as cst

    from ascendlint.analysis.module_facts import ModuleFacts
    from ascendlint.analysis.ub import estimates
    from ascendlint.analysis.walk import NodeIndex

    module = cst.parse_module(textwrap.dedent(code))
    return estimates(ModuleFacts(module, NodeIndex(module)))


def test_asc305_shapes_of_kept_axes_slices_and_method_reshapes():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def norm3(x, y, G: tl.constexpr, H: tl.constexpr, W: tl.constexpr, N: tl.constexpr):
        flat = tl.load(x + tl.arange(0, G * H * W))
        v = tl.reshape(flat, (G, H, W))
        m = tl.max(v, axis=2, keep_dims=True)
        e = tl.exp(v - m)
        saved = tl.full((N, G, 1, W), 0.0, dtype=tl.float32)
        saved = tl.insert_slice(saved, tl.sum(e, axis=1, keep_dims=True)[None, :, :, :], offsets=[0, 0, 0, 0],
                                sizes=[1, G, 1, W], strides=[1, 1, 1, 1])
        back = tl.extract_slice(saved, offsets=[0, 0, 0, 0], sizes=[1, G, 1, W], strides=[1, 1, 1, 1]).reshape(G, 1, W)
        tl.store(y + tl.arange(0, G * H * W), tl.reshape(e / back, (G * H * W,)))

    def run(x, y):
        norm3[(1,)](x, y, G=48, H=4, W=8, N=20)
    """
    estimate = _estimates(code)[0]
    shapes = {t.name: t.shape for t in estimate.live}
    assert shapes["e"] == (48, 4, 8) and shapes["saved"] == (20, 48, 1, 8)
    assert estimate.bytes == 20 * 48 * 8 * 4 + 48 * 4 * 8 * 2  # fp32 `saved`, `e` at the assumed fp16 of its load
