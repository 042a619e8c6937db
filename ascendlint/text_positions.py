"""Offsets and 1-based (row, column) positions in a text, shared by the locator, noqa handling and formats."""

from __future__ import annotations

import bisect
import re

from .diagnostics import Location

_NEWLINE = re.compile(r"\r\n?|\n")


def line_starts(text: str) -> list[int]:
    """Offsets where lines begin; ``\\r\\n``, ``\\r`` and ``\\n`` all end a line, as in Python's tokenizer."""
    if "\r" in text:
        return [0, *(match.end() for match in _NEWLINE.finditer(text))]
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def location_in(starts: list[int], offset: int) -> Location:
    row = bisect.bisect_right(starts, offset)
    return Location(row, offset - starts[row - 1] + 1)


def offset_to_location(text: str, offset: int) -> Location:
    return location_in(line_starts(text), offset)
