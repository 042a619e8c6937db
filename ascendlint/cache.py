"""A content-hash result cache: a file whose bytes, path, tool code and effective rules are unchanged is not re-linted.

One shard per rules fingerprint (tool version and code, enabled rules, their options) under ``.ascendlint_cache/``,
mapping a hash of the file's path and bytes to its findings, stored as plain JSON (never pickle: a cache folder
shipped inside a repository must not be able to run code). Shards are replaced atomically and merged with what is
on disk at save time, so two runs sharing the folder never corrupt it (at worst one run's new entries are
recomputed later). A missing, corrupt or foreign shard or entry reads as a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from . import __version__
from .diagnostics import Diagnostic, diagnostic_from_record, diagnostic_to_record
from .rule_index import describe

if TYPE_CHECKING:
    from .rule import Rule

CACHE_DIR = ".ascendlint_cache"
_FORMAT = 3  # 3: edits carry the original text they replace
_EXPIRY_SECONDS = 30 * 24 * 3600
_REFRESH_SECONDS = 24 * 3600  # a hit refreshes an entry's age at most this often (a warm run rewrites nothing)
_NOT_CACHED = frozenset({"ASC002"})  # a rule crash may depend on the environment (recursion depth, memory)
_BAD_RECORD = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def content_key(relative_path: str, data: bytes) -> str:
    """The file's identity for the cache: findings carry its path, and a rule may look at the name."""
    digest = hashlib.blake2b(relative_path.encode("utf-8", "surrogateescape"), digest_size=20)
    digest.update(b"\0")
    digest.update(data)
    return digest.hexdigest()


def rules_fingerprint(rules: Sequence[type["Rule"]], options: dict[str, dict]) -> str:
    """Everything besides the file that decides its findings: tool version and code, rules, rule options."""
    infos = [describe(r) for r in rules]
    codes = {i.code for i in infos}
    described = {
        "version": __version__,
        "format": _FORMAT,
        "code": _code_stamp(tuple(sorted({i.source or i.module for i in infos}))),
        "rules": sorted(f"{i.module}.{i.qualname}:{i.code}" for i in infos),
        "options": {code: options[code] for code in sorted(options) if code in codes},
    }
    encoded = json.dumps(described, sort_keys=True, default=repr).encode()
    return hashlib.blake2b(encoded, digest_size=12).hexdigest()


_STAMPS: dict[tuple[str, ...], list] = {}


def _code_stamp(rule_files: tuple[str, ...]) -> list:
    """Size and mtime of the engine's, the shared analysis' and the rules' source files, so an edited rule or
    analysis never reuses old findings."""
    stamp = _STAMPS.get(rule_files)
    if stamp is None:
        package = Path(__file__).parent
        engine_files = [*package.glob("*.py"), *(package / "analysis").glob("*.py")]
        files = sorted(str(p) for p in engine_files) + list(rule_files)
        stamp = []
        for name in files:
            try:
                info = os.stat(name)
                stamp.append([name, info.st_size, info.st_mtime_ns])
            except OSError:
                stamp.append([name, None, None])
        _STAMPS[rule_files] = stamp
    return stamp


class _Shard:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list] = _load(path)  # key -> [last_used, [records]] or [..., summaries]
        self.new: dict[str, list] = {}


class ResultCache:
    """Findings by (file path and content, rules fingerprint). Not thread-safe; one instance per run."""

    def __init__(self, root: Path) -> None:
        self.folder = Path(root) / CACHE_DIR / __version__
        self._shards: dict[str, _Shard] = {}
        self.hits = 0
        self.misses = 0

    def _shard(self, fingerprint: str) -> _Shard:
        shard = self._shards.get(fingerprint)
        if shard is None:
            shard = _Shard(self.folder / f"{fingerprint}.json")
            self._shards[fingerprint] = shard
        return shard

    def get(self, fingerprint: str, key: str, filename: str) -> list[Diagnostic] | None:
        entry = self.get_entry(fingerprint, key, filename)
        return entry[0] if entry is not None else None

    def get_entry(self, fingerprint: str, key: str, filename: str) -> tuple[list[Diagnostic], dict | None] | None:
        """The findings and, for a module other linted modules import from, its helpers' summaries (JSON)."""
        shard = self._shard(fingerprint)
        entry = shard.new.get(key) or shard.entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        try:
            found = [diagnostic_from_record(record, filename) for record in entry[1]]
        except _BAD_RECORD:
            shard.entries.pop(key, None)
            self.misses += 1
            return None
        self.hits += 1
        now = time.time()
        if now - entry[0] > _REFRESH_SECONDS:
            shard.new[key] = [now, *entry[1:]]
        return found, (entry[2] if len(entry) > 2 else None)

    def put(self, fingerprint: str, key: str, diagnostics: list[Diagnostic], summaries: dict | None = None) -> None:
        if any(d.code in _NOT_CACHED for d in diagnostics):
            return
        entry = [time.time(), [diagnostic_to_record(d) for d in diagnostics]]
        if summaries is not None:
            entry.append(summaries)
        self._shard(fingerprint).new[key] = entry

    def save(self) -> None:
        """Merge this run's entries into the shards on disk; never raises (a cache is an optimisation)."""
        for shard in self._shards.values():
            if not shard.new:
                continue
            try:
                now = time.time()
                merged = {k: v for k, v in _load(shard.path).items() if now - v[0] < _EXPIRY_SECONDS}
                merged.update(shard.new)
                _atomic_dump(shard.path, merged)
                shard.new = {}
            except (OSError, ValueError, TypeError):
                continue
        self._drop_expired_shards()

    def _drop_expired_shards(self) -> None:
        """Shards of old rule sets or options are deleted once nobody has written them for the expiry period."""
        try:
            shards = list(self.folder.glob("*.json"))
        except OSError:
            return
        now = time.time()
        for path in shards:
            try:
                if now - path.stat().st_mtime > _EXPIRY_SECONDS:
                    path.unlink()
            except OSError:
                continue


def _load(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return {}  # missing or corrupt: just a cold cache
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, list) and len(v) in (2, 3) and isinstance(v[0], (int, float)) and isinstance(v[1], list)
        and (len(v) == 2 or isinstance(v[2], dict))
    }


def _atomic_dump(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    gitignore = path.parent.parent / ".gitignore"
    if not gitignore.exists():
        try:
            gitignore.write_text("# Automatically created by ascendlint.\n*\n")
        except OSError:
            pass
    fd, tmp = tempfile.mkstemp(prefix=".shard-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
