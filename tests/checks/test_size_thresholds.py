"""Every size finding states the size at which its trap fires, in the host's own names, and the figure is right:
the grid stays at 65535 programs at the stated size and passes it one above; the int32 product stays below 2^31
one index below the stated one and reaches it there."""

from __future__ import annotations

import math
import re

import pytest

from ascendlint.catalog.registry import all_rules
from tests.helpers import lint

GRID_HEADER = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

def run(x, B, H, T, M, N):
"""
_GRID_THRESHOLD = re.compile(r"passes 65535 programs once `([^`]+)` > ([\d,]+)")
_OFFSET_THRESHOLD = re.compile(r"at `([^`]+)` >= ([\d,]+) when `([^`]+)` is ([\d,]+)")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize(
    "launch, extent, programs",
    [
        # the issue's own example: `cdiv(T, 16)` x `B * H`, with B * H at its least
        ("k[(triton.cdiv(T, 16), B * H)](x, T, BLOCK=16)", "T", lambda t: math.ceil(t / 16)),
        ("k[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)", "x.numel()", lambda n: math.ceil(n / 1024)),
        ("NT = triton.cdiv(T, 64)\n    k[(NT, B, 4)](x, T, BLOCK=64)", "T", lambda t: math.ceil(t / 64) * 4),
        ("k[((T + 31) // 32, H * 3)](x, T, BLOCK=32)", "T", lambda t: (t + 31) // 32 * 3),
        ("rows = x.view(-1, 64).shape[0]\n    k[(rows, 2)](x, rows, BLOCK=64)", "rows", lambda r: r * 2),
        ("k[(triton.cdiv(M, 64), triton.cdiv(N, 128))](x, M, BLOCK=64)", "M", lambda m: math.ceil(m / 64)),
        ("k[lambda meta: (triton.cdiv(T, meta['BLOCK']), B * H)](x, T, BLOCK=32)", "T", lambda t: math.ceil(t / 32)),
    ],
)
def test_a_grid_finding_states_the_size_where_the_grid_passes_the_limit(launch, extent, programs):
    found = [d for d in lint(GRID_HEADER + "    " + launch + "\n", "ASC105", "ASC110") if d.code in ("ASC105", "ASC110")]
    assert len(found) == 1
    match = _GRID_THRESHOLD.search(found[0].message)
    assert match, found[0].message
    assert match.group(1) == extent
    size = _number(match.group(2))
    assert programs(size) <= 65535 < programs(size + 1)


def test_a_grid_finding_names_the_factors_held_at_one():
    found = lint(GRID_HEADER + "    k[(triton.cdiv(T, 16), B * H)](x, T, BLOCK=16)\n", "ASC105")
    assert found[0].message.endswith(
        "it passes 65535 programs once `T` > 1,048,560 (`triton.cdiv(T, 16)` x `B` x `H`, with `B`, `H` >= 1)")


def test_an_autotuned_tile_leaves_the_threshold_in_its_names():
    found = lint(GRID_HEADER + "    k[lambda meta: (triton.cdiv(x.numel(), meta['BLOCK']),)](x, T)\n", "ASC110")
    assert found[0].message.endswith("it passes 65535 programs once `x.numel()` > 65,535 x `meta['BLOCK']`")


OFFSET_KERNELS = {
    "row-stride": (
        """
        import triton
        import triton.language as tl

        @triton.jit
        def rmsnorm(x_ptr, y_ptr, n_rows, row_stride, BLOCK: tl.constexpr):
            cols = tl.arange(0, BLOCK)
            for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
                x = tl.load(x_ptr + row * row_stride + cols)
                tl.store(y_ptr + row * row_stride + cols, x)
        """,
        "ASC202",
        "row",
        "row_stride",
    ),
    "token-offset-times-literal-width": (
        """
        import triton
        import triton.language as tl

        @triton.jit
        def gather(x_ptr, y_ptr, cu_seqlens, H, BT: tl.constexpr):
            i_n = tl.program_id(0)
            bos = tl.load(cu_seqlens + i_n).to(tl.int32)
            o = tl.arange(0, BT)
            tl.store(y_ptr + (bos + o) * H * 4096, tl.load(x_ptr + (bos + o) * H * 4096))
        """,
        "ASC203",
        "(bos + o)",
        "H * 4096",
    ),
}


@pytest.mark.parametrize("case", sorted(OFFSET_KERNELS))
def test_an_int32_finding_states_the_index_where_the_product_wraps(case):
    import textwrap

    source, code, index, extent = OFFSET_KERNELS[case]
    found = [d for d in lint(textwrap.dedent(source).lstrip("\n"), code) if d.code == code]
    assert found, case
    match = _OFFSET_THRESHOLD.search(found[0].message)
    assert match, found[0].message
    assert (match.group(1), match.group(3)) == (index, extent)
    at, size = _number(match.group(2)), _number(match.group(4))
    assert (at - 1) * size < 2**31 <= at * size
    assert f"wraps once `{index}` >= 2^31 / `{extent}`" in found[0].message


def test_a_literal_extent_is_used_at_its_value():
    source, code, _, _ = OFFSET_KERNELS["token-offset-times-literal-width"]
    import textwrap

    message = lint(textwrap.dedent(source).lstrip("\n"), code)[0].message
    size = _number(_OFFSET_THRESHOLD.search(message).group(4))
    assert size % 4096 == 0  # the literal width, times what the model allows for `H`


@pytest.mark.parametrize("code", ["ASC105", "ASC110", "ASC202", "ASC203", "ASC207"])
def test_every_finding_of_the_size_rules_examples_states_a_threshold(code):
    rule = next(r for r in all_rules() if r.code == code)
    messages = [d.message for example in rule.INVALID for d in lint(example.code, code) if d.code == code]
    assert messages
    for message in messages:
        if code in ("ASC105", "ASC110"):
            assert "passes 65535 programs once" in message or re.search(r"it launches \d+ programs", message), message
        else:
            assert "wraps once `" in message and "2^31 / `" in message, message
