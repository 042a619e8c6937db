"""Source positions of nodes, computed only when a file has something to report, and only where it reports.

Positions come from a code-generation pass that counts characters (libcst prints a parsed module back to exactly
its source). That is the work libcst's ``PositionProvider`` does, minus its metadata visitor pass and its per-token
line splitting. Only the top-level statements that hold a reported node are printed: where each one starts in the
text follows from the line CPython's own parser gives its first token, less the blank and comment lines libcst
keeps in front of it, and the printed statement is checked against the text at that offset. When anything does
not line up, the whole module is printed instead; most files have no finding and pay nothing.
"""

from __future__ import annotations

import ast
import warnings

import libcst as cst
from libcst._nodes.internal import CodegenState

from .diagnostics import Location
from .text_positions import line_starts, location_in


class Locator:
    def __init__(self, module: cst.Module, text: str, index=None) -> None:
        self.module = module
        self.text = text
        self.index = index  # the module's NodeIndex: finds a node's top-level statement
        self._ranges: dict[int, tuple[int, int]] | None = None
        self._partial: dict[int, tuple[int, int]] = {}
        self._printed: set[int] = set()
        self._statement_starts: list[int] | None = None
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def _offset_ranges(self) -> dict[int, tuple[int, int]]:
        if self._ranges is None:
            state = _OffsetRecordingState(self.module.default_indent, self.module.default_newline)
            self.module._codegen(state)
            if state.offset == len(self.text):
                self._ranges = state.ranges
            else:  # never seen: the module does not print back to the text; take libcst's own positions
                self._ranges = self._ranges_from_libcst()
        return self._ranges

    def _ranges_from_libcst(self) -> dict[int, tuple[int, int]]:
        from libcst.metadata import MetadataWrapper, PositionProvider

        positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        starts = self.line_starts
        return {
            id(node): (starts[r.start.line - 1] + r.start.column, starts[r.end.line - 1] + r.end.column)
            for node, r in positions.items()
        }

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        """Character offsets of the node's first and one-past-last character (syntactic extent, as libcst's)."""
        if self._ranges is None:
            found = self._partial.get(id(node))
            if found is not None or self._print_statement_of(node):
                found = self._partial.get(id(node))
                if found is not None:
                    return found
        return self._offset_ranges()[id(node)]

    def _print_statement_of(self, node: cst.CSTNode) -> bool:
        """Record the ranges of the top-level statement holding ``node``; False when that cannot be done."""
        if self.index is None:
            return False
        top = node
        for ancestor in self.index.ancestors(node):
            if ancestor is self.module:
                break
            top = ancestor
        if top is self.module or id(top) in self._printed:
            return False
        self._printed.add(id(top))
        starts = self._top_level_starts()
        position = self._top_position.get(id(top)) if starts is not None else None
        if position is None:
            return False
        start = starts[position]
        state = _OffsetRecordingState(self.module.default_indent, self.module.default_newline)
        state.offset = start
        top._codegen(state)
        if self.text[start : state.offset] != "".join(state.tokens):
            return False
        self._partial.update(state.ranges)
        return True

    def _top_level_starts(self) -> list[int] | None:
        """Offset where each top-level statement's printed text begins (its leading blank and comment lines
        included), from the first-token lines of CPython's parse; None when the two parses do not pair up."""
        if self._statement_starts is not None:
            return self._statement_starts or None
        self._statement_starts = []
        self._top_position: dict[int, int] = {}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(self.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        body, used, starts = tree.body, 0, []
        line_starts = self.line_starts
        for position, statement in enumerate(self.module.body):
            if used >= len(body):
                return None
            first = body[used]
            used += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
            line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
            line -= len(statement.leading_lines)
            if not 1 <= line <= len(line_starts):
                return None
            starts.append(line_starts[line - 1])
            self._top_position[id(statement)] = position
        if used != len(body):
            return None
        self._statement_starts = starts
        return starts

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
