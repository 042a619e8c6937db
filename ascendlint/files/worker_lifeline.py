"""Pool workers die with the process that started them, whatever ends it (SIGKILL included).

A forked worker waits on the pool's queue, whose pipe it inherited both ends of: when its parent dies it never sees
the end of the pipe and would wait forever, holding the terminal's stdout and stderr open. On Linux the kernel is
asked to kill the worker when its parent dies (``PR_SET_PDEATHSIG``); everywhere, a watchdog thread also ends the
worker once its parent is gone (it gets a new parent process id), at most WATCH_SECONDS later.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCH_SECONDS = 0.2


def bind_to_parent(parent_pid: int) -> None:
    """Called first thing in a worker; ``parent_pid`` is the pid of the process that created the pool."""
    die_with_parent()
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid,), name="ascendlint-parent-watch", daemon=True).start()


def die_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux); also safe between fork and exec."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    stop = threading.Event()
    while not stop.wait(WATCH_SECONDS):
        if os.getppid() != parent_pid:
            os._exit(1)
