"""A content-hash result cache: a file whose bytes, path, tool code and effective rules are unchanged is not re-linted.

One shard per rules fingerprint (tool version and code, enabled rules, their options) under ``.ascendlint_cache/``,
mapping a hash of the file's path and bytes to its findings, stored as plain JSON (never pickle: a cache folder
shipped inside a repository must not be able to run code). Shards are replaced atomically and merged with what is
on disk at save time, so two runs sharing the folder never corrupt it (at worst one run's new entries are
recomputed later). A missing, corrupt or foreign shard or entry reads as a miss.

A cache folder may come with a repository, so nothing in it is trusted: a shard is read like a source (a FIFO or
device is refused without blocking, and its size is bounded), it must carry a keyed checksum (BLAKE2b keyed with
a secret kept in the user's own cache folder, never in the repository) over its exact bytes, and every entry
must have the structure this module writes. A shard that fails any test is a miss; a forged one cannot hide a
finding.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .. import __version__
from ..diagnostics import Diagnostic, diagnostic_from_record, diagnostic_to_record
from ..catalog.rule_index import _user_cache, describe, make_user_cache
from ..files.safe_read import read_regular

if TYPE_CHECKING:
    from ..rule import Rule

CACHE_DIR = ".ascendlint_cache"
_FORMAT = 3  # 3: edits carry the original text they replace
_EXPIRY_SECONDS = 30 * 24 * 3600
_REFRESH_SECONDS = 24 * 3600  # a hit refreshes an entry's age at most this often (a warm run rewrites nothing)
_NOT_CACHED = frozenset({"ASC002"})  # a rule crash may depend on the environment (recursion depth, memory)
_BAD_RECORD = (KeyError, TypeError, ValueError, IndexError, AttributeError)
MAX_SHARD_BYTES = 512 * 1024 * 1024  # findings of a very large tree; past it the shard is a miss, not a memory hog
_MAGIC = b"ascendlint-cache-shard 1 "  # then the hex checksum of the JSON body, a newline, the body
_KEY_FILE = "result-cache.key"
_KEY: list[bytes] = []


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
        "environment": sorted(f"{r.code}:{r.environment()}" for r in rules if getattr(r, "environment", None)
                              and r.environment()),
    }
    encoded = json.dumps(described, sort_keys=True, default=repr).encode()
    return hashlib.blake2b(encoded, digest_size=12).hexdigest()


_STAMPS: dict[tuple[str, ...], list] = {}
# whose code decides findings: the rule API at the top, the shared analysis, and the pipeline that runs them


def _code_stamp(rule_files: tuple[str, ...]) -> list:
    """Size and mtime of the engine's, the shared analysis' (every package of it) and the rules' source files, so
    an edited rule or analysis never reuses old findings."""
    stamp = _STAMPS.get(rule_files)
    if stamp is None:
        package = Path(__file__).parent.parent
        engine_files = list(package.rglob("*.py"))  # every package, subpackages too (``analysis/ub/``)
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
    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.entries: dict[str, list] = _load(path, fingerprint)  # key -> [last_used, [records]] or [.., summaries]
        self.new: dict[str, list] = {}


class ResultCache:
    """Findings by (file path and content, rules fingerprint). Not thread-safe; one instance per run."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        """``folder``: where to keep the cache (``cache-dir``, ``--cache-dir``) instead of the root's own."""
        self.folder = (Path(folder) if folder is not None else Path(root) / CACHE_DIR) / __version__
        self._shards: dict[str, _Shard] = {}
        self.hits = 0
        self.misses = 0

    def _shard(self, fingerprint: str) -> _Shard:
        shard = self._shards.get(fingerprint)
        if shard is None:
            shard = _Shard(self.folder / f"{fingerprint}.json", fingerprint)
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
                merged = {k: v for k, v in _load(shard.path, shard.fingerprint).items() if now - v[0] < _EXPIRY_SECONDS}
                merged.update(shard.new)
                _atomic_dump(shard.path, merged, shard.fingerprint)
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


