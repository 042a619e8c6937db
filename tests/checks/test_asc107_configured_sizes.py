"""ASC107 leaves alone a constexpr that a launching function passes on from one of its own parameters with a literal
default (`split_size: int = 256`): a setting chosen per configuration, not a size read from the data. A value read
from a tensor's shape is still reported, whatever the parameter is called."""

from __future__ import annotations

from tests.helpers import lint

KERNEL = """\
import torch
import triton
import triton.language as tl


@triton.jit
def split_sums(x, out, T, S: tl.constexpr, BT: tl.constexpr):
    i_s = tl.program_id(0)
    offs = i_s * S + tl.arange(0, BT)
    tl.store(out + i_s, tl.sum(tl.load(x + offs, mask=offs < T, other=0.0), 0))

"""

SETTING = """\
def run(x, split_size: int = 256, chunk_size: int = 64):
    T = x.shape[0]
    S, BT = split_size, chunk_size
    out = torch.empty(triton.cdiv(T, S), device=x.device)
    split_sums[(triton.cdiv(T, S),)](x, out, T, S=S, BT=BT)
    return out
"""


def messages(source: str) -> list[str]:
    return [d.message for d in lint(source, "ASC107")]


def test_a_parameter_with_a_literal_default_is_a_setting():
    assert messages(KERNEL + SETTING) == []


def test_the_same_parameter_without_a_default_is_still_a_size_from_the_caller():
    assert len(messages(KERNEL + SETTING.replace("split_size: int = 256", "split_size: int"))) == 1


def test_a_shape_passed_for_the_same_constexpr_is_reported():
    source = KERNEL + SETTING.replace("    S, BT = split_size, chunk_size\n", "    S, BT = T, chunk_size\n")
    assert len(messages(source)) == 1


def test_a_sentinel_default_is_not_a_setting():
    # `max_len: int = -1` means "pass the real size": the callers pass one read from the data
    for sentinel in ("-1", "0", "1"):
        source = KERNEL + SETTING.replace("split_size: int = 256", f"split_size: int = {sentinel}")
        assert len(messages(source)) == 1, sentinel
