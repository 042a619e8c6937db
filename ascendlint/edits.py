"""Building blocks rules use to describe fixes as text edits (rules never write files or apply edits)."""

from __future__ import annotations

import bisect
import re

import libcst as cst

from .diagnostics import Edit
from .locator import Locator


def code_of(module: cst.Module, node: cst.CSTNode | str) -> str:
    return node if isinstance(node, str) else module.code_for_node(node)


def replace(loc: Locator, node: cst.CSTNode, replacement: cst.CSTNode | str) -> Edit:
    """Replace ``node``; the edit remembers the node's code as the rule saw it (checked before it is applied)."""
    start, end = loc.offsets(node)
    return Edit(start, end, code_of(loc.module, replacement), loc.original_text(start, end))


def delete_argument(loc: Locator, args: list, index: int) -> Edit:
    """Delete ``args[index]`` of a call (or element of a dict/list) together with the separator it owns.

    Deleting from this item's start to the next item's start keeps the rest of the call formatted; the last item
    is deleted from the end of the previous one.
    """
    start, end = loc.offsets(args[index])
    if index + 1 < len(args):
        next_start, _ = loc.offsets(args[index + 1])
        return Edit(start, next_start, "")
    if index > 0:
        # An argument's span covers its own parentheses but not the comma it owns: start right after it.
        _, previous_end = loc.offsets(args[index - 1])
        return Edit(previous_end, end + _trailing_comma_length(loc.text, end), "")
    return Edit(start, end + _trailing_comma_length(loc.text, end), "")


def _trailing_comma_length(text: str, offset: int) -> int:
    """A lone last argument may carry a trailing comma: delete it with the argument."""
    cursor = offset
    while cursor < len(text) and text[cursor] in " \t":
        cursor += 1
    return cursor + 1 - offset if cursor < len(text) and text[cursor] == "," else 0


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
