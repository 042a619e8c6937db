"""Source positions of nodes, computed only when a file has something to report, and only where it reports.

Positions come from a code-generation pass that counts characters. That is the work libcst's ``PositionProvider``
does, minus its metadata visitor pass and its per-token line splitting. Only the statement lines that hold a
reported node are printed (a node in a compound statement's header prints that whole statement): where a line
starts in the text follows from the line CPython's own parser gives its first token, less the blank and comment
lines libcst keeps in front of it, the two trees being paired statement by statement down the node's ancestors;
the printed text is checked against the source at that offset. When anything does not line up, the whole module
is printed; most files have no finding and pay nothing. A tree too deep for libcst's recursive printing (a chain
of some hundreds of parts) is printed by a loop instead (``codegen``), which needs no stack depth.

libcst prints almost every module back to exactly its source. The exception is a form feed at the start of a line
in an indented block, which it leaves out or moves: positions are then mapped through the text without form feeds.
Should a module print differently in any other way, positions fall back to the printed text's (row, column), which
may be off; every edit therefore carries the text the rule saw under its range (``original_text``), and a fix
whose range does not hold that text in the file is never applied.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings

import libcst as cst
from libcst._nodes.internal import CodegenState

from .codegen import generate
from ..diagnostics import Edit, Location
from .lazy_regex import lazy
from .text_positions import line_starts, location_in


class Locator:
    def __init__(self, module: cst.Module, text: str, index=None) -> None:
        self.module = module
        self.text = text
        self.index = index  # the module's NodeIndex: finds a node's enclosing statements
        self._ranges: dict[int, tuple[int, int]] | None = None
        self._partial: dict[int, tuple[int, int]] = {}
        self._exact_spans: list[tuple[int, int]] = []  # text ranges of statements printed back exactly
        self._printed_statements: set[int] = set()
        self._tree = None  # CPython's parse of the text (False when it fails)
        self._line_starts: list[int] | None = None
        self._printed: str | None = None  # the tree printed back, kept only where it differs from the text
        self._mapping: _FormFeedsLeftOut | _SameRowAndColumn | None = None
        self._containers: dict[int, cst.CSTNode] = {}  # node the index does not hold -> an indexed node around it
        self._pairings: dict[int, tuple] = {}  # id of a statement list -> (the list, its statements' CPython firsts)

    def place_within(self, node: cst.CSTNode, container: cst.CSTNode) -> None:
        """Say where a node the index does not hold lies (a comment inside a call), so that printing the
        container's statement locates it instead of printing the whole module."""
        self._containers[id(node)] = container

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
        if self._ranges is None and any(a <= start and end <= b for a, b in self._exact_spans):
            return self.text[start:end]
        self._offset_ranges()
        if self._printed is None:
            return self.text[start:end]
        to_printed = self._mapping.to_printed
        begin = to_printed(start, True)
        return self._printed[begin : max(begin, to_printed(end, False))]

    def through_form_feeds(self, edit: Edit) -> Edit:
        """``edit`` narrowed to the part it changes, when its range holds form feeds the parsed tree has not (a
        tree parsed without the form feeds that start lines, or printed without some of them) but is otherwise
        the code the rule saw. The form feeds outside that part stay in the file; one inside it goes with the
        text it stood in (a deleted argument's line, an index wrapped in a cast). Any other difference is left
        for the fixer to refuse."""
        found = self.text[edit.start : edit.end]
        original = edit.original
        if original is None or found == original or not isinstance(self._mapping, _FormFeedsLeftOut):
            return edit
        if found.replace("\f", "") != original.replace("\f", ""):
            return edit
        content = edit.content
        prefix = _common_prefix(original, content)
        suffix = _common_prefix(original[prefix:][::-1], content[prefix:][::-1])
        start = edit.start + _past_bare(found, len(original[:prefix].replace("\f", "")), True)
        end = edit.start + _past_bare(found, len(original[: len(original) - suffix].replace("\f", "")), False)
        end = max(start, end)
        return Edit(start, end, content[prefix : len(content) - suffix], self.text[start:end])

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
        container = self._containers.get(id(node)) if not chain else None
        if container is not None:
            chain = [a for a in self.index.ancestors(container)][::-1]
            node = container
        chain.append(node)
        if not chain or chain[0] is not self.module:
            return False
        tree = self._ast()
        if tree is None:
            return False
        located = _locate(self.module, chain[1:], tree, self._pairings)
        if located is None:
            return False
        statement, first, indents = located
        if id(statement) in self._printed_statements:
            return False
        self._printed_statements.add(id(statement))
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
        try:
            statement._codegen(state)
        except RecursionError:
            return False  # the whole module is printed by the loop instead
        if self.text[start : state.offset] != "".join(state.tokens):
            return False
        self._partial.update(state.ranges)
        self._exact_spans.append((start, state.offset))
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


