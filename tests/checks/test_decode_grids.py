"""The query tokens of one decode step are a token, or a few draft tokens, per request: a batch of requests. A grid
over them (`(total_q, num_heads)`) in a host function or kernel named for decoding is read as a batch, small by
nature, unless the grid's literal factors alone take it past 65535 programs within a batch of 4096 requests
(`(total_q, 256)` passes at 256 decode tokens)."""

from __future__ import annotations

import pytest

from tests.helpers import lint

MODULE = """\
import torch
import triton
import triton.language as tl


@triton.jit
def {kernel}(q, out, H: tl.constexpr, BLOCK: tl.constexpr):
    i_t, i_h = tl.program_id(0), tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    v = tl.load(q + (i_t * H + i_h) * BLOCK + offs)
    tl.store(out + i_t * H + i_h, tl.sum(v, 0))


def {host}(q, num_heads):
    total_q = q.shape[0]
    out = torch.empty((total_q, num_heads), dtype=torch.float32, device=q.device)
    {kernel}[{grid}](q, out, H=num_heads, BLOCK=128)
    return out
"""


def grid_codes(kernel: str, host: str, grid: str = "(total_q, num_heads)") -> list[str]:
    return [d.code for d in lint(MODULE.format(kernel=kernel, host=host, grid=grid), "ASC105", "ASC110")]


@pytest.mark.parametrize("kernel, host", [
    ("_score_kernel", "score_decode"),  # the host function names the decode step
    ("_decode_score_kernel", "score"),  # the kernel does
    ("_score_kernel", "paged_decoding_scores"),
])
def test_a_decode_steps_token_grid_is_a_batch(kernel, host):
    assert grid_codes(kernel, host) == []


@pytest.mark.parametrize("kernel, host", [
    ("_score_kernel", "score_prefill"),
    ("_score_kernel", "decoder_scores"),  # the decoder is a part of the model, not the decode phase
])
def test_a_token_grid_outside_a_decode_step_is_still_reported(kernel, host):
    assert len(grid_codes(kernel, host)) == 1


def test_a_decode_grid_that_literal_factors_take_past_the_limit_is_still_reported():
    # 256 programs per decode token: a batch of 256 requests passes 65535
    assert grid_codes("_score_kernel", "score_decode", grid="(total_q, 256)") != []
