"""With the compiler installed, the static UB rules report only what BiShengIR rejects, with its numbers."""

import textwrap

from tests.compiler.support import needs_compiler
from tests.helpers import lint

LOOP_FREE = """
import triton
import triton.language as tl

@triton.jit
def add(x, y, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    tl.store(z + offs, a + b)

def run(x, y, z):
    add[(1,)](x, y, z, BLOCK={block}, multibuffer=True)
"""


def _found(code: str, rule: str, **options):
    return [d for d in lint(textwrap.dedent(code), rule, options={rule: options} if options else None)
            if d.code == rule]


THREE_LOADS = """
import torch
import triton
import triton.language as tl

@triton.jit
def add3(x, y, w, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    c = tl.load(w + offs)
    tl.store(z + offs, a + b + c)

def run(n):
    x, y, w, z = (torch.empty(n, dtype=torch.float32) for _ in range(4))
    add3[(1,)](x, y, w, z, BLOCK=16384)
"""


SELECT_BY_INDEX = """
import torch
import triton
import triton.language as tl

@triton.jit
def masked_sum(x, y, z, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    c = tl.load(y + offs)
    b = tl.where(offs < n, a + c, 0.0)
    tl.store(z + offs, b)

def run(n):
    x, y, z = (torch.empty(n, dtype=torch.float32) for _ in range(3))
    masked_sum[(1,)](x, y, z, n, BLOCK=16384)
"""


def test_asc305_drops_an_estimate_the_compiler_accepts():
    needs_compiler()
    # the estimate counts the index tile of the select's condition (256 KB); BiShengIR plans 192 KB and fits
    code = SELECT_BY_INDEX
    assert _found(code, "ASC305", **{"confirm-with-compiler": False, "pointer-dtype": "fp32"})
    assert _found(code, "ASC305", **{"pointer-dtype": "fp32"}) == []


def test_a_plan_that_fills_the_unified_buffer_is_not_reported():
    # three 64 KB fp32 tiles: exactly the 192 KB the compiler plans to the last byte
    assert _found(THREE_LOADS, "ASC305", **{"confirm-with-compiler": False}) == []


def test_asc305_carries_the_compilers_numbers_when_it_rejects_the_config():
    needs_compiler()
    (finding,) = _found(LOOP_FREE.format(block=65536), "ASC305")
    assert "BiShengIR on Ascend910B1: at least" in finding.message and "192 KB available" in finding.message


def test_asc304_keeps_a_runtime_sized_tile_the_compiler_rejects_and_says_from_which_size():
    needs_compiler()
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def rows(x, y, n_tokens, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n_tokens)
        tl.store(y + offs, v * 2, mask=offs < n_tokens)

    def run(x, y):
        n_tokens = x.shape[0]
        rows[(1,)](x, y, n_tokens, BLOCK=triton.next_power_of_2(n_tokens))
    """
    assert _found(code, "ASC304", **{"confirm-with-compiler": False})
    kept = _found(code, "ASC304", **{"pointer-dtype": "fp32"})  # at fp16 the tile fits up to the sweep's limit
    assert len(kept) == 1 and "from BLOCK=" in kept[0].message


def test_asc304_drops_a_runtime_sized_tile_the_compiler_fits_at_every_size_up_to_the_limit():
    needs_compiler()
    code = """
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def flags(x, n_tokens, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        v = tl.load(x + offs, mask=offs < n_tokens)
        tl.store(x + offs, v, mask=offs < n_tokens)

    def run(n_tokens):
        x = torch.zeros(n_tokens, dtype=torch.int8)
        flags[(1,)](x, n_tokens, BLOCK=triton.next_power_of_2(n_tokens))
    """
    assert _found(code, "ASC304", **{"confirm-with-compiler": False})
    assert _found(code, "ASC304") == []


FOUR_LOADS = """
import triton
import triton.language as tl

@triton.jit
def add4(x, y, w, v, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x + offs)
    b = tl.load(y + offs)
    c = tl.load(w + offs)
    d = tl.load(v + offs)
    tl.store(z + offs, a + b + c + d)

def run(x, y, w, v, z):
    add4[(1,)](x, y, w, v, z, BLOCK=16384)
"""


def test_asc305_estimates_and_confirms_at_the_same_pointer_type():
    # four tiles of 16384 elements: 128 KB at the default fp16 (nothing to report, and the compiler fits it), 256 KB
    # at fp32, where the compiler overflows too and the finding carries its numbers
    assert _found(FOUR_LOADS, "ASC305", **{"confirm-with-compiler": False}) == []
    assert _found(FOUR_LOADS, "ASC305") == []
    needs_compiler()
    (finding,) = _found(FOUR_LOADS, "ASC305", **{"pointer-dtype": "fp32"})
    assert "~256 KB" in finding.message and "BiShengIR on Ascend910B1: at least" in finding.message


def test_no_ub_rule_reports_a_configuration_the_compiler_accepts():
    # the compiler fits each of these at the pointer type the rules assume; the first is over the estimate
    needs_compiler()
    for code in (SELECT_BY_INDEX, THREE_LOADS, LOOP_FREE.format(block=16384)):
        assert _found(code, "ASC305", **{"pointer-dtype": "fp32"}) == []
        assert _found(code, "ASC304", **{"pointer-dtype": "fp32"}) == []
