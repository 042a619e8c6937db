"""``hidden_states`` and the attention inputs ``query_states``, ``key_states`` and ``value_states`` end like a
recurrent state (``ssm_states``, ``states``), whose leading dimension the batch bounds, but they are activations,
one row per token: a row stride times a row index is an int32 offset that can wrap, and the leading dimension
counts tokens. So do ``attn_output``, the gradients ``dk`` and ``dv``, MoE routing weights (``topk_weights``,
``[tokens, topk]``) and attention probabilities (``attn_weights``), which end like a model weight, and per-token
scales (``per_token_scale``), which end like a per-channel one."""

from __future__ import annotations

import pytest

from ascendlint.analysis.host_facts import is_activation, tensor_is_small
from tests.helpers import lint

ROWS_KERNEL = """\
import torch
import torch_npu
import triton
import triton.language as tl


@triton.jit
def double_rows(x_ptr, y_ptr, n_rows, N: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, N)
    for i in range(ROWS):
        row = pid * ROWS + i
        v = tl.load(x_ptr + row * N + cols, mask=row < n_rows)
        tl.store(y_ptr + row * N + cols, v * 2, mask=row < n_rows)


def run({tensor}):
    M, N = {tensor}.shape
    y = torch.empty_like({tensor})
    double_rows[(triton.cdiv(M, 8),)]({tensor}, y, M, N=N, ROWS=8)
"""


@pytest.mark.parametrize("name", ["hidden_states", "hidden_state", "residual_hidden_states", "key_states", "x"])
def test_rows_of_an_activation_named_hidden_states_are_reported(name):
    assert [d.code for d in lint(ROWS_KERNEL.format(tensor=name), "ASC202")] == ["ASC202"]


@pytest.mark.parametrize("name", ["ssm_states", "conv_state", "initial_state"])
def test_rows_of_a_recurrent_state_stay_quiet(name):
    assert lint(ROWS_KERNEL.format(tensor=name), "ASC202") == []


def test_the_names_themselves():
    assert is_activation("hidden_states") and not tensor_is_small("hidden_states")
    assert tensor_is_small("ssm_states") and not is_activation("ssm_states")


GRID_KERNEL = """\
import torch
import torch_npu
import triton
import triton.language as tl


@triton.jit
def double_rows(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * stride + cols, tl.load(x_ptr + row * stride + cols, mask=cols < N), mask=cols < N)


def run({tensor}):
    y = torch.empty_like({tensor})
    double_rows[({tensor}.shape[0],)]({tensor}, y, {tensor}.stride(0), {tensor}.shape[1], BLOCK=1024)
"""


@pytest.mark.parametrize(("name", "code"), [
    ("hidden_states", "ASC105"),  # an activation: the host shows a row per token
    ("attn_output", "ASC105"),
    ("topk_weights", "ASC110"),  # routing weights, [tokens, topk]: a row per token, not a model weight
    ("attn_weights", "ASC110"),  # attention probabilities, not a model weight
    ("per_token_scale", "ASC110"),  # a scale per token, not a per-channel one
    ("output_states", "ASC105"),
    ("dk", "ASC105"),  # a gradient of the keys, like dq
    ("x", "ASC105"),
])
def test_one_program_per_row_of_a_per_token_tensor_is_a_grid_finding(name, code):
    assert [d.code for d in lint(GRID_KERNEL.format(tensor=name), "ASC105", "ASC110")] == [code]


@pytest.mark.parametrize("name", ["weight", "w_proj", "ssm_states", "bias", "x_scale", "token_offsets"])
def test_one_program_per_row_of_a_model_sized_tensor_is_not(name):
    assert lint(GRID_KERNEL.format(tensor=name), "ASC105", "ASC110") == []
