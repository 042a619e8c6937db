"""Recall kept on the shapes that unseen code showed the review sweep must catch: the forward attention grid beside
a backward one, one program per token row in the spellings launchers use, convolution grids that pass 65,535
programs at ordinary training shapes; the dict of launch keywords handed to a launcher outside the tree is
ASC101's (``test_asc101_dispatchers.py``)."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = """\
import math
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def attn_fwd(q, k, v, o, SQ, SK, HQ, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    pass

@triton.jit
def conv_fwd(x, w, y, N, C, H, W, K, OH, OW, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass

@triton.jit
def row_kernel(x, y, D, BLOCK: tl.constexpr):
    pass

"""

LAUNCHERS = {
    "attention forward, cdiv over query blocks by batch times heads": (
        "def forward(q, k, v):\n    B, SQ, HQ, D = q.shape\n    o = torch.empty_like(q)\n"
        "    grid = lambda META: (triton.cdiv(SQ, META['BM']), B * HQ)\n"
        "    attn_fwd[grid](q, k, v, o, SQ, k.shape[1], HQ, BM=64, BN=64, D=D)\n    return o\n"),
    "attention forward, rounded up by hand": (
        "def forward(q, k, v):\n    batch, seqlen_q, nheads, d = q.shape\n    o = torch.empty_like(q)\n"
        "    BLOCK_M = 128\n    grid = ((seqlen_q + BLOCK_M - 1) // BLOCK_M, batch * nheads)\n"
        "    attn_fwd[grid](q, k, v, o, seqlen_q, k.shape[1], nheads, BM=BLOCK_M, BN=64, D=d)\n    return o\n"),
    "one program per row of flattened hidden states": (
        "def norm(hidden_states):\n    x = hidden_states.reshape(-1, hidden_states.shape[-1])\n"
        "    y = torch.empty_like(x)\n"
        "    row_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))\n    return y\n"),
    "one program per token id": (
        "def embed(input_ids, table):\n    num_tokens = input_ids.numel()\n"
        "    out = table.new_empty((num_tokens, table.shape[1]))\n"
        "    row_kernel[(num_tokens,)](table, out, table.shape[1], BLOCK=1024)\n    return out\n"),
    "convolution, output pixels of the batch over a tile": (
        "def conv(x, w):\n    N, C, H, W = x.shape\n    K = w.shape[0]\n"
        "    y = torch.empty((N, K, H, W), device=x.device, dtype=x.dtype)\n"
        "    grid = (triton.cdiv(N * H * W, 32), triton.cdiv(K, 64))\n"
        "    conv_fwd[grid](x, w, y, N, C, H, W, K, H, W, BLOCK_M=32, BLOCK_N=64)\n    return y\n"),
    "convolution, pixel tiles by batch by channel tiles": (
        "def conv(x, w):\n    N, C, H, W = x.shape\n    K = w.shape[0]\n"
        "    y = torch.empty((N, K, H, W), device=x.device, dtype=x.dtype)\n"
        "    grid = (triton.cdiv(H * W, 16), N, triton.cdiv(K, 64))\n"
        "    conv_fwd[grid](x, w, y, N, C, H, W, K, H, W, BLOCK_M=16, BLOCK_N=64)\n    return y\n"),
    "convolution, NHWC pixels over a tile": (
        "def conv(x, w):\n    batch, in_h, in_w, in_c = x.shape\n    out_c = w.shape[0]\n"
        "    y = x.new_empty((batch, in_h, in_w, out_c))\n"
        "    grid = (batch * in_h * in_w // 16, triton.cdiv(out_c, 32))\n"
        "    conv_fwd[grid](x, w, y, batch, in_c, in_h, in_w, out_c, in_h, in_w, BLOCK_M=16, BLOCK_N=32)\n"
        "    return y\n"),
}


@pytest.mark.parametrize("launcher", LAUNCHERS.values(), ids=LAUNCHERS.keys())
def test_the_review_sweep_catches_the_uncapped_grid(launcher):
    assert len(lint(HEADER + launcher, "ASC105", "ASC110")) == 1
