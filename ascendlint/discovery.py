"""Which files to lint: ``.py`` files under the given paths, minus excluded and git-ignored ones.

Files named explicitly are always linted. Directories reached through symlinks are not followed (no loops).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .config import Settings, relative_to_root
from .safe_read import read_regular


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)  # skipped: errors if named, else warnings
    unreadable: list[tuple[Path, str]] = field(default_factory=list)  # folders that could not be listed: errors


def _spec(patterns) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


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
    for folder in reversed(chain[1:]):
        spec = _read_gitignore(folder, on_error)
        if spec is not None:
            specs.append((folder, spec))
    return specs


def _read_gitignore(folder: Path, on_error=None) -> pathspec.PathSpec | None:
    """The folder's ignore patterns; a .gitignore that is a FIFO, a device or huge is skipped (and reported)."""
    path = folder / ".gitignore"
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


def discover(paths: list[Path], settings: Settings) -> Discovery:
    result = Discovery()
    exclude = _spec(settings.all_excludes)
    seen: dict[str, int] = {}  # resolved path -> position in result.files

    def add(path: Path) -> None:
        """Each file once, whatever the links to it (two names would lint and fix it twice); the file's own name
        is kept over a symbolic link's."""
        key = os.path.normcase(os.path.realpath(path))
        position = seen.get(key)
        if position is None:
            seen[key] = len(result.files)
            result.files.append(path)
        elif result.files[position].is_symlink() and not path.is_symlink():
            result.files[position] = path

    for path in paths:
        if path.is_symlink() and not path.exists():
            result.errors.append((path, _dangling_reason(path)))
        elif path.is_file():
            add(path)
        elif path.is_dir():
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
    report = lambda path, reason: result.errors.append((path, reason))  # noqa: E731
    base_specs = _gitignore_specs_above(top.resolve(), report) if settings.respect_gitignore else []
    specs_for: dict[str, list] = {}

    def on_error(error: OSError) -> None:
        # Like an unreadable file (and like ruff's E902), an unreadable folder is an error: its files went unlinted.
        result.unreadable.append((Path(error.filename or top), error.strerror or str(error)))

    for folder, dirnames, filenames in os.walk(top, onerror=on_error):
        folder_path = Path(folder)
        specs = specs_for.get(folder, base_specs)
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
