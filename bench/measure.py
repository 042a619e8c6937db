"""Timing primitives of the benchmark: fresh processes with CPU time and peak memory, and files linted one by one.

Nothing here may hang the benchmark: every process has a time limit, and a file that runs past the per-file limit
is reported as "over limit" (its worker is killed and a fresh one goes on with the next file).
"""

from __future__ import annotations

import json
import os
from select import select as wait_readable
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ascendlint.catalog.rule_index import CACHE_ENV

REPO = Path(__file__).resolve().parents[1]
# Where measured processes import ascendlint from, and the byte-code folder they use (bench.run.snapshot_code
# sets both; without a snapshot the processes run as this environment runs them).
CODE: dict[str, str | None] = {"path": str(REPO), "pycache": None}


def environment() -> dict[str, str]:
    """The measured processes import the code snapshot first, and this repository's ``bench`` package after it.

    With a snapshot, every measured process (ascendlint, flake8, ``python -c``) reads and writes byte code in the
    snapshot's own cache folder (``PYTHONPYCACHEPREFIX``) and ``PYTHONDONTWRITEBYTECODE`` is dropped: an
    installed package is byte-compiled (pip compiles it), and a machine that forbids writing byte code would
    otherwise have every process compile from source whatever lacks a ``.pyc``, a cost no user's hook pays.
    ``PYTHONSAFEPATH`` keeps the working folder off the import path (``python -m ascendlint`` started in this
    repository would import the working tree instead of the snapshot). The rule index is kept in a user cache
    folder of the benchmark's own: the shared one keeps the indexes of the last few environments, and other
    environments' runs on a shared machine would push the snapshot's out, so that a measured run rebuilt it.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([CODE["path"], str(REPO)])}
    if CODE.get("pycache"):
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = CODE["pycache"]
        env["PYTHONSAFEPATH"] = "1"
        env[CACHE_ENV] = str(Path(CODE["pycache"]).parent / "user-cache")
    return env


@dataclass
class Run:
    """One fresh process: wall and CPU seconds (its children included), peak resident memory."""

    wall: float
    user: float
    system: float
    max_rss_mb: float
    over_limit: bool = False
    returncode: int | None = None

    @property
    def cpu(self) -> float:
        return self.user + self.system


def run_process(command: list[str], limit: float, cwd: Path | None = None) -> Run:
    """Run ``command`` to completion or until ``limit`` seconds of wall time; resource use from ``wait4``.

    ``wait4`` reports the process and every child it waited for (a process pool's workers), so CPU time and
    peak memory cover the whole run. Output is discarded.
    """
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=environment(), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    timer = threading.Timer(limit, _kill_group, (process.pid,))
    timer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        timer.cancel()
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    over = wall >= limit
    return Run(wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024, over, process.returncode)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the process and any worker it started
    except ProcessLookupError:
        pass


@dataclass
class Series:
    """Repeated fresh-process runs of one command; medians of the runs that finished."""

    label: str
    runs: list[Run] = field(default_factory=list)
    lines: int = 0

    @property
    def finished(self) -> list[Run]:
        return [r for r in self.runs if not r.over_limit]

    @property
    def over_limit(self) -> bool:
        return not self.finished

    def median(self, what: str) -> float:
        values = [getattr(r, what) for r in self.finished]
        return statistics.median(values) if values else float("nan")

    @property
    def wall(self) -> float:
        return self.median("wall")

    @property
    def cpu(self) -> float:
        return self.median("cpu")


LONG_RUN = 120.0  # wall seconds: a run this long is not repeated (its noise is small, and repeats cost minutes)


def series(label: str, command: list[str], repeat: int, limit: float, lines: int = 0, cwd: Path | None = None,
           before=None) -> Series:
    """``repeat`` runs; after a run over the limit, or one longer than ``LONG_RUN``, the others are skipped."""
    found = Series(label, lines=lines)
    for _ in range(repeat):
        if before is not None:
            before()
        run = run_process(command, limit, cwd)
        found.runs.append(run)
        if run.over_limit or run.wall > LONG_RUN:
            break
    return found


def interleaved(commands: list[tuple[str, list[str], Path | None]], repeat: int, limit: float,
                lines: int = 0) -> list[Series]:
    """Runs taken in turns (one of each command, then the next round), so that a ratio of two of them compares
    runs made under the same load: on a shared machine the speed drifts by a third within minutes, far more
    than the differences measured. Each command is (label, argv, working folder or None); the argv may be a
    function that returns it, called before each of its runs (to edit a file first). A command past the limit or
    longer than ``LONG_RUN`` runs no more."""
    found = [Series(label, lines=lines) for label, _, _ in commands]
    done: set[int] = set()
    for _ in range(repeat):
        for position, (_, command, cwd) in enumerate(commands):
            if position in done:
                continue
            run = run_process(command() if callable(command) else command, limit, cwd)
            found[position].runs.append(run)
            if run.over_limit or run.wall > LONG_RUN:
                done.add(position)
    return found


# -- files linted one by one, in one worker process ---------------------------------------------------------------


@dataclass
class FileTiming:
    """One file linted alone: CPU and wall seconds of the lint and of a plain libcst parse, medians of repeats."""

    path: str
    lines: int
    size: int
    lint_cpu: float = float("nan")
    lint_wall: float = float("nan")
    parse_cpu: float = float("nan")
    findings: int = 0
    prefiltered: bool = False  # skipped by the byte-level prefilter (never parsed by the linter)
    over_limit: bool = False
    note: str = ""


def lint_files_alone(files: list[Path], root: Path, repeat: int, limit: float, select: list[str] | None = None,
                     ignore: list[str] | None = None, progress=None) -> list[FileTiming]:
    """Lint every file alone, cold (no result cache), in one process; the worker restarts after a file over limit.

    Each file: ``repeat`` lints (median), stopping early once one takes longer than ``limit`` CPU seconds; a
    worker that stays silent for twice the limit (plus slack for a loaded machine) is killed and the file is
    marked over limit.
    """
    timings = [FileTiming(str(p), _line_count(p), p.stat().st_size) for p in files]
    position = 0
    while position < len(files):
        position = _one_worker(files, timings, position, root, repeat, limit,
                               {"select": select or [], "ignore": ignore or []}, progress)
    return timings


def _one_worker(files, timings, start, root, repeat, limit, rules, progress) -> int:
    """Run one worker from ``start``; returns the position the next worker must start at."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump({"files": [str(p) for p in files[start:]], "root": str(root), "repeat": repeat, "limit": limit,
                   **rules}, handle)
        job = handle.name
    command = [sys.executable, "-m", "bench.measure_worker", job]
    worker = subprocess.Popen(command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    silence = 2 * limit + 30  # wall seconds without a word before the worker counts as hung
    position = start
    buffered = b""
    try:
        deadline = time.monotonic() + silence + 60  # the first file also pays for importing libcst and the rules
        while position < len(files):
            ready, _, _ = wait_readable([worker.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                timings[position].over_limit = True
                timings[position].note = f"no answer within {silence:.0f} s"
                return position + 1
            chunk = os.read(worker.stdout.fileno(), 65536)
            if not chunk:
                timings[position].note = f"worker exited ({worker.wait()})"
                return position + 1
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for line in lines:
                message = json.loads(line)
                deadline = time.monotonic() + silence
                if "result" in message:
                    found = timings[position]
                    for key, value in message["result"].items():
                        setattr(found, key, value)
                    if progress is not None:
                        progress(found)
                    position += 1
        return position
    finally:
        _kill_group(worker.pid)
        worker.wait()
        worker.stdout.close()
        os.unlink(job)


def _line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return handle.read().count(b"\n")
