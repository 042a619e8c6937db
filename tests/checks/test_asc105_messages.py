"""ASC105's message names what grows: the tile counts, the runtime sizes or the total it found, never a reason
the grid does not have (a grid with one tile count and two extents is not "two tile counts"). Its review sweep
ASC110 words the grids it takes the same way, and exactly one of the two reports each launch."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    pass

def run(x, M, N, B, H, T, cache_steps):
"""


@pytest.mark.parametrize(
    "launch, message",
    [
        pytest.param(
            "k[(triton.cdiv(M, 64), triton.cdiv(N, 128))](x, M, BLOCK=64)",
            "tile counts of two runtime extents multiply (`triton.cdiv(M, 64)` and `triton.cdiv(N, 128)`); it passes 65535"
            " programs once `M` > 4,194,240 (`triton.cdiv(M, 64)` x `triton.cdiv(N, 128)`, with `triton.cdiv(N, 128)`"
            " >= 1)",
            id="two-tile-counts",
        ),
        pytest.param(
            "k[(x.shape[1] // cache_steps, H, triton.cdiv(T, 64))](x, T, BLOCK=64)",
            "3 runtime sizes multiply in `(x.shape[1] // cache_steps, H, triton.cdiv(T, 64))`; it passes 65535 programs once"
            " `T` > 4,194,240 (`triton.cdiv(T, 64)` x `x.shape[1] // cache_steps` x `H`, with `x.shape[1] //"
            " cache_steps`, `H` >= 1)",
            id="a-ratio-and-an-extent-are-not-tile-counts",
        ),
        pytest.param(
            "k[(triton.cdiv(B * T, 64), H)](x, T, BLOCK=64)",
            "3 runtime sizes multiply in `(triton.cdiv(B * T, 64), H)`; it passes 65535 programs once `B * T` > 4,194,240"
            " (`triton.cdiv(B * T, 64)` x `H`, with `H` >= 1)",
            id="a-tile-count-of-a-product-counts-each-factor",
        ),
        pytest.param(
            "k[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)",
            "`triton.cdiv(x.numel(), 1024)` counts the rows or elements of a whole tensor; it passes 65535 programs once"
            " `x.numel()` > 67,107,840",
            id="total-size",
        ),
        pytest.param(
            "rows = x.view(-1, 64).shape[0]\n    k[(rows,)](x, rows, BLOCK=64)",
            "`rows` (`x.view(-1, 64).shape[0]`) counts the rows or elements of a whole tensor; it passes 65535 programs"
            " once `rows` > 65,535",
            id="the-axis-as-written-and-what-it-resolves-to",
        ),
    ],
)
def test_message_names_what_grows(launch, message):
    found = [d for d in lint(HEADER + "    " + launch + "\n", "ASC105", "ASC110") if d.code in ("ASC105", "ASC110")]
    assert [d.message for d in found] == [f"launch grid can exceed 65535 programs: {message}"]


def test_a_product_of_dimensions_built_in_a_loop_is_what_grows():
    """``rows *= x.shape[i]`` in a host loop makes ``rows`` a total size: the message blames its tile count, not
    the inner size ``x.numel() // rows // N`` divided out of it."""
    body = (
        "    rows = 1\n"
        "    for i in range(2):\n"
        "        rows *= x.shape[i]\n"
        "    inner = x.numel() // rows // N\n"
        "    k[(triton.cdiv(rows, 4), inner)](x, rows, BLOCK=4)\n"
    )
    found = [d for d in lint(HEADER + body, "ASC105", "ASC110") if d.code in ("ASC105", "ASC110")]
    assert [d.message for d in found] == [
        "launch grid can exceed 65535 programs: `triton.cdiv(rows, 4)` counts the rows or elements of a whole tensor;"
        " it passes 65535 programs once `rows` > 262,140 (`triton.cdiv(rows, 4)` x `inner`, with `inner` >= 1)"
    ]