def _locate(module: cst.Module, chain: list, tree: ast.Module, pairings: dict[int, tuple]):
    """(statement to print, its first CPython statement, the indentation of its enclosing blocks) for the node at
    the end of ``chain`` (its ancestors, outermost first): the innermost statement line, or the outermost
    statement when the node sits in a compound statement's header. None when the two trees do not pair up.
    ``pairings`` keeps each statement list's pairing for the next node located in the same module."""
    statements, nodes, indents = module.body, tree.body, []
    found = None
    position = 0
    while position < len(chain):
        statement = chain[position]
        paired = _pairing(pairings, statements, nodes)
        if id(statement) not in paired:
            return found
        first = paired[id(statement)]
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


def _pairing(pairings: dict[int, tuple], statements, nodes) -> dict[int, ast.stmt | None]:
    """id of each libcst statement of a list -> the CPython statement that begins it (a statement line holds one
    per small statement), None past the end of ``nodes``. Built once per list, so that locating every finding of
    a long module stays linear in its statements."""
    known = pairings.get(id(statements))
    if known is not None:
        return known[1]
    paired: dict[int, ast.stmt | None] = {}
    used = 0
    for candidate in statements:
        paired[id(candidate)] = nodes[used] if used < len(nodes) else None
        used += len(candidate.body) if isinstance(candidate, cst.SimpleStatementLine) else 1
    pairings[id(statements)] = (statements, paired)  # the list is kept, so its id stays its own
    return paired


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


class _FormFeedsLeftOut:
    """Offsets between the text and its printed tree when the two differ in form feeds only.

    libcst prints every line of an indented block with the block's indentation as it read it on the block's first
    line: form feeds that start a later line are left out, and those of the first line are repeated (with any blanks
    before them). Without those the two texts are equal, so offsets map through that common text.
    """

    def __init__(self, printed_feeds: list[int], text_feeds: list[int]) -> None:
        self.printed_feeds = printed_feeds  # offsets of form feeds (and blanks before them) in the printed text
        self.text_feeds = text_feeds
        self.printed_stripped = [offset - index for index, offset in enumerate(self.printed_feeds)]
        self.text_stripped = [offset - index for index, offset in enumerate(self.text_feeds)]

    @classmethod
    def between(cls, printed: str, text: str) -> "_FormFeedsLeftOut | None":
        """None unless the two differ in form feeds only, or in that and the text's last line break (libcst drops
        a final lone ``\r``); every offset into the printed text then maps through the common text."""
        if "\f" not in printed + text:
            return None
        printed_feeds, text_feeds = _feeds(printed), _feeds(text)
        bare_printed, bare_text = _without(printed, printed_feeds), _without(text, text_feeds)
        if bare_printed != bare_text and not (
            bare_text.startswith(bare_printed) and bare_text[len(bare_printed):] in ("\r", "\n", "\r\n")
        ):
            return None
        return cls(printed_feeds, text_feeds)

    def to_text(self, offset: int, is_start: bool) -> int:
        """A node starting at form feeds starts after them; one ending there ends before them."""
        return _through(offset, self.printed_feeds, self.text_stripped, is_start)

    def to_printed(self, offset: int, is_start: bool = True) -> int:
        return _through(offset, self.text_feeds, self.printed_stripped, is_start)


def _common_prefix(a: str, b: str) -> int:
    size = 0
    for x, y in zip(a, b):
        if x != y:
            break
        size += 1
    return size


def _past_bare(text: str, count: int, skip_feeds: bool) -> int:
    """Offset in ``text`` after ``count`` characters other than form feeds (and, with ``skip_feeds``, after the
    form feeds that follow them)."""
    at = 0
    while count or (skip_feeds and at < len(text) and text[at] == "\f"):
        if at >= len(text):
            break
        if text[at] != "\f":
            count -= 1
        at += 1
    return at


def _feeds(text: str) -> list[int]:
    """Offsets of the form feeds in ``text``, and of the blanks before a form feed in a line's indentation: the
    tokenizer starts counting the indentation again after a form feed, and libcst repeats the first line's
    indentation, blanks and form feeds included, on every line of a block (``"\\f \\f    "``)."""
    found, at = [], text.find("\f")
    while at != -1:
        found.append(at)
        at = text.find("\f", at + 1)
    for match in _BLANKS_BEFORE_A_FEED.finditer(text):
        found.extend(at for at in range(match.start(), match.end()) if text[at] != "\f")
    return sorted(found)


_BLANKS_BEFORE_A_FEED = lazy(r"(?:^|(?<=[\r\n]))[ \t\f]*\f")


def _without(text: str, offsets: list[int]) -> str:
    """``text`` without the characters at ``offsets`` (sorted)."""
    kept, previous = [], 0
    for at in offsets:
        kept.append(text[previous:at])
        previous = at + 1
    kept.append(text[previous:])
    return "".join(kept)


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


def printed_offsets(module: cst.Module) -> tuple[str, dict[int, tuple[int, int]]]:
    """The module printed back, and each node's character range in that text (by ``id``), in one printing."""
    state = _OffsetRecordingState(module.default_indent, module.default_newline)
    try:
        module._codegen(state)
    except RecursionError:
        state = _OffsetRecordingState(module.default_indent, module.default_newline)
        generate(module, state)
    return "".join(state.tokens), state.ranges


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
