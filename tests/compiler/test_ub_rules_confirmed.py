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


def test_asc305_drops_an_estimate_the_compiler_accepts():
    needs_compiler()
    code = THREE_LOADS  # three 64 KB tiles: over the estimate's 184 KB budget, a fit for the compiler's 192 KB
    assert _found(code, "ASC305", **{"confirm-with-compiler": False})
    assert _found(code, "ASC305") == []


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
    kept = _found(code, "ASC304")
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
