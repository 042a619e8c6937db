"""Which files to lint: ``.py`` and ``.ipynb`` files under the given paths, minus excluded and git-ignored ones.

Each folder is walked with the settings of its closest configuration file (excludes, respect-gitignore). Files named
explicitly are always linted, unless ``force_exclude`` (ruff's ``--force-exclude``, what pre-commit hooks need)
applies the excludes to them and their folders too. Git's ignore files are ``.gitignore`` in each folder,
``.git/info/exclude`` and the global ``core.excludesFile``. Directories reached through symlinks are not followed.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .settings import DEFAULT_INCLUDE, Settings, SourceFile, relative_to_root
from .git_excludes import exclude_files
from ..files.ignore_patterns import compile_spec
from ..files.safe_read import read_regular

SOURCE_SUFFIXES = (".py", ".ipynb")

if TYPE_CHECKING:  # imported where used: a run over named files only never matches a pattern
    import pathspec


@dataclass
class Discovery:
    sources: list[SourceFile] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)  # skipped: errors if named, else warnings
    unreadable: list[tuple[Path, str]] = field(default_factory=list)  # folders that could not be listed: errors

    @property
    def files(self) -> list[Path]:
        return [source.path for source in self.sources]


def _spec(patterns) -> pathspec.PathSpec:
    return compile_spec(patterns)  # linear in the path's length whatever the pattern (ignore_patterns)


def _gitignore_specs_above(directory: Path, on_error=None) -> list[tuple[Path, pathspec.PathSpec]]:
    """``.gitignore`` files from the enclosing git work tree's root down to ``directory``."""
    chain = []
    for folder in (directory, *directory.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            break
    else:
        chain = [directory]
    specs = []
    if len(chain) > 1 or (directory / ".git").exists():
        work_tree = chain[-1]
        for excludes in exclude_files(work_tree):
            spec = _read_ignore_file(excludes, on_error)
            if spec is not None:
                specs.append((work_tree, spec))
    for folder in reversed(chain[1:]):
        spec = _read_gitignore(folder, on_error)
        if spec is not None:
            specs.append((folder, spec))
    return specs


def _read_gitignore(folder: Path, on_error=None) -> pathspec.PathSpec | None:
    return _read_ignore_file(folder / ".gitignore", on_error)


def _read_ignore_file(path: Path, on_error=None) -> pathspec.PathSpec | None:
    """An ignore file's patterns; one that is a FIFO, a device or huge is skipped (and reported)."""
    try:
        data = read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if on_error is not None:
            on_error(path, f"{exc.strerror or exc}; its patterns were not applied")
        return None
    return _spec(data.decode("utf-8", errors="replace").splitlines())


def _ignored(path: Path, is_dir: bool, specs) -> bool:
    for base, spec in specs:
        try:
            relative = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(relative + ("/" if is_dir else "")):
            return True
    return False


class _Excludes:
    """The compiled exclude patterns of each settings object (one per configuration file)."""

    def __init__(self) -> None:
        self._specs: dict[int, tuple[Settings, pathspec.PathSpec]] = {}

    def __call__(self, settings: Settings) -> pathspec.PathSpec:
        found = self._specs.get(id(settings))
        if found is None:
            found = self._specs[id(settings)] = (settings, _spec(settings.all_excludes))
        return found[1]


def discover(paths: list[Path], settings: Settings, force_exclude: bool = False, settings_for=None) -> Discovery:
    """``settings_for(path)`` gives the settings that govern a path (default: ``settings`` everywhere)."""
    result = Discovery()
    settings_for = settings_for or (lambda _path: settings)
    excludes = _Excludes()
    seen: dict[str, int] = {}  # resolved path -> position in result.files
    found_links: list[Path] = []  # symbolic links to files met while walking folders

    def add(path: Path, governing: Settings, relative: str | None = None) -> None:
        """Each file once, whatever the links to it (two names would lint and fix it twice); the file's own name
        is kept over a symbolic link's."""
        key = os.path.normcase(os.path.realpath(path))
        position = seen.get(key)
        if position is not None and not (result.sources[position].path.is_symlink() and not path.is_symlink()):
            return
        source = SourceFile(path, governing, relative_to_root(path, governing.root) if relative is None else relative)
        if position is None:
            seen[key] = len(result.sources)
            result.sources.append(source)
        else:
            result.sources[position] = source

    for path in paths:
        governing = settings_for(path) if force_exclude and path.exists() else None
        if governing is not None and _force_excluded(path, governing, excludes):
            continue
        if path.is_symlink() and not path.exists():
            result.errors.append((path, _dangling_reason(path)))
        elif path.is_file():
            add(path, settings_for(path) if governing is None else governing)
        elif path.is_dir():
            _walk(path, settings_for, excludes, add, result, found_links)
        elif not path.exists():
            result.errors.append((path, "No such file or directory"))
        else:
            result.errors.append((path, "not a regular file or directory"))
    for link in found_links:
        # A link met while walking is never followed: its target is linted (and fixed) under its own name when it
        # is in the linted tree; otherwise reading it would lint, and --fix would rewrite, a file outside the tree.
        if os.path.normcase(os.path.realpath(link)) not in seen:
            result.errors.append((link, f"a symbolic link (to {os.path.realpath(link)}) met while walking a folder is "
                                        "not followed; name it to lint it"))
    return result


def _excluded(path: Path, is_dir: bool, settings: Settings, exclude: pathspec.PathSpec,
              relative: str | None = None) -> bool:
    if relative is None:
        relative = relative_to_root(path, settings.root)
    suffix = "/" if is_dir else ""
    return exclude.match_file(relative + suffix) or exclude.match_file(path.name + suffix)


def is_force_excluded(path: Path, settings: Settings) -> bool:
    """Whether ``--force-exclude`` drops this path (which need not exist: ``--stdin-filename``)."""
    return _force_excluded(path, settings, _Excludes())


def _force_excluded(path: Path, settings: Settings, excludes: _Excludes) -> bool:
    """The path, or a folder above it inside the project root, matches an exclude pattern."""
    exclude = excludes(settings)
    absolute = Path(os.path.abspath(path))
    if _excluded(absolute, absolute.is_dir(), settings, exclude):
        return True
    for folder in absolute.parents:
        if folder == settings.root or settings.root not in folder.parents:
            break
        if _excluded(folder, True, settings, exclude):
            return True
    return False


def _walk(top: Path, settings_for, excludes: _Excludes, add, result: Discovery, found_links: list[Path]) -> None:
    top_settings = settings_for(top)
    report = lambda path, reason: result.errors.append((path, reason))  # noqa: E731
    base_specs = _gitignore_specs_above(top.resolve(), report) if top_settings.respect_gitignore else []
    specs_for: dict[str, list] = {}

    def on_error(error: OSError) -> None:
        # Like an unreadable file (and like ruff's E902), an unreadable folder is an error: its files went unlinted.
        result.unreadable.append((Path(error.filename or top), error.strerror or str(error)))

    for folder, dirnames, filenames in os.walk(top, onerror=on_error):
        folder_path = Path(folder)
        settings = settings_for(folder_path)
        exclude = excludes(settings)
        specs = specs_for.get(folder, base_specs) if settings.respect_gitignore else []
        if settings.respect_gitignore:
            own = _read_gitignore(folder_path, report)
            if own is not None:
                specs = [*specs, (folder_path.resolve(), own)]
        kept = []
        for name in sorted(dirnames):
            child = folder_path / name
            if child.is_symlink():
                continue
            if _excluded(child, True, settings, exclude) or _ignored(_real(child), True, specs):
                continue
            kept.append(name)
            specs_for[str(child)] = specs
        dirnames[:] = kept
        included = _included(settings)
        for name in sorted(filenames):
            if included is None and not name.endswith(SOURCE_SUFFIXES):
                continue
            child = folder_path / name
            relative = relative_to_root(child, settings.root)
            if included is not None and not (included.match_file(relative) or included.match_file(name)):
                continue
            if _excluded(child, False, settings, exclude, relative) or _ignored(_real(child), False, specs):
                continue
            if child.is_symlink() and not child.exists():
                result.errors.append((child, _dangling_reason(child)))
                continue
            if not child.is_file():  # a FIFO or device named *.py would block or stream forever
                result.errors.append((child, "not a regular file"))
                continue
            if child.is_symlink():
                found_links.append(child)  # decided once every named path is walked
                continue
            add(child, settings, relative)


def _included(settings: Settings) -> pathspec.PathSpec | None:
    """ruff's ``include`` / ``extend-include``: the files a folder walk lints (None: the default, by suffix)."""
    patterns = settings.all_includes
    if tuple(patterns) == DEFAULT_INCLUDE:
        return None
    found = _INCLUDES.get(id(settings))
    if found is None or found[0] is not settings:
        found = _INCLUDES[id(settings)] = (settings, _spec(patterns))
    return found[1]


_INCLUDES: dict[int, tuple[Settings, "pathspec.PathSpec"]] = {}


def _real(path: Path) -> Path:
    """``Path.resolve`` that never raises: a symbolic link loop resolves as far as it goes."""
    return Path(os.path.realpath(path))


def _dangling_reason(link: Path) -> str:
    try:
        link.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a symlink loop this way
        return "symbolic link loop"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return "broken symbolic link (its target does not exist)"
