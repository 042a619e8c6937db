"""Positions printed statement by statement equal the positions of printing the whole module, node for node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ascendlint.analysis.walk import NodeIndex
from ascendlint.text.locator import Locator

ROOT = Path(__file__).resolve().parents[2]

TRICKY = '''\
import triton  # a comment
import triton.language as tl

# a comment before a decorated kernel

@triton.autotune(configs=[triton.Config({"B": 16})], key=["n"])
@triton.jit
def kernel(x, y, n, B: tl.constexpr):
    pid = tl.program_id(0); offs = pid * B + tl.arange(0, B)
    if n > 0:
        v = tl.load(x + offs)
    elif n < -1:
        v = tl.load(y + offs) \\
            * 2
    else:
        v = 0.0
    for i in range(0, n):
        v += i
    else:
        v -= 1
    while n > 3:
        n -= 1
        # a comment inside a loop
    try:
        pass
    except Exception:
        v = 1
    finally:
        v = 2
    with open("f") as handle:
        def inner(a):
            return a + 1
    tl.store(y + offs, v)

class Host:
    def run(self, x):
        if x: return kernel[(1,)](x, x, 1)


@triton.jit
def tabbed(x):
\tif x:
\t\ttl.store(x, 1)
'''


def _all_offsets(text: str, partial: bool) -> list:
    module = cst.parse_module(text)
    index = NodeIndex(module)
    locator = Locator(module, text, index if partial else None)
    return [locator.offsets(node) for node in index.nodes if node is not module]


@pytest.mark.parametrize(
    "text",
    [
        TRICKY,
        TRICKY.replace("\n", "\r\n"),
        *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "reference_kernels").glob("*.py"))),
        *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("*.py"))),
    ],
)
def test_statement_by_statement_positions_equal_whole_module_positions(text):
    assert _all_offsets(text, partial=True) == _all_offsets(text, partial=False)


def test_a_comment_placed_within_its_call_is_located_without_printing_the_whole_module():
    text = "import triton\n\n\ndef run(k, x):\n    k[(1,)](\n        x,\n        # num_warps=4,\n    )\n"
    module = cst.parse_module(text)
    index = NodeIndex(module)
    call = next(n for n in index.nodes if isinstance(n, cst.Call))
    comments = []

    class Comments(cst.CSTVisitor):
        def visit_Comment(self, node: cst.Comment) -> None:
            comments.append(node)

    call.visit(Comments())
    (comment,) = comments
    locator = Locator(module, text, index)
    locator.place_within(comment, call)
    start, end = locator.offsets(comment)
    assert text[start:end] == "# num_warps=4,"
    assert locator._ranges is None  # only the statement holding the call was printed
    alone = Locator(module, text, index)  # not placed: found only by printing everything
    assert alone.offsets(comment) == (start, end) and alone._ranges is not None
