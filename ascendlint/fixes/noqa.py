"""Suppression comments: ``# noqa``, ``# noqa: ASC101, ASC2`` on the reported line, ``# ascendlint: skip-file``.

As in ruff, a finding on a line that ends inside a multi-line string, or that a backslash continues, is
suppressed at the end of that string or continuation: the first line where a comment can stand
(``statement_rows``).

A code is letters followed by digits (``ASC101``, ``E501``) or the bare ``ASC`` prefix; text after the codes is
free-form (``# noqa: ASC301 - the hazard under test``). ``# noqa:`` followed by no code is a bare ``# noqa``.
This module also finds the directives a run did not need (ASC003) and rewrites directives (ASC003's fix and
``--add-noqa``); it only ever touches real comment tokens, never text inside strings.
"""

from __future__ import annotations

import bisect
import re
import tokenize
from dataclasses import dataclass
from typing import Callable, Iterable

from ..text.text_positions import generate_tokens, line_starts
from ..text.lazy_regex import lazy

_CODE = r"(?:[A-Z]+[0-9]+|ASC)\b"
_NOQA = lazy(
    rf"#\s*noqa(?::[\s]?(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?",
    re.IGNORECASE,
)
# a line starts at the text's start or after any of \n, \r\n, \r (a lone \r ends a line for Python too)
_SKIP_FILE = lazy(r"(?:^|(?<=\r))[ \t\f]*(#)[ \t]*ascendlint:[ \t]*skip-file[ \t]*(?=[\r\n]|\Z)", re.MULTILINE)
OUR_PREFIX = "ASC"


def skips_file(text: str) -> bool:
    """A ``# ascendlint: skip-file`` line that is a real comment (not a line of a docstring or other string)."""
    candidates = [match.start(1) for match in _SKIP_FILE.finditer(text)]
    if not candidates:
        return False
    starts = line_starts(text)
    wanted = {(bisect.bisect_right(starts, offset), offset - starts[bisect.bisect_right(starts, offset) - 1])
              for offset in candidates}
    last_row = max(row for row, _ in wanted)
    try:
        for token in generate_tokens(text):
            if token.start[0] > last_row:
                return False
            if token.type == tokenize.COMMENT and token.start in wanted:
                return True
    except (tokenize.TokenError, SyntaxError):
        return True  # the text cannot be tokenized up to the directive: take the line at its word
    return False


_FILE_NOQA = lazy(rf"(?:^|(?<=\r))[ \t\f]*(#)[ \t]*ascendlint:[ \t]*noqa(?::[ \t]*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?"
                  r"[ \t]*(?=[\r\n#]|\Z)", re.MULTILINE | re.IGNORECASE)


def file_exemption(text: str) -> tuple[str, ...] | None:
    """ruff's file-level exemption, spelled ``# ascendlint: noqa`` (the whole file, like ``skip-file``) or
    ``# ascendlint: noqa: ASC101, ASC2`` (those codes, everywhere in the file), on a line of its own that is a
    real comment. None: no exemption; (): the whole file; else the codes or prefixes."""
    found: dict[tuple[int, int], tuple[str, ...]] = {}
    starts = None
    for match in _FILE_NOQA.finditer(text):
        if starts is None:
            starts = line_starts(text)
        offset = match.start(1)
        row = bisect.bisect_right(starts, offset)
        codes = match.group("codes")
        found[(row, offset - starts[row - 1])] = _split_codes(codes) if codes else ()
    if not found:
        return None
    last_row = max(row for row, _ in found)
    exempt: set[str] = set()
    try:
        for token in generate_tokens(text):
            if token.start[0] > last_row:
                break
            if token.type == tokenize.COMMENT and token.start in found:
                codes = found[token.start]
                if not codes:
                    return ()
                exempt.update(codes)
    except (tokenize.TokenError, SyntaxError):
        pass
    return tuple(sorted(exempt)) if exempt else None


def noqa_codes(line: str) -> tuple[str, ...] | None:
    """None: no suppression; (): bare ``# noqa``; else the listed codes or prefixes."""
    if "#" not in line:
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return ()
    return _split_codes(codes)


def _split_codes(codes: str) -> tuple[str, ...]:
    return tuple(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)


def suppressing_code(code: str, line: str) -> str | None:
    """The listed code that suppresses ``code`` on ``line`` ("" for a bare ``# noqa``), or None."""
    codes = noqa_codes(line)
    if codes is None:
        return None
    if not codes:
        return ""
    return next((c for c in codes if code.startswith(c)), None)


def is_suppressed(code: str, line: str) -> bool:
    return suppressing_code(code, line) is not None


