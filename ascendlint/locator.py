"""Source positions of nodes, computed only when a file has something to report, and only where it reports.

Positions come from a code-generation pass that counts characters (libcst prints a parsed module back to exactly
its source). That is the work libcst's ``PositionProvider`` does, minus its metadata visitor pass and its per-token
line splitting. Only the statement lines that hold a reported node are printed (a node in a compound statement's
header prints that whole statement): where a line starts in the text follows from the line CPython's own parser
gives its first token, less the blank and comment lines libcst keeps in front of it, the two trees being paired
statement by statement down the node's ancestors; the printed text is checked against the source at that
offset. When anything does not line up, the whole module is printed instead; most files have no finding and pay
nothing.
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
        self._tree = None  # CPython's parse of the text (False when it fails)
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
        """Record the ranges of the innermost statement line holding ``node`` (or, for a node in a compound
        statement's header, of its top-level statement); False when that cannot be done."""
        if self.index is None:
            return False
        chain = [a for a in self.index.ancestors(node)][::-1]  # module first
        chain.append(node)
        if not chain or chain[0] is not self.module:
            return False
        tree = self._ast()
        if tree is None:
            return False
        located = _locate(self.module, chain[1:], tree)
        if located is None:
            return False
        statement, first, indents = located
        if id(statement) in self._printed:
            return False
        self._printed.add(id(statement))
        line = first.lineno - len(statement.leading_lines)
        if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and first.decorator_list:
            line = min(line, first.decorator_list[0].lineno - len(statement.leading_lines))
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return False
        start = starts[line - 1]
        state = _OffsetRecordingState(self.module.default_indent, self.module.default_newline)
        state.indent_tokens = [indent if indent is not None else self.module.default_indent for indent in indents]
        state.offset = start
        statement._codegen(state)
        if self.text[start : state.offset] != "".join(state.tokens):
            return False
        self._partial.update(state.ranges)
        return True

    def _ast(self) -> ast.Module | None:
        if self._tree is False:
            return None
        if self._tree is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = False
                return None
        return self._tree

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


def _locate(module: cst.Module, chain: list, tree: ast.Module):
    """(statement to print, its first CPython statement, the indentation of its enclosing blocks) for the node at
    the end of ``chain`` (its ancestors, outermost first): the innermost statement line, or the outermost
    statement when the node sits in a compound statement's header. None when the two trees do not pair up."""
    statements, nodes, indents = module.body, tree.body, []
    found = None
    position = 0
    while position < len(chain):
        statement = chain[position]
        if statement not in statements:
            return found
        first = _paired(statements, nodes, statement)
        if first is None:
            return None
        if isinstance(statement, cst.SimpleStatementLine):
            return statement, first, indents
        if found is None:
            found = (statement, first, list(indents))  # the fallback: the whole compound statement
        inner = _inner_lists(statement, first, chain[position + 1 :])
        if inner is None:
            return found
        block, statements, nodes, skipped = inner
        indents = [*indents, block.indent]
        position += 1 + skipped
    return found


def _paired(statements, nodes, statement):
    """The CPython statement that begins ``statement`` (a statement line holds one per small statement)."""
    used = 0
    for candidate in statements:
        if used >= len(nodes):
            return None
        if candidate is statement:
            return nodes[used]
        used += len(candidate.body) if isinstance(candidate, cst.SimpleStatementLine) else 1
    return None


def _inner_lists(statement, first, rest):
    """The (block, libcst statements, CPython statements, chain nodes skipped) that the chain goes into next."""
    if not rest:
        return None
    child = rest[0]
    pairs = []
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.With)):
        pairs = [(statement.body, getattr(first, "body", None), 0)]
    elif isinstance(statement, (cst.For, cst.While)):
        pairs = [(statement.body, getattr(first, "body", None), 0)]
        if statement.orelse is not None:
            pairs.append((statement.orelse.body, getattr(first, "orelse", None), 1))
    elif isinstance(statement, cst.If):
        while True:  # walk an elif chain down to the branch that holds the chain's next node
            pairs = [(statement.body, getattr(first, "body", None), 0)]
            orelse = statement.orelse
            if isinstance(orelse, cst.If) and child is orelse and isinstance(first, ast.If) and first.orelse:
                rest, statement, first = rest[1:], orelse, first.orelse[0]
                if not rest:
                    return None
                child = rest[0]
                inner = _inner_lists(statement, first, rest)
                return None if inner is None else (*inner[:3], inner[3] + 1)
            if isinstance(orelse, cst.Else):
                pairs.append((orelse.body, getattr(first, "orelse", None), 1))
            break
    elif isinstance(statement, cst.Try):
        pairs = [(statement.body, getattr(first, "body", None), 0)]
        for handler, ast_handler in zip(statement.handlers, getattr(first, "handlers", ())):
            pairs.append((handler.body, ast_handler.body, 1))
        if statement.orelse is not None:
            pairs.append((statement.orelse.body, getattr(first, "orelse", None), 1))
        if statement.finalbody is not None:
            pairs.append((statement.finalbody.body, getattr(first, "finalbody", None), 1))
    for block, nodes, skipped in pairs:
        if nodes is None or not isinstance(block, cst.IndentedBlock):
            continue
        holder = rest[skipped] if skipped < len(rest) else None
        target = rest[0] if skipped == 0 else holder
        if skipped == 0 and target is block:
            return block, block.body, nodes, 1
        if skipped == 1 and len(rest) > 1 and rest[1] is block:
            return block, block.body, nodes, 2
    return None


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
