"""Building blocks rules use to describe fixes as text edits (rules never write files or apply edits)."""

from __future__ import annotations

import bisect
import re

import libcst as cst

from .diagnostics import Edit
from .text.locator import Locator


def code_of(module: cst.Module, node: cst.CSTNode | str) -> str:
    return node if isinstance(node, str) else module.code_for_node(node)


def replace(loc: Locator, node: cst.CSTNode, replacement: cst.CSTNode | str) -> Edit:
    """Replace ``node``; the edit remembers the node's code as the rule saw it (checked before it is applied)."""
    start, end = loc.offsets(node)
    return Edit(start, end, code_of(loc.module, replacement), loc.original_text(start, end))


def delete_argument(loc: Locator, args: list, index: int) -> Edit:
    """Delete ``args[index]`` of a call (or element of a dict/list) with the comma it owns, keeping every comment
    and the call's trailing comma, as ruff's argument removal does.

    An item followed by a comma goes with that comma (and the blanks after it): a comment after it stays where it
    was, now on its own; a line left blank is deleted whole, so an own-line comment above it stays above the next
    line. The last item without a comma of its own takes the previous item's comma instead; what lies between the
    two (line breaks, comments) is kept.
    """
    text = loc.text
    start, end = loc.offsets(args[index])
    comma_end = _after_comma(text, end)
    if comma_end is None and index > 0:
        _, previous_end = loc.offsets(args[index - 1])
        previous_comma = _after_comma(text, previous_end)
        if previous_comma is not None:
            between = text[previous_comma:start]
            if "\n" not in between and "\r" not in between and "#" not in between:
                return Edit(previous_end, end, "")  # `f(a, b)` -> `f(a)`
            # keep the line breaks and comments between the previous item and this one; drop this item's line
            # when nothing else is left on it
            kept = between
            line_begin = _line_begin(text, start)
            if not text[line_begin:start].strip() and not _rest_of_line(text, end).strip():
                kept = between[: len(between) - (start - line_begin)]
                end = _line_end(text, end)
            return Edit(previous_end, end, text[previous_end:previous_comma - 1].rstrip(",") + kept)
    if comma_end is None:
        return Edit(start, end, "")
    after = comma_end
    while after < len(text) and text[after] in " \t":
        after += 1
    rest = _rest_of_line(text, after)
    line_begin = _line_begin(text, start)
    alone_on_line = not text[line_begin:start].strip()
    if rest.startswith("#"):  # a comment after the item stays on its line, where the item was
        return Edit(start, after, "")
    if rest[:1] in (")", "]", "}") and not alone_on_line:  # `f(a, b,)` -> `f(a,)`
        cut = start
        while cut > line_begin and text[cut - 1] in " \t":
            cut -= 1
        return Edit(cut, after, "")
    if rest.strip() or after == len(text):  # more items on this line: up to the next one
        return Edit(start, after, "")
    if alone_on_line:  # the line holds nothing else: delete it whole
        return Edit(line_begin, _line_end(text, after), "")
    cut = start
    while cut > line_begin and text[cut - 1] in " \t":
        cut -= 1
    return Edit(cut, after, "")  # `f(a, b,\n  c)`: no blanks left at the end of the line


def _after_comma(text: str, offset: int) -> int | None:
    """The offset just past the comma that follows ``offset`` (blanks between), or None."""
    cursor = offset
    while cursor < len(text) and text[cursor] in " \t":
        cursor += 1
    return cursor + 1 if cursor < len(text) and text[cursor] == "," else None


def _line_begin(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def _rest_of_line(text: str, offset: int) -> str:
    cursor = offset
    while cursor < len(text) and text[cursor] not in "\r\n":
        cursor += 1
    return text[offset:cursor]


def _line_end(text: str, offset: int) -> int:
    """Past the line break of the line holding ``offset``."""
    cursor = offset + len(_rest_of_line(text, offset))
    if text.startswith("\r\n", cursor):
        return cursor + 2
    return cursor + 1 if cursor < len(text) else cursor


def insert_before_line(loc: Locator, row: int, text: str) -> Edit:
    """Insert whole lines above line ``row``; they end as the line they are put above ends (else the one before it):
    the file's first line ending (libcst's ``default_newline``) may be a lone ``\r``, which put above a blank
    ``\n`` line would join it into one ``\r\n`` and delete the blank line."""
    offset = loc.line_starts[row - 1]
    if text.endswith(("\r", "\n")):
        text = _LINE_BREAKS.sub(_ending_near(loc, row), text)
    return Edit(offset, offset, text)


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def _ending_near(loc: Locator, row: int) -> str:
    for candidate in (row, row - 1):
        if 1 <= candidate <= len(loc.line_starts):
            start = loc.line_starts[candidate - 1]
            end = loc.line_starts[candidate] if candidate < len(loc.line_starts) else len(loc.text)
            line = loc.text[start:end]
            ending = line[len(line.rstrip("\r\n")):]
            if ending:
                return ending
    return "\n"


def indentation_of_line(loc: Locator, row: int) -> str:
    """The blanks that indent the line, as a line inserted above it must start. A form feed among them is not
    indentation (Python's tokenizer starts counting columns again after it), so only the blanks after the last
    one are: ``"\\f    x = 1"`` is indented by four spaces."""
    line = loc.line_text(row)
    leading = line[: len(line) - len(line.lstrip(" \t\f"))]
    return leading[leading.rfind("\f") + 1 :]


def delete_span_or_line(loc: Locator, start: int, end: int) -> Edit:
    """Delete text; when nothing but blanks would remain on its line, delete the whole line."""
    text, starts = loc.text, loc.line_starts
    line_begin = starts[bisect.bisect_right(starts, start) - 1]  # Python's lines: a lone \r ends one too
    after_row = bisect.bisect_right(starts, end)
    line_end = starts[after_row] if after_row < len(starts) else len(text)
    before, after = text[line_begin:start], text[end:line_end]
    if not before.strip() and not after.strip():
        return Edit(line_begin, line_end, "")
    while start > line_begin and text[start - 1] in " \t":
        start -= 1
    return Edit(start, end, "")
