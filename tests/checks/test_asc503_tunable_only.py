"""ASC503 reports only a width the author is already tuning (issue 23 item 3): a tile-size constexpr varied by the
kernel's autotune configs, every value narrow. Widths passed at a launch were, on code the rule had not seen, set
by the data or the UB budget (0 of 30 findings followable): the shapes below are our own kernels of those kinds."""

from __future__ import annotations

from tests.helpers import lint

TOKENS_PER_CORE = """
import triton
import triton.language as tl

@triton.jit
def reverse_tokens(x_ptr, idx_ptr, out_ptr, n, D: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offs = D * tl.arange(0, BLOCK_SIZE)[:, None] + tl.arange(0, BLOCK_SIZE)[None, :]
    data = tl.load(x_ptr + pid * BLOCK_SIZE * D + offs, mask=offs < n)
    tl.store(out_ptr + pid * BLOCK_SIZE * D + offs, data, mask=offs < n)

def run(x, idx, out, tokens, D):
    reverse_tokens[(48,)](x, idx, out, x.numel(), D, BLOCK_SIZE=22)  # the tokens each of 48 cores handles
"""

UB_BOUNDED = """
import triton
import triton.language as tl

@triton.jit
def conv_rows(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    i_t, i_d = tl.program_id(0), tl.program_id(1)
    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, i_d * BD), (BT, BD), (1, 0))
    p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, i_d * BD), (BT, BD), (1, 0))
    tl.store(p_y, tl.load(p_x, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))

def run(x, y, T, D, with_state):
    if with_state:
        BD = 32  # the fused state buffers must fit in UB
    else:
        BD = 32
    conv_rows[(triton.cdiv(T, 8), triton.cdiv(D, BD))](x, y, T, D, BT=8, BD=BD)
"""

AUTOTUNED = UB_BOUNDED.replace(
    "@triton.jit", '@triton.autotune(configs=[triton.Config({"BD": 16}), triton.Config({"BD": 32})], key=["D"])\n'
    "@triton.jit").replace("BT=8, BD=BD)", "BT=8)")


def test_widths_set_at_the_launch_are_not_reported():
    assert lint(TOKENS_PER_CORE, "ASC503") == []
    assert lint(UB_BOUNDED, "ASC503") == []


def test_a_width_the_autotune_configs_vary_is_reported():
    found = lint(AUTOTUNED, "ASC503")
    assert len(found) == 2 and all("32 elements" in d.message for d in found)


def test_a_launch_that_passes_the_name_overrides_the_configs():
    overridden = AUTOTUNED.replace("BT=8)", "BT=8, BD=32)")
    assert lint(overridden, "ASC503") == []
