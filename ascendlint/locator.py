"""Source positions of nodes, computed only when a file has something to report.

Positions come from one code-generation pass that counts characters. That is the work libcst's
``PositionProvider`` does, minus its metadata visitor pass and its per-token line splitting, so it costs about half
as much; most files have no finding and pay nothing. A tree too deep for libcst's recursive printing (a chain of
some hundreds of parts) is printed by a loop instead (``codegen``), which needs no stack depth.

libcst prints almost every module back to exactly its source. The exception is a form feed at the start of a line
in an indented block, which it leaves out or moves: positions are then mapped through the text without form feeds. Should a module
print differently in any other way, positions fall back to the printed text's (row, column), which may be off;
every edit therefore carries the text the rule saw under its range (``original_text``), and a fix whose range
does not hold that text in the file is never applied.
"""

from __future__ import annotations

import bisect

import libcst as cst
from libcst._nodes.internal import CodegenState

from .codegen import generate
from .diagnostics import Location
from .text_positions import line_starts, location_in


class Locator:
    def __init__(self, module: cst.Module, text: str) -> None:
        self.module = module
        self.text = text
        self._ranges: dict[int, tuple[int, int]] | None = None
        self._line_starts: list[int] | None = None
        self._printed: str | None = None  # the tree printed back, kept only where it differs from the text
        self._mapping: _FormFeedsLeftOut | _SameRowAndColumn | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def _offset_ranges(self) -> dict[int, tuple[int, int]]:
        if self._ranges is None:
            state = self._printed_state()
            printed = "".join(state.tokens)
            if printed == self.text:
                self._ranges, self._printed = state.ranges, None
            else:
                self._printed = printed
                self._mapping = _FormFeedsLeftOut.between(printed, self.text) or _SameRowAndColumn(printed, self.text)
                to_text = self._mapping.to_text
                self._ranges = {
                    key: (to_text(start, True), max(to_text(start, True), to_text(end, False)))
                    for key, (start, end) in state.ranges.items()
                }
        return self._ranges

    def _printed_state(self) -> "_OffsetRecordingState":
        """libcst's own (recursive) printing, fastest; a tree too deep for it is printed by the iterative loop."""
        state = _OffsetRecordingState(self.module.default_indent, self.module.default_newline)
        try:
            self.module._codegen(state)
        except RecursionError:
            state = _OffsetRecordingState(self.module.default_indent, self.module.default_newline)
            generate(self.module, state)
        return state

    def original_text(self, start: int, end: int) -> str:
        """What the rules saw (the parsed tree, printed) under the text range [start, end).

        Equal to ``text[start:end]`` wherever positions are exact; an edit over a range where the two differ
        would change text no rule looked at.
        """
        self._offset_ranges()
        if self._printed is None:
            return self.text[start:end]
        to_printed = self._mapping.to_printed
        begin = to_printed(start, True)
        return self._printed[begin : max(begin, to_printed(end, False))]

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        """Character offsets of the node's first and one-past-last character (syntactic extent, as libcst's)."""
        return self._offset_ranges()[id(node)]

    def span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        """1-based (row, column) of the node's first and one-past-last character."""
        start, end = self.offsets(node)
        return self.location_of(start), self.location_of(end)

    def offset(self, location: Location) -> int:
        return self.line_starts[location.row - 1] + location.column - 1

    def location_of(self, offset: int) -> Location:
        return location_in(self.line_starts, offset)

    def line_text(self, row: int) -> str:
        starts = self.line_starts
        begin = starts[row - 1]
        end = starts[row] if row < len(starts) else len(self.text)
        return self.text[begin:end].rstrip("\r\n")

    @property
    def newline(self) -> str:
        return self.module.default_newline


class _FormFeedsLeftOut:
    """Offsets between the text and its printed tree when the two differ in form feeds only.

    libcst prints every line of an indented block with the block's indentation as it read it on the block's first
    line: form feeds that start a later line are left out, and those of the first line are repeated. Without form
    feeds the two texts are equal, so offsets map through that common form-feed-free text.
    """

    def __init__(self, printed: str, text: str) -> None:
        self.printed_feeds = _feeds(printed)  # offsets of form feeds in the printed text
        self.text_feeds = _feeds(text)
        self.printed_stripped = [offset - index for index, offset in enumerate(self.printed_feeds)]
        self.text_stripped = [offset - index for index, offset in enumerate(self.text_feeds)]

    @classmethod
    def between(cls, printed: str, text: str) -> "_FormFeedsLeftOut | None":
        if "\f" not in printed + text or printed.replace("\f", "") != text.replace("\f", ""):
            return None
        return cls(printed, text)

    def to_text(self, offset: int, is_start: bool) -> int:
        """A node starting at form feeds starts after them; one ending there ends before them."""
        return _through(offset, self.printed_feeds, self.text_stripped, is_start)

    def to_printed(self, offset: int, is_start: bool = True) -> int:
        return _through(offset, self.text_feeds, self.printed_stripped, is_start)


def _feeds(text: str) -> list[int]:
    found, at = [], text.find("\f")
    while at != -1:
        found.append(at)
        at = text.find("\f", at + 1)
    return found


def _through(offset: int, feeds: list[int], other_stripped: list[int], is_start: bool) -> int:
    stripped = offset - bisect.bisect_left(feeds, offset)
    search = bisect.bisect_right if is_start else bisect.bisect_left
    return stripped + search(other_stripped, stripped)


class _SameRowAndColumn:
    """Last resort (never seen): the printed text's (row, column) read in the real text, as libcst's positions."""

    def __init__(self, printed: str, text: str) -> None:
        self.printed_starts, self.text_starts = line_starts(printed), line_starts(text)
        self.printed_length, self.text_length = len(printed), len(text)

    def to_text(self, offset: int, is_start: bool) -> int:
        return _move(offset, self.printed_starts, self.text_starts, self.text_length)

    def to_printed(self, offset: int, is_start: bool = True) -> int:
        return _move(offset, self.text_starts, self.printed_starts, self.printed_length)


def _move(offset: int, starts: list[int], other_starts: list[int], other_length: int) -> int:
    row = bisect.bisect_right(starts, offset)
    if row > len(other_starts):
        return other_length
    return min(other_starts[row - 1] + offset - starts[row - 1], other_length)


class _OffsetRecordingState(CodegenState):
    """A codegen state that records every node's character range instead of (line, column) pairs."""

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.offset = 0
        self.ranges: dict[int, tuple[int, int]] = {}
        self.starts: list[int] = []

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.offset -= len(self.tokens.pop())

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        self.ranges.setdefault(id(node), (start, self.offset))  # a syntactic range recorded inside wins

    def record_syntactic_position(self, node, *, start_node=None, end_node=None) -> "_SyntacticRange":
        return _SyntacticRange(self, node, start_node, end_node)


class _SyntacticRange:
    """``with state.record_syntactic_position(...)``: a plain context manager (cheaper than a generator one)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _OffsetRecordingState, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is not None:
            return
        ranges = self.state.ranges
        start = ranges[id(self.start_node)][0] if self.start_node is not None else self.start
        end = ranges[id(self.end_node)][1] if self.end_node is not None else self.state.offset
        ranges[id(self.node)] = (start, end)
