"""Inserted lines end as their neighbours do, not as the file's first line: a lone CR on line 1 made an inserted
line end in ``\\r``, which joined the blank line below it into one ``\\r\\n`` (the blank line was lost)."""

from __future__ import annotations

import libcst as cst
import pytest

from ascendlint import edits
from ascendlint.analysis.walk import NodeIndex
from ascendlint.fixes import apply_edits
from ascendlint.text.locator import Locator


def _locator(text: str) -> Locator:
    module = cst.parse_module(text)
    return Locator(module, text, NodeIndex(module))


@pytest.mark.parametrize("text, row, expected", [
    ("import triton\rx = 1\n\ny = 2\n", 3, "import triton\rx = 1\nz = 0\n\ny = 2\n"),
    ("import triton\r\nx = 1\n\ny = 2\n", 3, "import triton\r\nx = 1\nz = 0\n\ny = 2\n"),
    ("import triton\nx = 1\r\n\r\ny = 2\r\n", 3, "import triton\nx = 1\r\nz = 0\r\n\r\ny = 2\r\n"),
    ("a = 1\rb = 2\r", 2, "a = 1\rz = 0\rb = 2\r"),
    ("a = 1\nb = 2", 2, "a = 1\nz = 0\nb = 2"),  # the last line has no ending: the one above it is used
], ids=["lone-cr-first", "crlf-first", "lf-first-crlf-below", "lone-cr-only", "no-final-newline"])
def test_an_inserted_line_ends_as_the_line_it_is_put_above(text, row, expected):
    loc = _locator(text)
    edit = edits.insert_before_line(loc, row, f"z = 0{loc.newline}")
    result = apply_edits(text, [edit])
    assert result == expected
    assert result.count("\n") + result.count("\r") - result.count("\r\n") == \
        text.count("\n") + text.count("\r") - text.count("\r\n") + 1  # exactly one line more
