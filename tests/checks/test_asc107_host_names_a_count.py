"""ASC107 reads the host's word over the kernel's: a constexpr parameter named like a model dimension (``N``, ``D``,
``K``) that the launch fills from a host name spelling out a count of the data (``N=num_tokens``) is a runtime size.
A single-letter host name, a host name of a model dimension, a tile size and a flag stay quiet."""

from __future__ import annotations

import pytest

from tests.helpers import lint

KERNEL = """\
import torch_npu
import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, o_ptr, N: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < N * D) * 2, mask=offs < N * D)


def launch(x):
    {host}
"""

REPORTED = {
    "tokens into N": ("num_tokens = x.shape[0]\n    scale_rows[(40,)](x, x, N=num_tokens, D=x.shape[1], BLOCK=64,"
                      " HAS_BIAS=False)", "N", "num_tokens"),
    "batch into D": ("batch_size = x.shape[0]\n    scale_rows[(40,)](x, x, 1, batch_size, 64, False)", "D",
                     "batch_size"),
    "sequence length into N": ("seq_len = x.size(1)\n    scale_rows[(40,)](x, x, seq_len, 128, 64, False)", "N",
                               "seq_len"),
}

QUIET = {
    "a single letter": "M = x.shape[0]\n    scale_rows[(40,)](x, x, N=M, D=128, BLOCK=64, HAS_BIAS=False)",
    "a model dimension": "hidden_size = x.shape[-1]\n    scale_rows[(40,)](x, x, 1, hidden_size, 64, False)",
    "heads": "num_heads = x.shape[1]\n    scale_rows[(40,)](x, x, num_heads, 128, 64, False)",
    "a literal": "scale_rows[(40,)](x, x, N=4096, D=128, BLOCK=64, HAS_BIAS=False)",
    "a token count into a tile size": "num_tokens = x.shape[0]\n"
                                      "    scale_rows[(40,)](x, x, 1, 128, num_tokens, False)",
}


@pytest.mark.parametrize(("host", "param", "source"), REPORTED.values(), ids=REPORTED.keys())
def test_a_host_count_outranks_a_model_dimension_name(host, param, source):
    found = lint(KERNEL.format(host=host), "ASC107")
    assert [d.message.split("`")[1] for d in found] == [param]
    assert f"the launch passes `{source}`" in found[0].message


@pytest.mark.parametrize("host", QUIET.values(), ids=QUIET.keys())
def test_names_that_do_not_spell_a_data_count_stay_quiet(host):
    assert lint(KERNEL.format(host=host), "ASC107") == []
