"""A progress line on a terminal's standard error for long runs (``[120/800] files linted``), and colour choice.

The line appears only when standard error is a terminal, once the run has taken longer than ``DELAY`` seconds
(``ASCENDLINT_PROGRESS_AFTER`` changes it), is redrawn at most ten times a second with a carriage return, and is
erased before anything else is printed, so it never mixes with a report. The caller does not create one for
machine formats printed to the terminal.
"""

from __future__ import annotations

import os
import sys
import time

DELAY = 0.5


class Progress:
    def __init__(self, total: int, stream=None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.delay = _delay()
        self.drawn_at = 0.0
        self.shown = False

    def __call__(self, count: int) -> None:
        self.done = min(self.total, self.done + count)
        now = time.monotonic()
        if now - self.started < self.delay or now - self.drawn_at < 0.1:
            return
        self.drawn_at = now
        self.shown = True
        self.stream.write(f"\r[{self.done}/{self.total}] files linted")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("ASCENDLINT_PROGRESS_AFTER", DELAY)))
    except ValueError:
        return DELAY


def wanted(stream=None) -> bool:
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_color(choice: str, stream=None) -> bool:
    """``--color``: always, never, or auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces it)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return wanted(stream or sys.stdout)
