"""``kernel[a, b](...)`` spells its grid as a tuple without parentheses (``fn[NT, B * H](...)`` in real launchers,
``kernel[1, 1, 1](...)`` in triton-ascend's tests): it is a launch like ``kernel[(a, b)](...)`` for every rule that
reads launches."""

from __future__ import annotations

import pytest

from tests.helpers import lint

KERNEL = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, T: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < T) * 2, mask=offs < T)
"""


@pytest.mark.parametrize("grid", ["T, B * H", "(T, B * H)"])
def test_a_token_grid_over_heads_is_read_with_or_without_parentheses(grid):
    code = KERNEL + f"""
def run(x):
    B, T, H, D = x.shape
    scale[{grid}](x, 16, BLOCK=128)
"""
    found = [d for d in lint(code, "ASC105") if d.code == "ASC105"]
    assert len(found) == 1
    assert "once `T` > 65,535" in found[0].message


def test_a_launch_on_a_one_program_grid_without_parentheses_passes_its_sizes():
    code = KERNEL + """
def run(x):
    num_tokens = x.shape[0]
    scale[1, 1, 1](x, num_tokens, BLOCK=128)
"""
    found = [d for d in lint(code, "ASC107") if d.code == "ASC107"]
    assert [d.message.split("`")[1] for d in found] == ["T"]


def test_a_test_module_at_literal_sizes_compiles_only_those_cases():
    code = "import pytest\n" + KERNEL + """
@pytest.mark.parametrize("shape", [(1024,), (2048,)])
def test_scale(shape):
    x = torch.rand(shape, device="npu")
    scale[1, 1, 1](x, x.shape[0], BLOCK=128)
"""
    assert [d for d in lint(code, "ASC107") if d.code == "ASC107"] == []
    production = code.replace('@pytest.mark.parametrize("shape", [(1024,), (2048,)])\ndef test_scale(shape):\n'
                              '    x = torch.rand(shape, device="npu")\n', "def run(x):\n")
    assert [d.code for d in lint(production, "ASC107")] == ["ASC107"]
