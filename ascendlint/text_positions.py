"""Offsets to 1-based (row, column) positions in a text, for formats that describe edits by position."""

from __future__ import annotations

from .diagnostics import Location


def offset_to_location(text: str, offset: int) -> Location:
    row = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    return Location(row, offset - line_start + 1)
