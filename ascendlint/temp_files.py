"""Temporary files of atomic writes: removed when the run is interrupted, swept when an earlier run was killed.

A fixed file is written to ``.ascendlint-XXXXXXXX.tmp`` next to it and renamed over it. SIGTERM or SIGHUP between
the two would leave the temporary file behind: while a run writes, those signals first remove every temporary file
in flight, then end the process as the signal would have. SIGKILL cannot be caught, so the first write into a
folder also removes temporary files there that match the pattern, belong to the current user and are older than
STALE_SECONDS (a live run holds its own for milliseconds).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Iterator

PREFIX, SUFFIX = ".ascendlint-", ".tmp"
STALE_SECONDS = 10 * 60
_OURS = re.compile(rf"^{re.escape(PREFIX)}[A-Za-z0-9_]{{8}}{re.escape(SUFFIX)}$")  # mkstemp's 8 random characters
_IN_FLIGHT: set[str] = set()
_SWEPT: set[str] = set()
_PREVIOUS: dict[int, object] = {}  # the handlers ours replaced, while inside removed_on_signals
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def temporary_file(directory: str) -> Iterator[tuple[int, str]]:
    """``(descriptor, path)`` of a new temporary file in ``directory``, removed on failure and on SIGTERM/SIGHUP.

    The caller renames it into place (then nothing is left to remove) or lets an exception propagate.
    """
    sweep_stale(directory)
    descriptor, path = tempfile.mkstemp(prefix=PREFIX, suffix=SUFFIX, dir=directory)
    _IN_FLIGHT.add(path)
    try:
        yield descriptor, path
    except BaseException:
        _remove(path)
        raise
    finally:
        _IN_FLIGHT.discard(path)


def sweep_stale(directory: str, now: float | None = None) -> list[str]:
    """Remove our stale temporary files in ``directory`` (once per folder and run); returns what was removed."""
    key = os.path.realpath(directory)
    if key in _SWEPT:
        return []
    _SWEPT.add(key)
    now = time.time() if now is None else now
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    for entry in entries:
        if not _OURS.match(entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or now - info.st_mtime < STALE_SECONDS:
            continue
        if uid is not None and info.st_uid != uid:
            continue  # another user's run: not ours to judge
        if _remove(entry.path):
            removed.append(entry.path)
    return removed


@contextmanager
def removed_on_signals() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP remove the temporary files in flight before ending the process."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    installed = {}
    for number in _SIGNALS:
        try:
            installed[number] = signal.signal(number, _on_signal)
        except (OSError, ValueError):
            continue
    _PREVIOUS.update(installed)
    try:
        yield
    finally:
        for number, handler in installed.items():
            signal.signal(number, handler)
            _PREVIOUS.pop(number, None)


def _on_signal(number: int, frame) -> None:
    for path in list(_IN_FLIGHT):
        _remove(path)
    previous = _PREVIOUS.get(number, signal.SIG_DFL)
    if callable(previous):
        previous(number, frame)
    elif previous != signal.SIG_IGN:
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)  # end as the signal itself would have (exit status, parent's view)


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
