"""One linter per configuration file, chosen per file: what hierarchical settings look like to the runner.

``LinterSet`` answers the same calls as a ``runner.Linter`` (``cached_result``, ``process_bytes``, ``remember``,
``write_back``, ``without_cache``), so the parallel runner lints a tree governed by several configuration files in
one pool. Each linter keeps its own result cache in its project root.

Every file comes with the settings discovery resolved for it (``SourceFile``); nothing here reads configuration or
walks folders again. A caller that lints text nobody discovered (standard input, an editor's buffer) names the
settings itself (``linter_for_settings``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from ..workspace.settings import Settings, SourceFile
from .cache import ResultCache
from .runner import FileResult, Linter, Options


class LinterSet:
    def __init__(self, make_linter: Callable[[Settings, ResultCache | None], Linter], use_cache: bool = True) -> None:
        self._make_linter = make_linter
        self._use_cache = use_cache
        self._linters: dict[int, Linter] = {}
        self._caches: dict[Path, ResultCache] = {}
        self._by_path: dict[Path, Linter] = {}  # the discovered files, bound to their linters by ``prepare``

    def prepare(self, files: Iterable[SourceFile]) -> None:
        """Build every file's linter now (configuration errors surface before linting, and worker processes
        inherit the complete set). A discovered file brings the settings discovery resolved for it, and its
        relative path, which its linter keeps: neither is looked up again for it in the run."""
        for item in files:
            linter = self.linter_for_settings(item.settings)
            linter.bind(item.path, item.relative)
            self._by_path[item.path] = linter

    def linter_for(self, path: Path | None) -> Linter:
        """The linter of a prepared (discovered) file."""
        found = self._by_path.get(path) if path is not None else None
        if found is None:
            raise LookupError(f"{path} was not discovered: its settings are unknown here")
        return found

    def linter_for_settings(self, settings: Settings) -> Linter:
        linter = self._linters.get(id(settings))
        if linter is None:
            cache = None
            if self._use_cache:
                where = settings.cache_dir or settings.root
                cache = self._caches.get(where)
                if cache is None:
                    cache = self._caches[where] = ResultCache(settings.root, settings.cache_dir)
            linter = self._linters[id(settings)] = self._make_linter(settings, cache)
        return linter

    @property
    def linters(self) -> list[Linter]:
        return list(self._linters.values())

    def save_caches(self) -> None:
        for cache in self._caches.values():
            cache.save()

    # -- the runner.Linter interface, dispatched per file -----------------------------------------------------
    def cached_result(self, data: bytes, filename: str, path: Path | None, options: Options, rules=None, unit=None):
        return self.linter_for(path).cached_result(data, filename, path, options, rules, unit)

    def process_bytes(self, data: bytes, filename: str, path: Path | None, options: Options, unit=None):
        return self.linter_for(path).process_bytes(data, filename, path, options, unit)

    def remember(self, data: bytes, path: Path | None, options: Options, result: FileResult, rules=None,
                 unit=None) -> None:
        self.linter_for(path).remember(data, path, options, result, rules, unit)

    def write_back(self, path: Path, result: FileResult, new_data: bytes | None, options: Options) -> FileResult:
        return self.linter_for(path).write_back(path, result, new_data, options)

    def platform_of_data(self, path: Path, data: bytes, complete: bool = False):
        return self.linter_for(path).platform_of_data(path, data, complete)

    def load_rules(self) -> None:
        for linter in self._linters.values():
            linter.load_rules()

    def without_cache(self) -> "LinterSet":
        twin = LinterSet(self._make_linter, use_cache=False)
        twin._linters = {key: linter.without_cache() for key, linter in self._linters.items()}
        twins = {id(linter): twin._linters[key] for key, linter in self._linters.items()}
        twin._by_path = {path: twins[id(linter)] for path, linter in self._by_path.items()}
        return twin
