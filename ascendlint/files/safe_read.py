"""Reading files a repository supplies (sources, configuration, ignore files) without hanging or filling memory.

Opening a FIFO blocks until someone writes to it, and a link to ``/dev/zero`` or ``/dev/urandom`` never ends. So
files are opened without blocking, only regular files are read, and configuration-like files have a size limit.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # pyproject.toml, .gitignore: a real one is a few KiB


class NotARegularFile(OSError):
    """A FIFO, device, socket or folder where a file was expected."""


class FileTooLarge(OSError):
    """A configuration-like file over its size limit."""


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """The file opened for binary reading, or NotARegularFile (never blocks on a FIFO; follows symbolic links)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = "is a directory" if stat.S_ISDIR(mode) else "not a regular file"
            error = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
            raise NotARegularFile(error, kind, os.fspath(path))
        _blocking(descriptor)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | os.PathLike, limit: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; NotARegularFile or FileTooLarge otherwise."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"over the {limit // 2**20} MiB limit for this kind of file", os.fspath(path))
    return data


def _blocking(descriptor: int) -> None:
    """Regular files ignore O_NONBLOCK on most systems; clear it anyway so reads behave as usual everywhere."""
    try:
        import fcntl
    except ImportError:  # Windows: no O_NONBLOCK was set
        return
    flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
    fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
