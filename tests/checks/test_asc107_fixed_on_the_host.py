"""ASC107 leaves alone four launch values whose name or source looks like a runtime size but which the host code
shows fixed or few: an axis after the sequence axis of a shape unpacking (a per-token feature width, heads), a value
with few possible values (literals on every host path, their ``max``, rows over the grid limit), ``len()`` of a list
the launch unpacks into the kernel's arguments, and a dimension of a tensor the host builds with literal sizes. Each
is paired with the form that stays a finding."""

from __future__ import annotations

import pytest

from tests.helpers import lint


def messages(source: str) -> list[str]:
    return [d.message for d in lint(source, "ASC107")]


# 1. axes after the sequence axis are per-token features -------------------------------------------------------------

GATE_CUMSUM = """\
import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def gate_cumsum(g, o, T, S: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr):
    i_s, i_t = tl.program_id(0), tl.program_id(1)
    rows = i_t * BT + tl.arange(0, BT)
    cols = i_s * BS + tl.arange(0, BS)
    mask = (rows[:, None] < T) & (cols[None, :] < S)
    b = tl.load(g + rows[:, None] * S + cols[None, :], mask=mask, other=0.0)
    tl.store(o + rows[:, None] * S + cols[None, :], tl.cumsum(b, axis=0), mask=mask)


def local_cumsum(g, head_first=False):
    {unpack}
    o = torch.empty_like(g)
    gate_cumsum[(triton.cdiv(S, 32), triton.cdiv(T, 64))](g, o, T, S=S, BT=64, BS=32)
    return o
"""


@pytest.mark.parametrize("unpack", [
    "B, T, H, S = g.shape",
    "if head_first:\n        B, H, T, S = g.shape\n    else:\n        B, T, H, S = g.shape",
    "batch, seq_len, S, D = g.shape\n    T = seq_len",
])
def test_an_axis_after_the_sequence_axis_is_a_feature_of_each_token(unpack):
    assert messages(GATE_CUMSUM.format(unpack=unpack)) == []


@pytest.mark.parametrize("unpack", [
    "B, S, H, D = g.shape\n    T = S",  # S is the sequence axis itself
    "B, H, S = g.shape\n    T = S",  # head-first scalar gates: the last axis is the sequence
    "batch, S = g.shape\n    T = S",  # rank 2: no axis after the sequence to speak of
])
def test_the_sequence_axis_itself_is_still_reported(unpack):
    assert len(messages(GATE_CUMSUM.format(unpack=unpack))) == 1


# 2. values with few possible values ---------------------------------------------------------------------------------

ROW_TRANSFORM = """\
import torch
import triton
import triton.language as tl

MAX_GRID = 65535


@triton.jit
def row_transform(x, y, N_ROWS, DIM: tl.constexpr, ROWS_PER_PROGRAM: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, DIM)
    for r in range(ROWS_PER_PROGRAM):
        row = pid * ROWS_PER_PROGRAM + r
        v = tl.load(x + row * DIM + cols, mask=row < N_ROWS, other=0.0)
        tl.store(y + row * DIM + cols, v * 2.0, mask=row < N_ROWS)


def transform(x):
    batch, dim = x.shape
    n_rows = batch
    count = batch * dim
    if batch <= 64:
        min_rows = 1
    elif batch <= 1024:
        min_rows = 2
    else:
        min_rows = 16
    rows_per_program = {value}
    y = torch.empty_like(x)
    row_transform[(triton.cdiv(batch, rows_per_program),)](x, y, batch, DIM=dim, ROWS_PER_PROGRAM=rows_per_program)
    return y
"""


@pytest.mark.parametrize("value", [
    "min_rows",  # a literal on every path
    "max((batch + MAX_GRID - 1) // MAX_GRID, min_rows)",  # rows over the grid limit: at most 17 values
    "max(triton.cdiv(batch, 65536), min_rows)",
    "max(triton.cdiv(n_rows, 65536), min_rows)",
    "min_rows if dim > 1024 else 4",
])
def test_a_value_with_few_possible_values_is_not_a_runtime_size(value):
    assert messages(ROW_TRANSFORM.format(value=value)) == []


