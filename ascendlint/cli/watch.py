"""``ascendlint check --watch``: lint, then lint again whenever a Python file, a notebook or a configuration file
under the given paths changes (a polling loop over modification times; Ctrl-C ends it)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from ..workspace.config import CONFIG_NAMES, DEFAULT_EXCLUDE

INTERVAL = 0.5  # seconds between two looks at the files
WATCHED_SUFFIXES = (".py", ".ipynb", ".toml")
_SKIPPED = frozenset(name for name in DEFAULT_EXCLUDE if "*" not in name)


def snapshot(paths: list[Path]) -> dict[str, tuple[int, int]]:
    """(modification time, size) of every watched file under ``paths`` and of the configuration files above."""
    found: dict[str, tuple[int, int]] = {}

    def add(path: str) -> None:
        try:
            status = os.stat(path)
        except OSError:
            return
        found[path] = (status.st_mtime_ns, status.st_size)

    for path in paths:
        absolute = Path(os.path.abspath(path))
        for folder in (absolute if absolute.is_dir() else absolute.parent, *absolute.parents):
            for name in CONFIG_NAMES:
                add(str(folder / name))
        if absolute.is_file():
            add(str(absolute))
            continue
        for folder, dirnames, filenames in os.walk(absolute):
            dirnames[:] = [d for d in dirnames if d not in _SKIPPED and not d.endswith(".egg-info")]
            for name in filenames:
                if name.endswith(WATCHED_SUFFIXES):
                    add(os.path.join(folder, name))
    return found


def watch_and_rerun(paths: list[Path], run: Callable[[], object], interval: float = INTERVAL,
                    rounds: int | None = None) -> None:
    """Call ``run`` now and after every change; ``rounds`` bounds the number of runs (tests), None: until Ctrl-C.
    ``ASCENDLINT_WATCH_ROUNDS`` sets ``rounds`` from the environment."""
    if rounds is None and os.environ.get("ASCENDLINT_WATCH_ROUNDS", "").isdigit():
        rounds = int(os.environ["ASCENDLINT_WATCH_ROUNDS"])
    done = 0
    try:
        while True:
            _run_once(run)
            before = snapshot(paths)  # after the run: files that --fix just wrote do not trigger another one
            done += 1
            if rounds is not None and done >= rounds:
                return
            print("[watch] Watching for file changes (Ctrl-C to stop).", file=sys.stderr, flush=True)
            while snapshot(paths) == before:
                time.sleep(interval)
            _settle(paths, interval)
            print("[watch] Files changed: linting again.", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        return


def _settle(paths: list[Path], interval: float) -> None:
    """Wait until two polls in a row see the same files: an editor or a script saving in steps (truncate, then
    write) is linted once, on what it finished writing, not on the half-written file."""
    last = snapshot(paths)
    while True:
        time.sleep(interval)
        now = snapshot(paths)
        if now == last:
            return
        last = now


def _run_once(run: Callable[[], object]) -> None:
    try:
        run()
    except SystemExit:  # each run ends with its exit code; watching goes on
        pass
    sys.stdout.flush()
