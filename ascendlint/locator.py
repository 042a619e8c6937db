"""Source positions of nodes, computed only when a file has something to report.

libcst's position metadata costs a full code-generation pass, several times a walk; most files have no finding,
so positions are resolved lazily, once per file, the first time a rule's finding or fix needs them.
"""

from __future__ import annotations

import bisect

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .diagnostics import Location


class Locator:
    def __init__(self, module: cst.Module, text: str) -> None:
        self.module = module
        self.text = text
        self._positions = None
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            text = self.text
            index = text.find("\n")
            while index != -1:
                starts.append(index + 1)
                index = text.find("\n", index + 1)
            self._line_starts = starts
        return self._line_starts

    def _ranges(self):
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions

    def span(self, node: cst.CSTNode) -> tuple[Location, Location]:
        """1-based (row, column) of the node's first and one-past-last character."""
        code_range = self._ranges()[node]
        return (
            Location(code_range.start.line, code_range.start.column + 1),
            Location(code_range.end.line, code_range.end.column + 1),
        )

    def offset(self, location: Location) -> int:
        return self.line_starts[location.row - 1] + location.column - 1

    def location_of(self, offset: int) -> Location:
        row = bisect.bisect_right(self.line_starts, offset)
        return Location(row, offset - self.line_starts[row - 1] + 1)

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        start, end = self.span(node)
        return self.offset(start), self.offset(end)

    def line_text(self, row: int) -> str:
        starts = self.line_starts
        begin = starts[row - 1]
        end = starts[row] if row < len(starts) else len(self.text)
        return self.text[begin:end].rstrip("\r\n")

    @property
    def newline(self) -> str:
        return self.module.default_newline
