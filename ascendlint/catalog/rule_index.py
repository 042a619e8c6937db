"""What configuration, selection and the cache need to know about the rules, without importing them.

Importing the rules means importing libcst (a quarter of a second) and scanning every installed distribution for
the ``ascendlint.checks`` entry point (another large slice); a run whose files are all answered by the prefilter
or the result cache needs neither. The index (code, name, option names, where the class lives) is stored as plain
JSON in the user's cache folder, keyed by everything that can change the set of rules: the tool version, the
built-in rule files (size, mtime) and the modification times of the import path's folders (installing or
removing a plugin package changes its site-packages folder). The index also keeps the repository URL the
package's metadata declares (for the default documentation links), read when it is built: looking it up again
would cost another scan of the distributions. Rule classes are only ever obtained from the registry (which, for
built-in rules, imports only the files of the rules a run enables), never by importing a module named in the
stored index. An index whose records do not match their stored digest, or that lacks a built-in rule, is ignored
and rebuilt: a damaged or edited index never means fewer rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import __version__, docs_links
from . import suites

CACHE_ENV = "ASCENDLINT_USER_CACHE"  # overrides the user cache folder (tests, read-only homes)
_FORMAT = 6  # 6: review-suite membership; 2: a digest of the records, checked on reading; 3: each rule's default tier; 4: the repository URL; 5: no placeholder URL


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    options: tuple[str, ...]  # option names (defaults stay with the class)
    module: str
    qualname: str
    source: str | None  # the defining file, for the cache's code stamp
    tool_rule: bool = False
    default: bool = True  # enabled by the default selection (see selection.resolve)
    review: bool = True  # a member of the `review` suite (see suites.py)


def describe(rule) -> RuleInfo:
    """The index entry of a rule class (or an entry itself)."""
    if isinstance(rule, RuleInfo):
        return rule
    module = sys.modules.get(rule.__module__)
    return RuleInfo(
        code=rule.code,
        name=rule.name,
        options=tuple(sorted(rule.options)),
        module=rule.__module__,
        qualname=rule.__qualname__,
        source=getattr(module, "__file__", None),
        tool_rule=bool(getattr(rule, "tool_rule", False)),
        default=bool(getattr(rule, "default", True)),
        review=suites.in_review(rule),
    )


def rule_index(use_stored: bool = True) -> tuple[RuleInfo, ...]:
    """Every known rule's index entry, sorted by code; read from the user cache when nothing changed."""
    path = _stored_path() if use_stored else None
    if path is not None:
        stored = _read(path)
        if stored is not None:
            return stored
    from .registry import all_rules

    infos = tuple(describe(rule) for rule in all_rules())
    if path is not None:
        _write(path, infos)
    return infos


def rule_classes(rules) -> list:
    """The rule classes for index entries (classes pass through), from the registry alone: only the modules of
    these rules are imported when they are all built-in (``registry.rules_for_codes``)."""
    if all(isinstance(rule, type) for rule in rules):
        return list(rules)
    from .registry import rules_for_codes

    wanted = [rule.code for rule in rules if not isinstance(rule, type)]
    by_code = {rule.code: rule for rule in rules_for_codes(wanted)}
    return [rule if isinstance(rule, type) else by_code[rule.code] for rule in rules if rule.code in by_code]


def _user_cache() -> Path | None:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or (os.path.join(os.path.expanduser("~"), ".cache"))
    return Path(base) / "ascendlint" if base and not base.startswith("~") else None


def make_user_cache(folder: Path) -> None:
    """Create the user cache folder, and at most its parent (``~/.cache`` on a fresh account): a home or
    ``XDG_CACHE_HOME`` that does not exist (``HOME=/nonexistent/x``) is not created, nothing is written there."""
    if not folder.is_dir():
        if not folder.parent.parent.is_dir():
            raise FileNotFoundError(2, "the user cache folder's parent does not exist", str(folder.parent))
        folder.mkdir(parents=True, exist_ok=True)


