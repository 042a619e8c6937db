"""Temporary files of atomic writes: removed when the run is interrupted, swept when an earlier run was killed.

A fixed file is written to ``.ascendlint-XXXXXXXX.tmp`` next to it and renamed over it. SIGTERM or SIGHUP between
the two would leave the temporary file behind: while a run writes, those signals first remove every temporary file
in flight, then end the process as the signal would have. SIGKILL cannot be caught (and SIGQUIT dumps core
before anything could be removed, unless handled), so the first write into a folder also removes temporary files
there that match the pattern and belong to the current user, when the run that made them has ended: the file's
name carries the process id of the run that made it, and a file whose process no longer exists (or one older
than STALE_SECONDS, for names without a process id) is left over.
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

from ..text.lazy_regex import lazy

PREFIX, SUFFIX = ".ascendlint-", ".tmp"
STALE_SECONDS = 10 * 60
# mkstemp's 8 random characters, after the process id of the run that made the file (older runs wrote none)
_OURS = lazy(rf"^{re.escape(PREFIX)}(?:(?P<pid>[0-9]+)-)?[A-Za-z0-9_]{{8}}{re.escape(SUFFIX)}$")
_IN_FLIGHT: set[str] = set()
_SWEPT: set[str] = set()
_PREVIOUS: dict[int, object] = {}  # the handlers ours replaced, while inside removed_on_signals
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))


@contextmanager
def temporary_file(directory: str) -> Iterator[tuple[int, str]]:
    """``(descriptor, path)`` of a new temporary file in ``directory``, removed on failure and on SIGTERM/SIGHUP.

    The caller renames it into place (then nothing is left to remove) or lets an exception propagate.
    """
    sweep_stale(directory)
    descriptor, path = tempfile.mkstemp(prefix=f"{PREFIX}{os.getpid()}-", suffix=SUFFIX, dir=directory)
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
        match = _OURS.match(entry.name)
        if not match:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        pid = match.group("pid")
        if (pid is None or _alive(int(pid))) and now - info.st_mtime < STALE_SECONDS:
            continue  # a live run's file (or one too young to judge without a process id)
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
            if signal.getsignal(number) == signal.SIG_IGN:
                continue  # ignored by whoever started us (`nohup`): the run goes on, and so does the write
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


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (a recycled id only keeps a leftover until it is STALE_SECONDS old)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists but is not ours, or cannot be asked: keep the file
    return True


def _remove(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
