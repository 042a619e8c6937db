"""Where a notebook finding is in the raw ``.ipynb`` file, for the formats that point into files (sarif, rdjson).

A notebook finding's position is relative to its cell (``nb.ipynb:cell 3:2:5``), which text formats show as such.
A code-scanning alert or a review comment is placed on the file as stored, a JSON document, so the cell position
is translated to the line and column of the same character inside the cell's ``source`` string in that JSON
(escapes such as ``\\"`` or ``\\u00e9`` counted as what they decode to). The notebook is read from disk, as the run
left it (after ``--fix``, the fixed file, which is what the findings refer to); when it cannot be read or mapped
(standard input, a file changed since), callers fall back to the cell position.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import Location
from ..text.text_positions import line_starts

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


@dataclass
class _Piece:
    literal: int  # offset of the string literal's opening quote in the raw text
    text: str  # what it decodes to


class RawNotebook:
    def __init__(self, raw: str) -> None:
        self.raw = raw
        self._raw_starts = line_starts(raw)
        self.sources: dict[int, list[_Piece]] = _cell_sources(raw)

    def location(self, cell: int, location: Location) -> Location | None:
        """The raw file's 1-based row and column of the cell's ``location``; None when it cannot be mapped."""
        pieces = self.sources.get(cell)
        if not pieces:
            return None
        text = "".join(piece.text for piece in pieces)
        starts = line_starts(text)
        if not 1 <= location.row <= len(starts):
            return None
        target = starts[location.row - 1] + location.column - 1
        if target > len(text):
            return None
        consumed = 0
        for position, piece in enumerate(pieces):
            last = position == len(pieces) - 1
            if target < consumed + len(piece.text) or last:
                offset = _raw_offset(self.raw, piece.literal, target - consumed)
                row = _row_of(self._raw_starts, offset)
                return Location(row, offset - self._raw_starts[row - 1] + 1)
            consumed += len(piece.text)
        return None


def _row_of(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low + 1


def _raw_offset(raw: str, literal: int, decoded: int) -> int:
    """Offset in ``raw`` of the ``decoded``-th character of the string literal opening at ``literal``."""
    index = literal + 1
    for _ in range(decoded):
        if raw[index] == "\\":
            if raw[index + 1] == "u":
                high = int(raw[index + 2 : index + 6], 16)
                pair = 0xD800 <= high < 0xDC00 and raw[index + 6 : index + 8] == "\\u"
                index += 12 if pair else 6
            else:
                index += 2
        elif raw[index] == '"':
            break
        else:
            index += 1
    return index


def _skip(raw: str, index: int) -> int:
    while index < len(raw) and raw[index] in _WHITESPACE:
        index += 1
    return index


def _cell_sources(raw: str) -> dict[int, list[_Piece]]:
    """Cell number (1-based, every cell counted) -> the string literals of its ``source``; {} if not a notebook."""
    try:
        return _top(raw, _skip(raw, 1 if raw.startswith("\ufeff") else 0))
    except (ValueError, IndexError):
        return {}


def _object_members(raw: str, index: int):
    """Yield (key, offset of the value) for each member of the object opening at ``index``; the caller consumes
    each value and sends back the offset after it."""
    if raw[index] != "{":
        raise ValueError("not an object")
    index = _skip(raw, index + 1)
    if raw[index] == "}":
        return index + 1
    while True:
        if raw[index] != '"':
            raise ValueError("key expected")
        key, index = json.decoder.scanstring(raw, index + 1)
        index = _skip(raw, index)
        if raw[index] != ":":
            raise ValueError("colon expected")
        index = yield key, _skip(raw, index + 1)
        index = _skip(raw, index)
        if raw[index] == "}":
            return index + 1
        if raw[index] != ",":
            raise ValueError("comma expected")
        index = _skip(raw, index + 1)


def _members(raw: str, index: int, on_member) -> int:
    """Walk an object's members: ``on_member(key, value_offset)`` returns the offset after the value."""
    members = _object_members(raw, index)
    try:
        key, value = next(members)
        while True:
            key, value = members.send(on_member(key, value))
    except StopIteration as done:
        return done.value


def _value_end(raw: str, index: int) -> int:
    return _DECODER.raw_decode(raw, index)[1]


def _top(raw: str, index: int) -> dict[int, list[_Piece]]:
    found: dict[int, list[_Piece]] = {}

    def member(key: str, value: int) -> int:
        if key != "cells" or raw[value] != "[":
            return _value_end(raw, value)
        return _cells(raw, value, found)

    _members(raw, index, member)
    return found


def _cells(raw: str, index: int, found: dict[int, list[_Piece]]) -> int:
    index = _skip(raw, index + 1)
    number = 0
    while raw[index] != "]":
        number += 1
        pieces: list[_Piece] = []

        def member(key: str, value: int) -> int:
            if key != "source":
                return _value_end(raw, value)
            return _source(raw, value, pieces)

        index = _skip(raw, _members(raw, index, member))
        found[number] = pieces
        if raw[index] == ",":
            index = _skip(raw, index + 1)
    return index + 1


def _source(raw: str, index: int, pieces: list[_Piece]) -> int:
    if raw[index] == '"':
        text, end = json.decoder.scanstring(raw, index + 1)
        pieces.append(_Piece(index, text))
        return end
    if raw[index] != "[":
        return _value_end(raw, index)
    index = _skip(raw, index + 1)
    while raw[index] != "]":
        if raw[index] != '"':
            raise ValueError("a source line must be a string")
        text, end = json.decoder.scanstring(raw, index + 1)
        pieces.append(_Piece(index, text))
        index = _skip(raw, end)
        if raw[index] == ",":
            index = _skip(raw, index + 1)
    return index + 1


_read: dict[str, RawNotebook | None] = {}


def raw_notebook(filename: str) -> RawNotebook | None:
    """The notebook file as stored, parsed for positions (once per file and run); None when it cannot be read."""
    if filename not in _read:
        try:
            raw = Path(filename).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            _read[filename] = None
        else:
            _read[filename] = RawNotebook(raw)
    return _read[filename]


def raw_span(filename: str, cell: int, start: Location, end: Location) -> tuple[RawNotebook, Location, Location] | None:
    book = raw_notebook(filename)
    if book is None:
        return None
    raw_start, raw_end = book.location(cell, start), book.location(cell, end)
    if raw_start is None or raw_end is None:
        return None
    return book, raw_start, raw_end


def file_span(diagnostic) -> tuple[Location, Location]:
    """Where a finding is in the file as stored: a notebook finding's cell position mapped into the ``.ipynb``
    JSON (the cell position itself when it cannot be mapped); any other finding's own position."""
    if diagnostic.cell is None:
        return diagnostic.location, diagnostic.end_location
    mapped = raw_span(diagnostic.filename, diagnostic.cell, diagnostic.location, diagnostic.end_location)
    if mapped is None:
        return diagnostic.location, diagnostic.end_location
    return mapped[1], mapped[2]


def cell_label(cell: int, location: Location) -> str:
    return f"cell {cell}, line {location.row}, column {location.column}"
