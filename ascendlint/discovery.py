"""Which files to lint: ``.py`` files under the given paths, minus excluded and git-ignored ones.

Files named explicitly are always linted. Directories reached through symlinks are not followed (no loops).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, relative_to_root

if TYPE_CHECKING:  # imported where used: a run over named files only never matches a pattern
    import pathspec


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)


def _spec(patterns) -> pathspec.PathSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _gitignore_specs_above(directory: Path) -> list[tuple[Path, pathspec.PathSpec]]:
    """``.gitignore`` files from the enclosing git work tree's root down to ``directory``."""
    chain = []
    for folder in (directory, *directory.parents):
        chain.append(folder)
        if (folder / ".git").exists():
            break
    else:
        chain = [directory]
    specs = []
    for folder in reversed(chain[1:]):
        spec = _read_gitignore(folder)
        if spec is not None:
            specs.append((folder, spec))
    return specs


def _read_gitignore(folder: Path) -> pathspec.PathSpec | None:
    try:
        with open(folder / ".gitignore", encoding="utf-8", errors="replace") as handle:
            return _spec(handle.read().splitlines())
    except OSError:
        return None


def _ignored(path: Path, is_dir: bool, specs) -> bool:
    for base, spec in specs:
        try:
            relative = path.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(relative + ("/" if is_dir else "")):
            return True
    return False


def discover(paths: list[Path], settings: Settings) -> Discovery:
    result = Discovery()
    exclude = None  # built for the first folder to walk (files named explicitly are never excluded)
    seen: set[str] = set()

    def add(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    for path in paths:
        if path.is_symlink() and not path.exists():
            result.errors.append((path, _dangling_reason(path)))
        elif path.is_file():
            add(path)
        elif path.is_dir():
            if exclude is None:
                exclude = _spec(settings.all_excludes)
            _walk(path, settings, exclude, add, result)
        elif not path.exists():
            result.errors.append((path, "No such file or directory"))
        else:
            result.errors.append((path, "not a regular file or directory"))
    return result


def _excluded(path: Path, is_dir: bool, settings: Settings, exclude: pathspec.PathSpec) -> bool:
    relative = relative_to_root(path, settings.root)
    suffix = "/" if is_dir else ""
    return exclude.match_file(relative + suffix) or exclude.match_file(path.name + suffix)


def _walk(top: Path, settings: Settings, exclude, add, result: Discovery) -> None:
    base_specs = _gitignore_specs_above(top.resolve()) if settings.respect_gitignore else []
    specs_for: dict[str, list] = {}

    def on_error(error: OSError) -> None:
        result.errors.append((Path(error.filename or top), error.strerror or str(error)))

    for folder, dirnames, filenames in os.walk(top, onerror=on_error):
        folder_path = Path(folder)
        specs = specs_for.get(folder, base_specs)
        if settings.respect_gitignore:
            own = _read_gitignore(folder_path)
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
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            child = folder_path / name
            if _excluded(child, False, settings, exclude) or _ignored(_real(child), False, specs):
                continue
            if child.is_symlink() and not child.exists():
                result.errors.append((child, _dangling_reason(child)))
                continue
            if not child.is_file():  # a FIFO or device named *.py would block or stream forever
                result.errors.append((child, "not a regular file"))
                continue
            add(child)


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