def _stored_path() -> Path | None:
    folder = _user_cache()
    if folder is None:
        return None
    return folder / f"rules-{_environment_key()}.json"


def _builtin_folders() -> tuple[Path, ...]:
    package = Path(__file__).resolve().parents[1]  # checks/ beside the package (a checkout) or in it (installed)
    return tuple(folder for folder in (package.parent / "checks", package / "checks") if folder.is_dir())


def _builtin_codes() -> set[str]:
    """Codes of the built-in rules, from their file names (``asc101_launch_num_warps.py`` holds ASC101)."""
    return {p.name.split("_", 1)[0].upper() for folder in _builtin_folders() for p in folder.glob("asc[0-9]*_*.py")}


def _records_digest(records: list) -> str:
    encoded = json.dumps(records, sort_keys=True, separators=(",", ":")).encode("utf-8", "surrogateescape")
    return hashlib.blake2b(encoded, digest_size=16).hexdigest()


def _environment_key() -> str:
    """Changes whenever a rule may have been added, removed or changed (besides edits to known rule files)."""
    parts = [__version__, str(_FORMAT), sys.executable, sys.version, *sys.path]
    for folder in _builtin_folders():
        parts.extend(_stat_line(p) for p in sorted(folder.glob("*.py")))
    for entry in sys.path:
        parts.extend(_distribution_stamps(entry))
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=12).hexdigest()


def _distribution_stamps(folder: str) -> list[str]:
    """Installed distributions (where entry points live) on one import path entry: names and mtimes."""
    try:
        with os.scandir(folder or ".") as entries:
            return sorted(
                f"{e.path}:{e.stat().st_mtime_ns}" for e in entries if e.name.endswith((".dist-info", ".egg-info"))
            )
    except OSError:
        return []


def _stat_line(path: Path | str) -> str:
    try:
        info = os.stat(path)
        return f"{path}:{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        return f"{path}:-"


def _read(path: Path) -> tuple[RuleInfo, ...] | None:
    try:
        with open(path, "rb") as handle:
            stored = json.loads(handle.read())
        if stored["digest"] != _records_digest(stored["rules"]):
            return None  # damaged or edited: rebuilt from the rules themselves
        infos = tuple(
            RuleInfo(
                code=str(r["code"]),
                name=str(r["name"]),
                options=tuple(str(o) for o in r["options"]),
                module=str(r["module"]),
                qualname=str(r["qualname"]),
                source=None if r["source"] is None else str(r["source"]),
                tool_rule=bool(r["tool_rule"]),
                default=bool(r["default"]),
                review=bool(r["review"]),
            )
            for r in stored["rules"]
        )
        unchanged = all(_stat_line(source) == line for source, line in stored["sources"].items())
        repository = stored["repository"]
        if repository is not None and not isinstance(repository, str):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    if not infos or not unchanged or not _builtin_codes() <= {info.code for info in infos}:
        return None  # a built-in rule missing from the index would silently not run
    docs_links.remember_repository(repository)  # as the metadata said when the index was built
    return infos


def _write(path: Path, infos: tuple[RuleInfo, ...]) -> None:
    records = [
        {"code": i.code, "name": i.name, "options": list(i.options), "module": i.module, "qualname": i.qualname,
         "source": i.source, "tool_rule": i.tool_rule, "default": i.default,
         "review": i.review}
        for i in infos
    ]
    sources = {i.source: _stat_line(i.source) for i in infos if i.source}
    try:
        make_user_cache(path.parent)
        _drop_old_indexes(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".rules-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"rules": records, "sources": sources, "digest": _records_digest(records),
                           "repository": docs_links.declared_repository_url()}, handle)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # an unwritable cache folder only costs the next run the imports


def _drop_old_indexes(folder: Path, keep: int = 8) -> None:
    """Indexes of other environments stay (a few venvs may share the folder); the oldest beyond ``keep`` go."""
    try:
        found = sorted(folder.glob("rules-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in found[keep - 1 :]:
            old.unlink()
    except OSError:
        pass
