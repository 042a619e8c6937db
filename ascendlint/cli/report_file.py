"""Writing the report to ``--output-file`` without destroying anything on the way.

The report never replaces a file being linted (``-o kernel.py`` would otherwise overwrite the code), never follows
a symbolic link to a regular file (a planted ``report.json -> ~/.bashrc`` must not be overwritten), and is written
to the path's own inode with O_NOFOLLOW so that a link swapped in after the check is not followed either. Links to
character devices and pipes (``/dev/stdout``, ``/dev/null``, a shell's ``>(...)``) are written through, as users
expect, and so are the system's own links for open streams (``/dev/stdout`` even when it is redirected to a
file).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Iterable


class ReportFileRefused(OSError):
    """The output file may not be written; the message names it and says why."""


def problem_with(output: Path, linted: Iterable[Path]) -> str | None:
    """Why ``output`` must not receive the report, or None."""
    try:
        link = os.lstat(output)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot use {output} for the report: {exc.strerror or exc}"
    if stat.S_ISLNK(link.st_mode) and not _system_stream(output):
        try:
            target = os.stat(output)
        except OSError:
            return f"{output} is a broken symbolic link; refusing to create its target"
        if not (stat.S_ISCHR(target.st_mode) or stat.S_ISFIFO(target.st_mode)):
            return (f"{output} is a symbolic link to {os.path.realpath(output)}; refusing to overwrite a link's "
                    "target (name the target itself)")
    try:
        existing = os.stat(output)
    except OSError:
        return None
    for path in linted:
        try:
            found = os.stat(path)
        except OSError:
            continue
        if (found.st_ino, found.st_dev) == (existing.st_ino, existing.st_dev):
            return f"refusing to write the report over {output}: it is a file being linted"
    return None


_STANDARD_STREAMS = {
    "/dev/stdout": 1, "/dev/fd/1": 1, "/proc/self/fd/1": 1,
    "/dev/stderr": 2, "/dev/fd/2": 2, "/proc/self/fd/2": 2,
}


def _write_all(descriptor: int, data: bytes) -> None:
    for stream in (sys.stdout, sys.stderr):  # whatever was printed before comes first
        stream.flush()
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _system_stream(output: Path) -> bool:
    """``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``: the system's names for open streams, not planted links."""
    return os.path.abspath(output).startswith(("/dev/", "/proc/"))


def write(output: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``output``; a symbolic link swapped in since ``problem_with`` is not followed."""
    data = text.encode("utf-8")
    standard = _STANDARD_STREAMS.get(os.path.abspath(output))
    if standard is not None:  # the process's own stream: write to it (its file offset), do not reopen it
        _write_all(standard, data)
        return
    try:
        link = os.lstat(output)
        through_link = stat.S_ISLNK(link.st_mode)
    except FileNotFoundError:
        through_link = False
    if through_link and not _system_stream(output):
        problem = problem_with(output, ())  # a link may have been put there since the run began
        if problem is not None:
            raise ReportFileRefused(problem)
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if _system_stream(output):
        flags |= os.O_APPEND  # an open stream (possibly redirected to a file): add to it, do not truncate it
    elif through_link:  # checked: a link to a device or pipe
        flags |= os.O_TRUNC
    else:
        flags |= os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(output, flags, 0o666)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
