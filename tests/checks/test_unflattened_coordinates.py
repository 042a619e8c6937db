"""Coordinates unflattened from a flat element offset (``d = offs % D``, ``t = offs // D % T``, ``b = offs // D // T``)
and put back together with the tensor's strides (``b * stride_b + t * stride_t + d``) reach at most the flat offset
for a contiguous layout: when the flat offset itself stays below 2^31, so does the batch coordinate times the batch
stride. The int32 offset rules (ASC202 and its sweep ASC207) read the quotient's product with a stride as no larger
than the dividend, so that the recombination is not reported, while the same stride times an index that is not such
a quotient (a program id over batches) still is."""

from __future__ import annotations

import pytest

from tests.helpers import lint

UNFLATTENED = """\
import torch
import triton
import triton.language as tl


@triton.jit
def shift_add(x, y, pos, stride_b, stride_t, stride_d, N, T: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N * T * D
    d = offs % D
    rest = offs // D
    t = rest % T
    b = rest // T
    v = tl.load(x + b * stride_b + t * stride_t + d * stride_d, mask=mask)
    tl.store(y + b * stride_b + t * stride_t + d * stride_d, v + 1.0, mask=mask)
    i_bt = b * T + t
    tl.store(pos + i_bt * D + d, v, mask=mask)


def run(x):
    B, T, D = x.shape
    if T > 16:
        return x + 1.0
    y = torch.empty_like(x)
    pos = torch.empty_like(x)
    stride_b, stride_t, stride_d = x.stride()
    grid = (triton.cdiv(B * T * D, 1024),)
    shift_add[grid](x=x, y=y, pos=pos, stride_b=stride_b, stride_t=stride_t, stride_d=stride_d, N=B, T=T, D=D,
                    BLOCK=1024)
    return y
"""


def reported(source: str, code: str) -> list[str]:
    return [d.message for d in lint(source, code) if d.code == code]


@pytest.mark.parametrize("code", ["ASC202", "ASC207"])
def test_a_coordinate_unflattened_from_the_flat_offset_times_its_stride_is_quiet(code):
    assert not [m for m in reported(UNFLATTENED, code) if "stride_b" in m]


@pytest.mark.parametrize("code", ["ASC202", "ASC207"])
def test_a_multiple_of_an_extent_plus_its_remainder_is_still_a_coordinate(code):
    # `i_bt = b * T + t` with `t = rest % T` is `rest` again: times `D` it is at most the flat offset
    assert not [m for m in reported(UNFLATTENED, code) if "i_bt" in m]


def test_a_quotient_by_a_literal_is_not_a_coordinate_of_the_layout():
    # `offs // 4` divides by a number, not by an extent of the tensor: the product keeps its own size
    source = UNFLATTENED.replace("b = rest // T", "b = offs // 4")
    assert any("stride_b" in m for m in reported(source, "ASC207"))


def test_a_sum_with_another_index_does_not_keep_the_quotient():
    # adding the flat offset itself makes a sum of unrelated terms, not a coordinate
    source = UNFLATTENED.replace("i_bt = b * T + t", "i_bt = b * T + t + offs")
    assert any("i_bt" in m for m in reported(source, "ASC207"))


def test_an_index_divided_once_times_a_stride_keeps_its_own_size():
    # one division may turn rows into batches (`offs_m // S`), whose stride spans S rows of any width
    source = UNFLATTENED.replace("b = rest // T", "b = offs // T")
    assert any("stride_b" in m for m in reported(source, "ASC207"))
