"""Applying LSP edits as an editor does, written from the protocol (not from the server's code): lines end at
``\\n``, ``\\r\\n`` or ``\\r`` only, and characters are counted in UTF-16 code units."""

from __future__ import annotations

import re

from lsprotocol import types

_BREAK = re.compile(r"\r\n|\r|\n")


def line_offsets(text: str) -> list[int]:
    return [0, *(match.end() for match in _BREAK.finditer(text))]


def offset_of(text: str, position: types.Position) -> int:
    starts = line_offsets(text)
    if position.line >= len(starts):
        return len(text)
    begin = starts[position.line]
    end = starts[position.line + 1] if position.line + 1 < len(starts) else len(text)
    line = _BREAK.sub("", text[begin:end])
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return begin + index
        units += 2 if ord(char) > 0xFFFF else 1
    return begin + len(line)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply edits of one version of ``text`` (LSP: all ranges refer to the text before any of them)."""
    spans = sorted(((offset_of(text, e.range.start), offset_of(text, e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
