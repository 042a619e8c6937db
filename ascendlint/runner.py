"""Lint (and optionally fix) a set of files: read, decode, skip what cannot hold a kernel, lint, write back."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pathspec

from . import engine, fixes, selection
from .config import Settings, relative_to_root
from .diagnostics import Diagnostic
from .rule import Rule
from .source import SourceDecodeError, SourceText, atomic_write, decode_source


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    rejected_fixes: list[Diagnostic] = field(default_factory=list)
    diff: str = ""
    error: str | None = None  # the file could not be read or written: nothing about it is known
    text: str | None = None  # the (fixed) text, kept only when there are findings to show in context


@dataclass
class Options:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False


class Linter:
    """Settings resolved once per run; lints any number of files."""

    def __init__(self, rules: Sequence[type[Rule]], settings: Settings) -> None:
        self.rules = list(rules)
        self.settings = settings
        self._per_file = [
            (pathspec.GitIgnoreSpec.from_lines([glob]), codes) for glob, codes in settings.per_file_ignores.items()
        ]

    def rules_for(self, path: Path | None) -> list[type[Rule]]:
        if path is None or not self._per_file:
            return self.rules
        relative = relative_to_root(path, self.settings.root)
        ignored = [c for spec, codes in self._per_file if spec.match_file(relative) or spec.match_file(path.name)
                   for c in codes]
        return selection.without(self.rules, [c.upper() for c in ignored]) if ignored else self.rules

    def lint_source(self, text: str, filename: str, rules: Sequence[type[Rule]] | None = None) -> list[Diagnostic]:
        return engine.lint_text(text, filename, rules or self.rules, self.settings.rule_options)

    def process_bytes(self, data: bytes, filename: str, path: Path | None, options: Options) -> tuple[FileResult, bytes | None]:
        """Lint one file's bytes; returns the result and the new bytes when fixes changed the text."""
        result = FileResult(path=filename)
        if not engine.could_hold_kernel(data):
            return result, None
        rules = self.rules_for(path)
        try:
            source = decode_source(data)
        except SourceDecodeError as exc:
            if any(r.code == engine.SYNTAX_ERROR for r in rules):
                result.diagnostics = [engine.syntax_error_diagnostic(filename, f"cannot be decoded: {exc}", 1, 1, rules)]
            return result, None
        if not (options.fix or options.diff):
            result.diagnostics = self.lint_source(source.text, filename, rules)
            result.text = source.text if result.diagnostics else None
            return result, None
        outcome = fixes.fix_text(source.text, lambda t: self.lint_source(t, filename, rules), options.unsafe_fixes)
        result.diagnostics = outcome.remaining
        result.fixed = outcome.fixed
        result.rejected_fixes = outcome.rejected
        result.text = outcome.text if result.diagnostics else None
        if outcome.text == source.text:
            return result, None
        if options.diff:
            result.diff = unified_diff(source, outcome.text, filename)
        return result, source.encode(outcome.text)

    def process_path(self, path: Path, options: Options) -> FileResult:
        filename = str(path)
        try:
            data = path.read_bytes()
        except IsADirectoryError:
            return FileResult(path=filename, error="is a directory")
        except OSError as exc:
            return FileResult(path=filename, error=exc.strerror or str(exc))
        result, new_data = self.process_bytes(data, filename, path, options)
        if new_data is not None and options.fix and not options.diff:
            try:
                atomic_write(filename, new_data)
            except OSError as exc:
                result.error = f"could not write fixes: {exc.strerror or exc}"
                result.diagnostics.extend(result.fixed)
                result.fixed = []
        return result


def unified_diff(source: SourceText, new_text: str, filename: str) -> str:
    old_lines = source.text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    return "".join(difflib.unified_diff(old_lines, new_lines, fromfile=filename, tofile=filename))
