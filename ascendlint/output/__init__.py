"""Output formats. Each format is a small module registered by name; rules never know about them.

A format turns the run's findings into text. Text formats (full, concise) also print the human summary; machine
formats print only their document.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..diagnostics import Diagnostic
from ..text.lazy_regex import lazy


@dataclass
class RunReport:
    """What a format may show: the remaining findings and context about the run."""

    diagnostics: list[Diagnostic]
    sources: dict[str, str] = field(default_factory=dict)  # filename -> text, for code frames
    fixed_count: int = 0
    fix_mode: bool = False
    unsafe_fixes: bool = False
    show_fixes: bool = False
    fixed: list[Diagnostic] = field(default_factory=list)
    show_summary: bool = True  # False under --quiet: the findings alone
    failed_paths: int = 0  # paths that could not be linted: no "All checks passed!" then
    failures: list[tuple[str, str]] = field(default_factory=list)  # (path, why it could not be linted)
    color: bool = False  # ANSI colours in the text formats (full, concise) only; machine formats never have any
    unsafe_hint: bool = True  # unsafe fixes neither enabled nor refused: say how many wait (ruff's hint)
    fix_only: bool = False  # --fix-only: say what was fixed, never what remains

    def source_of(self, diagnostic: Diagnostic) -> str | None:
        """The text a finding's positions refer to (a notebook cell's own text for findings in notebooks)."""
        return self.sources.get(source_key(diagnostic.filename, diagnostic.cell))


def source_key(filename: str, cell: int | None = None) -> str:
    """The key of ``RunReport.sources``: the file, or one cell of a notebook."""
    return filename if cell is None else f"{filename}#cell{cell}"


Formatter = Callable[[RunReport], str]
_FORMATS: dict[str, Formatter] = {}
TEXT_FORMATS = {"full", "concise"}


def register(name: str) -> Callable[[Formatter], Formatter]:
    def decorate(function: Formatter) -> Formatter:
        _FORMATS[name] = function
        return function

    return decorate


# The built-in formats by name, and the module that registers each: a run imports only the format it prints
# (``tests/output/test_format_table.py`` keeps this table equal to what the modules register).
BUILTIN_FORMATS = {
    "full": "text", "concise": "text", "json": "json_format", "json-lines": "json_format", "sarif": "sarif",
    "rdjson": "rdjson", "github": "github", "junit": "junit", "grouped": "grouped", "gitlab": "gitlab",
}


def names() -> list[str]:
    return sorted({*BUILTIN_FORMATS, *_FORMATS})


def get(name: str) -> Formatter:
    """The format ``name``; all but those in RAW_FILENAMES see file names and messages as ``shown`` makes them."""
    if name not in _FORMATS and name in BUILTIN_FORMATS:
        importlib.import_module(f"{__name__}.{BUILTIN_FORMATS[name]}")  # registers it
    formatter = _FORMATS[name]
    if name in RAW_FILENAMES:
        return formatter
    return lambda report: formatter(showable(report))


# -- one representation of odd file names in every format ------------------------------------------------------
# A file name may hold bytes that are not UTF-8 (Python keeps them as lone surrogates, U+DC80-U+DCFF) or control
# characters (an escape sequence, a newline). Written as they are, they fail to encode, produce invalid UTF-8 or
# XML, break one-line messages or drive the terminal. Every format therefore shows such a character escaped as
# Python writes it in a string (``\xff`` for the undecodable byte 0xFF, ``\x1b``, ``\u2028``); SARIF, whose file
# names are URIs, percent-encodes the original bytes instead (``%FF``).
RAW_FILENAMES = {"sarif"}  # formats that encode file names themselves
# A backslash that would read as the start of one of those escapes is doubled, so that a name spelled
# ``bad\xff.py`` (a backslash, then ``xff``) and a name holding the byte 0xFF never print alike.
_UNSHOWABLE = lazy("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|\\\\(?=[xu\\\\])")
_UNSHOWABLE_IN_TEXT = lazy("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")  # keeps \t \n \r


def _escape(match: re.Match) -> str:
    if match.group() == "\\":
        return "\\\\"
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, pattern: re.Pattern = _UNSHOWABLE) -> str:
    """``text`` with undecodable bytes and control characters escaped (unchanged when it has none)."""
    return pattern.sub(_escape, text) if pattern.search(text) else text


def showable(report: RunReport) -> RunReport:
    """The report with file names as ``shown`` makes them, and messages too but for tabs and line breaks (the
    caller's objects are not changed)."""

    def one(diagnostic: Diagnostic) -> Diagnostic:
        filename, message = shown(diagnostic.filename), shown(diagnostic.message, _UNSHOWABLE_IN_TEXT)
        if filename is diagnostic.filename and message is diagnostic.message:
            return diagnostic
        return dataclasses.replace(diagnostic, filename=filename, message=message)

    return dataclasses.replace(
        report,
        diagnostics=[one(d) for d in report.diagnostics],
        fixed=[one(d) for d in report.fixed],
        sources={shown(name): text for name, text in report.sources.items()},
        failures=[(shown(path), shown(reason, _UNSHOWABLE_IN_TEXT)) for path, reason in report.failures],
    )


def sorted_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=Diagnostic.sort_key)