def _secret() -> bytes:
    """The key of the shards' checksums: 32 random bytes in the user's cache folder (mode 0600), made on first use.

    Without a usable user cache folder the key lives for this process only (shards written now are trusted by this
    run alone; never a key a repository could supply).
    """
    if _KEY:
        return _KEY[0]
    key = None
    folder = _user_cache()
    if folder is not None:
        path = folder / _KEY_FILE
        try:
            data = read_regular(path, limit=1024)
            if len(data) == 64:
                key = bytes.fromhex(data.decode("ascii"))
        except (OSError, ValueError, UnicodeDecodeError):
            key = None
        if key is None:
            key = secrets.token_bytes(32)
            try:
                make_user_cache(folder)
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
                with os.fdopen(descriptor, "w") as handle:
                    handle.write(key.hex())
            except FileExistsError:  # another run made it meanwhile: use theirs
                try:
                    key = bytes.fromhex(read_regular(path, limit=1024).decode("ascii"))
                except (OSError, ValueError, UnicodeDecodeError):
                    pass
            except OSError:
                pass
    _KEY.append(key or secrets.token_bytes(32))
    return _KEY[0]


def _checksum(body: bytes, fingerprint: str) -> str:
    """Over the body and what the shard was made for (format, tool version, and the rules fingerprint, which covers
    the rule set, their options and the tool's code): a shard moved to another rule set's name is a miss."""
    made_for = f"{_FORMAT}\0{__version__}\0{fingerprint}\0".encode("utf-8", "surrogateescape")
    return hashlib.blake2b(made_for + body, key=_secret(), digest_size=32).hexdigest()


def shard_bytes(fingerprint: str, body: bytes) -> bytes:
    """A shard's bytes as written: the checksummed header line, then the JSON body."""
    return _MAGIC + _checksum(body, fingerprint).encode() + b"\n" + body


def _valid_record(record) -> bool:
    """The structure ``diagnostic_to_record`` writes (a record that passes still goes through its reader)."""
    if not isinstance(record, dict):
        return False
    location, end, fix = record.get("location"), record.get("end_location"), record.get("fix")
    if not all(isinstance(record.get(k), str) for k in ("code", "name", "severity", "message")):
        return False
    if not all(isinstance(p, list) and len(p) == 2 and all(type(n) is int and n >= 0 for n in p)
               for p in (location, end)):
        return False
    if fix is not None and not (isinstance(fix, dict) and isinstance(fix.get("edits"), list)
                                and all(isinstance(e, list) and 3 <= len(e) <= 4 and type(e[0]) is int
                                        and type(e[1]) is int and 0 <= e[0] <= e[1] and isinstance(e[2], str)
                                        for e in fix["edits"])):
        return False
    return ((record.get("noqa_row") is None or type(record.get("noqa_row")) is int)
            and (record.get("extra") is None or isinstance(record.get("extra"), dict))
            and (record.get("url") is None or isinstance(record.get("url"), str))
            and (record.get("cell") is None or type(record.get("cell")) is int))


def _valid_entry(value) -> bool:
    return (isinstance(value, list) and len(value) in (2, 3) and type(value[0]) in (int, float)
            and isinstance(value[1], list) and all(_valid_record(r) for r in value[1])
            and (len(value) == 2 or isinstance(value[2], dict)))


def _load(path: Path, fingerprint: str) -> dict:
    try:
        data = read_regular(path, limit=MAX_SHARD_BYTES)  # a FIFO or device planted here must not block the run
    except OSError:
        return {}  # missing, unreadable, not a regular file, too large: just a cold cache
    header, _, body = data.partition(b"\n")
    expected = _checksum(body, fingerprint).encode()
    if not header.startswith(_MAGIC) or not hmac.compare_digest(header[len(_MAGIC):], expected):
        return {}  # an older version's, damaged, made for other rules or options, or not this user's ascendlint
    try:
        entries = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and _valid_entry(v)}


def _atomic_dump(path: Path, data: dict, fingerprint: str) -> None:
    for folder in (path.parent.parent, path.parent):  # .ascendlint_cache and its version folder
        if os.path.islink(folder):  # a link committed in its place must not take writes out of the tree
            raise OSError(f"{folder} is a symbolic link; the result cache is not written through it")
    path.parent.mkdir(parents=True, exist_ok=True)
    gitignore = path.parent.parent / ".gitignore"
    if not os.path.lexists(gitignore):
        try:  # never through a link planted there
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            with os.fdopen(os.open(gitignore, flags, 0o644), "w") as handle:
                handle.write("# Automatically created by ascendlint.\n*\n")
        except OSError:
            pass
    fd, tmp = tempfile.mkstemp(prefix=".shard-", suffix=".tmp", dir=path.parent)
    try:
        body = json.dumps(data, separators=(",", ":")).encode("utf-8", "surrogateescape")
        with os.fdopen(fd, "wb") as handle:
            handle.write(shard_bytes(fingerprint, body))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
