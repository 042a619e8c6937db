"""Output formats. Each format is a small module registered by name; rules never know about them.

A format turns the run's findings into text. Text formats (full, concise) also print the human summary; machine
formats print only their document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..diagnostics import Diagnostic


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


def names() -> list[str]:
    _load_builtin()
    return sorted(_FORMATS)


def get(name: str) -> Formatter:
    _load_builtin()
    return _FORMATS[name]


_builtin_loaded = False


def _load_builtin() -> None:
    """Import the built-in formats once (importing one format module directly must not hide the others)."""
    global _builtin_loaded
    if _builtin_loaded:
        return
    _builtin_loaded = True
    from . import json_format, text  # noqa: F401  (importing registers the formats)
    for optional in ("sarif", "rdjson", "github", "junit", "grouped", "gitlab"):
        try:
            __import__(f"{__name__}.{optional}")
        except ImportError:
            continue


def sorted_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=Diagnostic.sort_key)