def statement_rows(text: str) -> dict[int, int]:
    """Row -> the row its ``# noqa`` goes on, for the rows that cannot end in a comment: every row of a
    multi-line string (f-strings too) and of a backslash continuation maps to the last row of that string or
    continuation; ranges that touch are merged (a continuation that ends where a multi-line string starts).
    Rows not in the map take their own ``# noqa``."""
    spans: list[tuple[int, int]] = []
    fstring_starts: list[int] = []
    try:
        for token in generate_tokens(text):
            name = tokenize.tok_name.get(token.type, "")
            if name == "FSTRING_START":
                fstring_starts.append(token.start[0])
            elif name == "FSTRING_END" and fstring_starts:
                first = fstring_starts.pop()
                if token.end[0] > first:
                    spans.append((first, token.end[0]))
            elif token.start[0] != token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                spans.append((token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return {}
    inside = {row for first, last in spans for row in range(first + 1, last + 1)}
    starts = line_starts(text)
    for row in range(1, len(starts) + 1):
        end = starts[row] if row < len(starts) else len(text)
        if row not in inside and text[starts[row - 1] : end].rstrip("\r\n").endswith("\\"):
            spans.append((row, row + 1))  # a backslash inside a string continues the string, not the line
    mapping: dict[int, int] = {}
    for first, last in _merged(spans):
        for row in range(first, last):
            mapping[row] = last
    return mapping


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return [(first, last) for first, last in merged]


# -- directives as comment tokens --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Directive:
    """A ``# noqa`` inside one comment token. Offsets are character offsets into the whole text."""

    row: int
    comment_start: int
    comment_end: int
    comment: str
    match_start: int  # where the directive starts within ``comment``
    match_end: int
    codes: tuple[str, ...]  # () when no code is listed

    @property
    def start(self) -> int:
        return self.comment_start + self.match_start

    @property
    def end(self) -> int:
        return self.comment_start + self.match_end


@dataclass(frozen=True)
class LineFacts:
    """What a rewrite needs to know about a text: comment tokens by row, rows whose end is not plain code."""

    line_starts: list[int]
    comments: dict[int, tuple[int, int, str]]  # row -> (start offset, end offset, text)
    unsafe_rows: frozenset[int]  # the line ends inside a string, or continues with a backslash


def scan(text: str) -> LineFacts:
    """Tokenize once: comments, and the rows where appending a comment would change the code."""
    starts = line_starts(text)
    comments: dict[int, tuple[int, int, str]] = {}
    unsafe: set[int] = set()
    try:
        for token in generate_tokens(text):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                begin = starts[row - 1] + column
                comments[row] = (begin, begin + len(token.string), token.string)
            elif token.start[0] != token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                unsafe.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return LineFacts(starts, comments, frozenset(range(1, len(starts) + 1)))
    for row in range(1, len(starts) + 1):
        end = starts[row] if row < len(starts) else len(text)
        if text[starts[row - 1] : end].rstrip("\r\n").endswith("\\"):
            unsafe.add(row)
    return LineFacts(starts, comments, frozenset(unsafe))


def directives(facts: LineFacts) -> list[Directive]:
    found = []
    for row, (start, end, comment) in sorted(facts.comments.items()):
        match = _NOQA.search(comment)
        if match is None:
            continue
        codes = _split_codes(match.group("codes")) if match.group("codes") else ()
        found.append(Directive(row, start, end, comment, match.start(), match.end(), codes))
    return found


# -- rewriting a directive ---------------------------------------------------------------------------------------


def with_codes(directive: Directive, codes: Iterable[str]) -> str:
    """The comment text with the directive listing ``codes`` instead ("" when no code and no other text is left)."""
    codes = list(codes)
    before = directive.comment[: directive.match_start]
    after = directive.comment[directive.match_end :]
    if codes:
        return f"{before}# noqa: {', '.join(codes)}{after}"
    after = after.lstrip().lstrip(",;:").strip()  # `# noqa: ASC101, - note`: the separator goes with the codes
    rest = f"{before.rstrip()} {after}".strip()
    if not rest or rest.rstrip("#, ;:").strip() == "":
        return ""
    return rest if rest.startswith("#") else f"# {rest.lstrip('# ')}"


# -- unused directives (ASC003) ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnusedCodes:
    directive: Directive
    unused: tuple[str, ...]
    unknown: tuple[str, ...]  # the subset of ``unused`` that names no known rule
    kept: tuple[str, ...]  # what the directive lists once the unused codes are removed


def may_have_unused(text: str, used: set[tuple[int, str]]) -> bool:
    """A cheap first pass over the raw text: is any listed ASC code not in ``used``? (No tokenizing.)"""
    starts = None
    for match in _NOQA.finditer(text):
        codes = match.group("codes")
        if not codes or OUR_PREFIX not in codes.upper():
            continue
        if starts is None:
            starts = line_starts(text)
        row = bisect.bisect_right(starts, match.start())
        if any(c.startswith(OUR_PREFIX) and (row, c) not in used for c in _split_codes(codes)):
            return True
    return False


def unused_codes(
    facts: LineFacts,
    used: set[tuple[int, str]],
    known_codes: Iterable[str],
    exempt: Callable[[str], bool] = lambda code: False,
) -> list[UnusedCodes]:
    """Directives listing ascendlint codes that suppressed nothing on their line.

    ``used`` holds (row, listed code) pairs that suppressed a finding. Codes of other tools and bare ``# noqa``
    are never reported; ``exempt(code)`` spares codes whose findings could not be known (a crashed rule).
    """
    known = tuple(known_codes)
    result = []
    for directive in directives(facts):
        unused = []
        for code in directive.codes:
            if not code.startswith(OUR_PREFIX) or (directive.row, code) in used or exempt(code):
                continue
            unused.append(code)
        if unused:
            unknown = tuple(c for c in unused if not any(k.startswith(c) for k in known))
            kept = tuple(c for c in directive.codes if c not in unused)
            result.append(UnusedCodes(directive, tuple(unused), unknown, kept))
    return result
