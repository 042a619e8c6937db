"""Lint (and optionally fix) a set of files: read, decode, skip what cannot hold a kernel, lint, write back."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Sequence, Union

from ..workspace import selection
from .cache import ResultCache, content_key, rules_fingerprint
from ..workspace.settings import Settings, relative_to_root
from ..diagnostics import Diagnostic
from .file_result import FileResult, Options
from .notebook_lint import is_notebook, process_notebook
from ..files.prefilter import could_hold_kernel
from ..catalog.rule_index import RuleInfo, rule_classes
from ..text.text_positions import source_lines
from ..files.user_input import round_trips
from ..files.source import (
    SourceDecodeError,
    SourceText,
    atomic_write,
    content_digest,
    decode_source,
    read_source_bytes,
)

if TYPE_CHECKING:
    from ..analysis.project import ModuleInProject
    from ..rule import Rule


RuleLike = Union[type["Rule"], RuleInfo]  # a rule class, or its index entry (classes load when first needed)


class Linter:
    """Settings resolved once per run; lints any number of files."""

    def __init__(self, rules: Sequence[RuleLike], settings: Settings, cache: ResultCache | None = None,
                 lint_cuda_only: bool | None = None, unfixable: Sequence[str] = (), ignore_noqa: bool = False,
                 noqa_kept: Sequence[str] = ()) -> None:
        self.rules = list(rules)
        self.settings = settings
        self.cache = cache
        # Ascend rules in CUDA-only modules: the setting, unless the command line says otherwise.
        self.lint_cuda_only = settings.lint_cuda_only if lint_cuda_only is None else lint_cuda_only
        self.unfixable = tuple(code.upper() for code in unfixable)  # ``--unfixable``: these codes offer no fix
        self.ignore_noqa = ignore_noqa  # ``--ignore-noqa``: every finding is reported, whatever the comments say
        # codes whose `# noqa` are never stale here: rules the project enables that this run (an editor) does not
        self.noqa_kept = tuple(sorted(noqa_kept))
        self._fingerprints: dict[tuple[str, ...], str] = {}
        self._loaded: dict[tuple[str, ...], list] = {}
        self._relative: dict[Path, str] = {}  # each file's path relative to the root, worked out once
        self._rules_of: dict[Path, list[RuleLike]] = {}  # each file's rules after per-file-ignores
        self._per_file = []
        if settings.per_file_ignores:
            from ..files.ignore_patterns import compile_spec  # only for per-file-ignores

            self._per_file = [(compile_spec([glob]), codes) for glob, codes in settings.per_file_ignores.items()]

    def bind(self, path: Path, relative: str) -> None:
        """What discovery found for a file: its path relative to the root of these settings."""
        self._relative[path] = relative

    def relative_path(self, path: Path) -> str:
        found = self._relative.get(path)
        if found is None:
            found = self._relative[path] = relative_to_root(path, self.settings.root)
        return found

    def rules_for(self, path: Path | None) -> list[RuleLike]:
        if path is None or not self._per_file:
            return self.rules
        found = self._rules_of.get(path)
        if found is None:
            relative = self.relative_path(path)
            ignored = [c for spec, codes in self._per_file if spec.match_file(relative) or spec.match_file(path.name)
                       for c in codes]
            found = selection.without(self.rules, [c.upper() for c in ignored]) if ignored else self.rules
            self._rules_of[path] = found
        return found

    def lint_source(self, text: str, filename: str, rules: Sequence[RuleLike] | None = None,
                    unit: "ModuleInProject | None" = None) -> list[Diagnostic]:
        """``unit``: lint the text as a module of the tree (see ``tree_order``), not alone."""
        from . import engine

        chosen = self.rules if rules is None else rules  # an empty list is a rule set: per-file-ignores of every rule
        found = engine.lint_text(text, filename, self._classes(chosen), self.settings.rule_options, project=unit,
                                 tree_path=self.tree_path(filename), lint_cuda_only=self.lint_cuda_only,
                                 ignore_noqa=self.ignore_noqa, noqa_kept=self.noqa_kept)
        if self.unfixable:  # ruff's meaning: still reported, never fixed (nor counted fixable)
            for diagnostic in found:
                if diagnostic.fix is not None and diagnostic.code.startswith(self.unfixable):
                    diagnostic.fix = None
        return found

    def tree_path(self, filename: str) -> str:
        """The file's path relative to the project root: where the CUDA-only decision looks for NPU folders."""
        return filename if filename == "-" else self.relative_path(Path(filename))

    def platform_of(self, text: str, filename: str, complete: bool = False):
        """How the engine treats this text: ``analysis.platform.Platform`` (CUDA-only or not, and why), or None
        when CUDA-only modules are linted anyway."""
        if self.lint_cuda_only:
            return None
        from ..analysis import platform

        return platform.classify(text, self.tree_path(filename), complete)

    def platform_of_data(self, path: Path, data: bytes, complete: bool = False):
        """``platform_of`` for a file's bytes, read as a run reads them (None also when they cannot hold a kernel
        or be decoded: such a file is not linted as a module at all)."""
        if self.lint_cuda_only or not could_hold_kernel(data):
            return None
        if is_notebook(str(path), path):
            from . import notebook

            try:
                book = notebook.read(data)
            except notebook.NotebookError:
                return None
            return self.platform_of(book.text, str(path), complete) if book is not None and book.cells else None
        try:
            return self.platform_of(decode_source(data).text, str(path), complete)
        except SourceDecodeError:
            return None

    def load_rules(self) -> None:
        """Import the enabled rule classes, and with them libcst and the engine, now (before the collector freezes
        what is loaded, and before forking workers)."""
        from . import engine  # noqa: F401

        self._classes(self.rules)

    def _classes(self, rules: Sequence[RuleLike]) -> list[type["Rule"]]:
        codes = tuple(r.code for r in rules)
        found = self._loaded.get(codes)
        if found is None:
            found = self._loaded[codes] = rule_classes(rules)
        return found

    def process_bytes(self, data: bytes, filename: str, path: Path | None, options: Options,
                      unit: "ModuleInProject | None" = None) -> tuple[FileResult, bytes | None]:
        """Lint one file's bytes; returns the result and the new bytes when fixes changed the text."""
        result = FileResult(path=filename)
        if unit is None and not could_hold_kernel(data):  # a unit: a module linked to the tree's kernels
            return result, None
        if is_notebook(filename, path):
            return process_notebook(self, data, filename, path, options)
        rules = self.rules_for(path)
        cached = self.cached_result(data, filename, path, options, rules, unit)
        if cached is not None:
            return cached, None
        try:
            source = decode_source(data)
        except SourceDecodeError as exc:
            from . import engine

            if any(r.code == engine.SYNTAX_ERROR for r in rules):
                result.diagnostics = [
                    engine.syntax_error_diagnostic(filename, f"cannot be decoded: {exc}", 1, 1, self._classes(rules))
                ]
            return result, None
        if not (options.fix or options.diff):
            result.diagnostics = self.lint_source(source.text, filename, rules, unit)
            result.text = source.text if result.diagnostics else None
            result.summaries = _exported(unit)
            self.remember(data, path, options, result, rules, unit)
            return result, None
        from .. import fixes

        outcome = fixes.fix_text(source.text, lambda t: self.lint_source(t, filename, rules, unit),
                                 options.unsafe_fixes)
        result.summaries = _exported(unit)  # of the last text linted: the fixed one
        result.diagnostics = outcome.remaining
        result.fixed = outcome.fixed
        result.rejected_fixes = outcome.rejected
        result.text = outcome.text if result.diagnostics else None
        if outcome.text == source.text:
            return result, None
        if options.diff:
            result.diff = unified_diff(source, outcome.text, filename)
        try:
            new_data = source.encode(outcome.text)
        except UnicodeError as exc:  # a fix introduced a character the file's declared encoding lacks (or idna's)
            reason = getattr(exc, "reason", None) or str(exc)
            result.error = f"fixes not applied: the fixed text cannot be encoded as {source.encoding} ({reason})"
            self._unfixed(result, source.text, filename, rules, unit)
            return result, None
        if not round_trips(source, data, new_data, outcome.text):
            # e.g. a `unicode_escape` coding comment: encoding turns every newline into the two characters `\n`
            result.error = (f"fixes not applied: text written in the file's encoding ({source.encoding}) does not "
                            "read back as the same text")
            self._unfixed(result, source.text, filename, rules, unit)
            return result, None
        result.source_digest = content_digest(data)
        result.unfixed_text = source.text
        return result, new_data

    def _unfixed(self, result: FileResult, text: str, filename: str, rules, unit=None) -> None:
        """Fixes that were not written: the findings, and the code frames, are those of the text on disk (the
        fixed text's positions and lines were never written)."""
        result.diagnostics = self.lint_source(text, filename, rules, unit)
        result.text = text if result.diagnostics else None
        result.fixed, result.diff = [], ""

    def without_cache(self) -> "Linter":
        """The same linter, for work whose caching the caller does itself (worker processes, batch runs)."""
        twin = copy.copy(self)
        twin.cache = None
        return twin

    # -- the result cache (lint-only runs: --fix and --diff always lint the current text) ----------------------
    def _cache_slot(self, data: bytes, path: Path | None, options: Options, rules, unit=None) -> tuple | None:
        if self.cache is None or path is None or options.fix or options.diff or is_notebook(str(path), path):
            return None  # notebooks are not cached: their findings carry cell texts the cache does not keep
        codes = tuple(r.code for r in rules)
        fingerprint = self._fingerprints.get(codes)
        if fingerprint is None:
            fingerprint = rules_fingerprint(rules, self.settings.rule_options)
            if self.lint_cuda_only:  # the same file gives other findings
                fingerprint += "+cuda-only-linted"
            if self.unfixable:  # the stored findings lack those fixes: a run without --unfixable must not see them
                fingerprint += "-unfixable-" + ",".join(sorted(self.unfixable))
            if self.ignore_noqa:
                fingerprint += "+noqa-ignored"
            if self.noqa_kept:
                fingerprint += "+noqa-kept-" + ",".join(self.noqa_kept)
            self._fingerprints[codes] = fingerprint
        key = content_key(self.relative_path(path), data)
        if unit is not None:  # the findings also depend on the summaries of the linted modules it imports
            key = content_key(key, unit.seen.encode("utf-8"))
        return fingerprint, key

    def cached_result(
        self, data: bytes, filename: str, path: Path | None, options: Options, rules: Sequence[RuleLike] | None = None,
        unit: "ModuleInProject | None" = None,
    ) -> FileResult | None:
        """The stored result for these exact bytes, path, rules, options and visible summaries, or None (no cache,
        miss, fix mode, or an exporting module whose entry lacks its summaries)."""
        slot = self._cache_slot(data, path, options, self.rules_for(path) if rules is None else rules, unit)
        entry = self.cache.get_entry(*slot, filename) if slot is not None else None
        if entry is None:
            return None
        found, summaries = entry
        if unit is not None and unit.export and summaries is None:
            return None
        text = None
        if found:
            try:
                text = decode_source(data).text
            except SourceDecodeError:
                return None
        return FileResult(path=filename, diagnostics=found, text=text, summaries=summaries)

    def remember(self, data: bytes, path: Path | None, options: Options, result: FileResult, rules=None,
                 unit: "ModuleInProject | None" = None) -> None:
        """Store a lint-only result (one that changed nothing on disk) for the next run."""
        if result.error is None and not result.fixed and not result.diff:
            slot = self._cache_slot(data, path, options, self.rules_for(path) if rules is None else rules, unit)
            if slot is not None:
                self.cache.put(*slot, result.diagnostics, result.summaries)

    # -- files ------------------------------------------------------------------------------------------------
    def process_path(self, path: Path, options: Options) -> FileResult:
        data, error = read_path(path)
        if error is not None:
            return FileResult(path=str(path), error=error)
        result, new_data = self.process_bytes(data, str(path), path, options)
        return self.write_back(path, result, new_data, options)

    def write_back(self, path: Path, result: FileResult, new_data: bytes | None, options: Options) -> FileResult:
        """Write fixed bytes in place (``--fix``); a failed write turns the fixes back into findings."""
        filename = str(path)
        if new_data is not None and options.fix and not options.diff:
            try:
                if path.is_symlink() and filename not in options.links_named:
                    raise OSError("the file was replaced by a symbolic link after it was found; fixes not written")
                atomic_write(filename, new_data, result.source_digest)
            except OSError as exc:
                result.error = f"could not write fixes: {exc.strerror or exc}"
                if result.unfixed_text is not None:
                    self._unfixed(result, result.unfixed_text, filename, self.rules_for(path))
                else:
                    result.diagnostics.extend(result.fixed)
                    result.fixed = []
        result.unfixed_text = None
        return result


def _exported(unit: "ModuleInProject | None") -> dict | None:
    if unit is None or not unit.export:
        return None
    from ..analysis.project import summaries_to_json

    return summaries_to_json(unit.exported or {})


def read_path(path: Path) -> tuple[bytes, str | None]:
    """The file's bytes, or why they cannot be had (oversized files: see ``source.read_source_bytes``)."""
    try:
        return read_source_bytes(path), None
    except IsADirectoryError:
        return b"", "is a directory"
    except OSError as exc:
        return b"", exc.strerror or str(exc)


def unified_diff(source: SourceText, new_text: str, filename: str) -> str:
    old_lines = source_lines(source.text, keepends=True)
    new_lines = source_lines(new_text, keepends=True)
    import difflib  # only for --diff

    return "".join(difflib.unified_diff(old_lines, new_lines, fromfile=filename, tofile=filename))
