"""Lint many files, on all cores when the work is big enough to pay for a process pool.

The parent reads every file, skips what cannot hold a kernel, answers what the cache knows, and only sends the rest
to worker processes (libcst parsing holds the GIL, so threads would not help). Results come back in discovery order
and the parent alone writes fixes and the cache, so the output is exactly the serial run's.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Sequence

from .prefilter import could_hold_kernel
from .runner import FileResult, Linter, Options, read_path

# Below this much source to parse, forking workers costs more than it saves (measured: bench/run.py).
MIN_PARALLEL_BYTES = 96_000
MIN_PARALLEL_FILES = 4

_worker_linter: Linter | None = None


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: int, pending_files: int, pending_bytes: int) -> int:
    """``jobs`` > 0 is an explicit request; 0 means: all cores, but only when there is enough work."""
    if jobs > 0:
        return max(1, min(jobs, pending_files))
    if pending_files < MIN_PARALLEL_FILES or pending_bytes < MIN_PARALLEL_BYTES:
        return 1
    return max(1, min(available_cores(), pending_files))


def lint_paths(linter: Linter, paths: Sequence[Path], options: Options, jobs: int = 0) -> list[FileResult]:
    """One result per path, in order; fixes are written (``--fix``) and new results cached by the caller's linter."""
    results: list[FileResult | None] = [None] * len(paths)
    pending: list[tuple[int, Path, bytes]] = []
    for position, path in enumerate(paths):
        data, error = read_path(path)
        if error is not None:
            results[position] = FileResult(path=str(path), error=error)
        elif not could_hold_kernel(data):
            results[position] = FileResult(path=str(path))
        else:
            cached = linter.cached_result(data, str(path), path, options)
            if cached is not None:
                results[position] = cached
            else:
                pending.append((position, path, data))

    workers = worker_count(jobs, len(pending), sum(len(data) for _, _, data in pending))
    work = [(str(path), path, data) for _, path, data in pending]
    uncached = linter.without_cache()  # looked up above, stored below: by the parent only
    with _few_collections():
        if workers > 1:
            outcomes = _in_pool(uncached, work, options, workers)
        else:
            outcomes = [uncached.process_bytes(data, filename, path, options) for filename, path, data in work]

    for (position, path, data), (result, new_data) in zip(pending, outcomes):
        linter.remember(data, path, options, result)
        results[position] = linter.write_back(path, result, new_data, options)
    return results  # type: ignore[return-value]


@contextmanager
def _few_collections():
    """Parsing allocates millions of short-lived nodes, and each default-threshold collection also rescans every
    object loaded so far (libcst's classes, the rules). Freezing those and collecting less often saves a tenth of a
    lint (measured with bench/run.py); the previous settings come back afterwards. Forked workers inherit both."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 20_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def _in_pool(linter: Linter, work: list, options: Options, workers: int) -> list:
    chunk = max(1, len(work) // (workers * 8))
    try:
        with ProcessPoolExecutor(workers, mp_context=_context(), initializer=_start_worker, initargs=(linter,)) as pool:
            return list(pool.map(_lint_one, work, [options] * len(work), chunksize=chunk))
    except (BrokenProcessPool, OSError):
        # A worker died (killed, out of memory) or no process could be started: the serial run is the reference.
        return [linter.process_bytes(data, filename, path, options) for filename, path, data in work]


def _context():
    """Fork where it is safe (Linux): workers inherit the imported rules instead of importing them again."""
    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _start_worker(linter: Linter) -> None:
    global _worker_linter
    _worker_linter = linter


def _lint_one(item: tuple[str, Path, bytes], options: Options) -> tuple[FileResult, bytes | None]:
    filename, path, data = item
    assert _worker_linter is not None
    return _worker_linter.process_bytes(data, filename, path, options)
