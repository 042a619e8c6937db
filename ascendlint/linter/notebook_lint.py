"""Linting and fixing one notebook with a ``runner.Linter``: the engine sees the virtual text, results come back
in cell coordinates, and fixed cells are written into the notebook (see ``notebook``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

from ..diagnostics import Diagnostic
from .file_result import FileResult, Options
from ..files.source import content_digest

if TYPE_CHECKING:
    from . import notebook


class Linter(Protocol):
    """What notebook support asks of ``runner.Linter`` (named here so that this module never imports the runner,
    which imports it)."""

    def rules_for(self, path: Path | None) -> list: ...

    def lint_source(self, text: str, filename: str, rules: Sequence | None = None, unit=None) -> list[Diagnostic]: ...

    def _classes(self, rules: Sequence) -> list: ...

SUFFIX = ".ipynb"


def is_notebook(filename: str, path: Path | None) -> bool:
    return (path is not None and path.suffix == SUFFIX) or filename.endswith(SUFFIX)


def process_notebook(
    linter: Linter, data: bytes, filename: str, path: Path | None, options: Options
) -> tuple[FileResult, bytes | None]:
    from . import notebook  # notebook support loads with the first notebook

    result = FileResult(path=filename)
    rules = linter.rules_for(path)
    try:
        book = notebook.read(data)
    except notebook.NotebookError as exc:
        result.diagnostics = _unreadable(filename, str(exc), linter, rules)
        return result, None
    if book is None or not book.cells:
        return result, None

    def lint(text: str) -> list[Diagnostic]:
        return linter.lint_source(text, filename, rules)

    if not (options.fix or options.diff):
        result.diagnostics = [book.map_diagnostic(d) for d in lint(book.text)]
        result.sources = book.cell_sources(filename) if result.diagnostics else {}
        return result, None

    from .. import fixes

    outcome = fixes.fix_text(book.text, lint, options.unsafe_fixes)
    result.fixed = [book.map_diagnostic(d) for d in outcome.fixed]
    result.rejected_fixes = [book.map_diagnostic(d) for d in outcome.rejected]
    if outcome.text == book.text:
        result.diagnostics = [book.map_diagnostic(d) for d in outcome.remaining]
        result.sources = book.cell_sources(filename) if result.diagnostics else {}
        return result, None
    try:
        fixed = book.with_text(outcome.text)
        new_data = fixed.to_bytes()
    except notebook.NotebookError as exc:
        result.error = str(exc)
        result.diagnostics = [book.map_diagnostic(d) for d in lint(book.text)]
        result.fixed = []
        return result, None
    result.diagnostics = [fixed.map_diagnostic(d) for d in outcome.remaining]
    result.sources = fixed.cell_sources(filename) if result.diagnostics else {}
    if options.diff:
        result.diff = cell_diff(book, fixed, filename)
    result.source_digest = content_digest(data)
    return result, new_data


def cell_diff(before: notebook.Notebook, after: notebook.Notebook, filename: str) -> str:
    """A unified diff per changed cell, named ``file:cell N`` as ruff names notebook positions."""
    import difflib  # only for --diff

    old, new = before.cell_texts(), after.cell_texts()
    parts = []
    for number in sorted(old):
        if old[number] == new.get(number):
            continue
        name = f"{filename}:cell {number}"
        parts.extend(difflib.unified_diff(_keepends(old[number]), _keepends(new.get(number, "")),
                                          fromfile=name, tofile=name))
    return "".join(parts)


def _keepends(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def _unreadable(filename: str, reason: str, linter: "Linter", rules) -> list[Diagnostic]:
    from . import engine

    if not any(r.code == engine.SYNTAX_ERROR for r in rules):
        return []
    classes = linter._classes(rules)
    return [engine.syntax_error_diagnostic(filename, f"cannot be read as a notebook: {reason}", 1, 1, classes)]