@pytest.mark.parametrize("value", [
    "max((batch + 1023) // 1024, min_rows)",  # rows over a tile: grows with the rows
    "max(triton.cdiv(batch, 128), min_rows)",
    "max(batch // 4, min_rows)",
    "max(triton.cdiv(count, 65536), min_rows)",  # elements, not rows: many times a million
    "min_rows * batch",
])
def test_a_value_that_grows_with_the_rows_is_still_reported(value):
    assert len(messages(ROW_TRANSFORM.format(value=value))) == 1


# 3. the number of tensors a launch unpacks into the kernel ----------------------------------------------------------

INDEX_PREP = """\
import torch
import triton
import triton.language as tl


@triton.jit
def index_prep(base, i0, i1, i2, i3, n, M: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.load(i0 + offs, mask=offs < n, other=0)
    if M > 1:
        acc += tl.load(i1 + offs, mask=offs < n, other=0)
    if M > 2:
        acc += tl.load(i2 + offs, mask=offs < n, other=0)
    if M > 3:
        acc += tl.load(i3 + offs, mask=offs < n, other=0)
    tl.store(base + offs, acc, mask=offs < n)


def prep(out, indices, n):
    m = {count}
    padded = indices + [indices[0]] * (4 - len(indices))
    base = torch.empty(n, dtype=torch.int64, device=out.device)
    index_prep[(triton.cdiv(n, 1024),)](base, *padded, n, M=m, BLOCK=1024)
    return base
"""


def test_the_number_of_tensors_the_launch_unpacks_is_bounded_by_the_kernel():
    assert messages(INDEX_PREP.format(count="len(indices)")) == []


@pytest.mark.parametrize("count", ["len(out)", "out.shape[0]"])
def test_the_length_of_a_tensor_is_still_a_row_count(count):
    assert len(messages(INDEX_PREP.format(count=count))) == 1


# 4. a dimension of a tensor the host builds with literal sizes ------------------------------------------------------

MASKED_ATTENTION = """\
import torch
import triton
import triton.language as tl


@triton.jit
def masked_scores(q, mask, o, T, MASK_SIZE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.load(mask + (i % MASK_SIZE) * MASK_SIZE + offs, mask=offs < MASK_SIZE, other=0)
    tl.store(o + i * BLOCK + offs, tl.load(q + i * BLOCK + offs) * m)


def scores(q, {mask_param}):
    T = q.shape[0]
{build}    o = torch.empty_like(q)
    masked_scores[(T,)](q, mask, o, T, MASK_SIZE=mask.shape[0], BLOCK=128)
    return o
"""


@pytest.mark.parametrize(("mask_param", "build"), [
    ("mask=None", "    if mask is None:\n        mask = torch.ones(1024, 1024 * 3, dtype=torch.bool).tril(1024)\n"),
    ("scale=1.0", "    mask = torch.zeros((512, 512), device=q.device)\n"),
])
def test_a_dimension_of_a_tensor_built_with_literal_sizes_is_a_setting(mask_param, build):
    assert messages(MASKED_ATTENTION.format(mask_param=mask_param, build=build)) == []


@pytest.mark.parametrize(("mask_param", "build"), [
    ("mask", ""),  # the caller's tensor: whatever it is
    ("mask", "    mask = mask.contiguous()\n"),
    ("mask=None", "    if mask is None:\n        mask = torch.ones(T, T, dtype=torch.bool)\n"),  # sized by the data
    ("scale=1.0", "    mask = torch.ones(T, 128, device=q.device)\n"),
])
def test_a_dimension_of_a_tensor_sized_by_the_data_or_the_caller_is_still_reported(mask_param, build):
    assert len(messages(MASKED_ATTENTION.format(mask_param=mask_param, build=build))) == 1
