"""Offsets and 1-based (row, column) positions in a text, shared by the locator, noqa handling and formats."""

from __future__ import annotations

import bisect
import tokenize
from typing import Iterator

from ..diagnostics import Location
from .lazy_regex import lazy

_NEWLINE = lazy(r"\r\n?|\n")


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


def generate_tokens(text: str) -> Iterator[tokenize.TokenInfo]:
    """``tokenize.generate_tokens`` over the lines Python's compiler sees, so rows agree with ``line_starts``.

    The pure-Python tokenizer splits its input at ``\\n`` only (a lone ``\\r`` stays inside a line, as an error
    token, and every later row is off by one), while the compiler and libcst end a line at ``\\r`` too. Each line
    is handed over with its ending written as ``\\n``: columns within a row are unchanged.
    """
    lines = [line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line
             for line in source_lines(text, keepends=True)]
    return tokenize.generate_tokens(iter(lines).__next__)


def location_in(starts: list[int], offset: int) -> Location:
    row = bisect.bisect_right(starts, offset)
    return Location(row, offset - starts[row - 1] + 1)


def offset_to_location(text: str, offset: int) -> Location:
    return location_in(line_starts(text), offset)
