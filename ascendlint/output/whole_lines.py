"""A fix as one replacement of whole lines, the form review tools can offer as a one-click suggestion.

GitHub and GitLab apply a suggestion to the lines its comment covers, and reviewdog places a comment on the lines
of its first suggestion. A fix made of several edits (an inserted line and a renamed operand, say) must therefore
become one replacement that spans every line any of its edits touches: the text from the start of the first line
to the end of the last line's content (line breaks of the last line excluded), and the new text for those lines.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ..diagnostics import Edit
from ..text.text_positions import line_starts


def whole_line_edit(text: str, edits: Sequence[Edit]) -> Edit:
    """One edit equivalent to ``edits`` (applied together) that replaces complete lines.

    Its range starts at a line start and ends where the last touched line's content ends. When the edits only
    delete lines, a neighbouring line is included (a suggestion of no lines could not say where they went).
    """
    starts = line_starts(text)
    first = min(_rows(starts, e)[0] for e in edits)
    last = max(_rows(starts, e)[1] for e in edits)
    while True:
        begin = starts[first - 1]
        content_end, full_end = _content_end(text, starts, last), _full_end(text, starts, last)
        replaced = _apply(text[begin:full_end], edits, begin)
        ending = text[content_end:full_end]
        if not replaced and (first > 1 or last < len(starts)):
            first, last = (first - 1, last) if first > 1 else (first, last + 1)
            continue
        if ending and not replaced.endswith(ending) and last < len(starts):
            last += 1  # an edit removed the last line's break and joined the next line: take that line too
            continue
        content = replaced[: len(replaced) - len(ending)] if ending else replaced
        return Edit(begin, content_end, content)


def _rows(starts: list[int], edit: Edit) -> tuple[int, int]:
    """The 1-based lines an edit touches: an insertion at a line start touches that line; a range that ends at a
    line start (it takes the previous line's break) does not touch the line it ends at."""
    first = bisect.bisect_right(starts, edit.start)
    last = bisect.bisect_right(starts, edit.end)
    if edit.end > edit.start and last > first and starts[last - 1] == edit.end:
        last -= 1
    return first, last


def _full_end(text: str, starts: list[int], row: int) -> int:
    return starts[row] if row < len(starts) else len(text)


def _content_end(text: str, starts: list[int], row: int) -> int:
    end = _full_end(text, starts, row)
    if row < len(starts):  # strip the line's break: \r\n, \n or \r
        if text.endswith("\r\n", 0, end):
            return end - 2
        return end - 1
    return end


def _apply(segment: str, edits: Sequence[Edit], offset: int) -> str:
    parts, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        parts.append(segment[cursor : edit.start - offset])
        parts.append(edit.content)
        cursor = edit.end - offset
    parts.append(segment[cursor:])
    return "".join(parts)
