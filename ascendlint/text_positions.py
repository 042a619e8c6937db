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


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The text's lines as Python counts them (``str.splitlines`` also splits at form feeds, ``\\x1c``-``\\x1e``,
    ``\\x85``, ``\\u2028`` and ``\\u2029``, which would shift every later row)."""
    starts = line_starts(text)
    ends = [*starts[1:], len(text)]
    lines = [text[begin:end] for begin, end in zip(starts, ends)]
    if lines and not lines[-1]:
        lines.pop()
    return lines if keepends else [line.rstrip("\r\n") for line in lines]


def location_in(starts: list[int], offset: int) -> Location:
    row = bisect.bisect_right(starts, offset)
    return Location(row, offset - starts[row - 1] + 1)


def offset_to_location(text: str, offset: int) -> Location:
    return location_in(line_starts(text), offset)
