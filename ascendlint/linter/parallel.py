"""Lint many files, on all cores when the work is big enough to pay for a process pool, never slower than serially.

The parent reads every file, skips what cannot hold a kernel, answers what the cache knows, and only sends the rest
to worker processes (libcst parsing holds the GIL, so threads would not help). Results come back in discovery order
and the parent alone writes fixes and the cache, so the output is exactly the serial run's.

How the pool is kept from costing more than it saves:

- *Plan by cost.* The cost of a file is estimated by its size (the bytes that passed the prefilter; lint time is
  close to proportional to it, ``bench/run.py`` measures both). The plan simulates largest-first scheduling on
  1, 2, ... workers and takes the fewest workers that reach the shortest simulated run, counting a fixed cost for
  starting the pool and one per worker; when no pool beats the serial run (one or two big files, or too little
  work) the files are linted serially.
- *Largest first.* Files are handed out in decreasing size, big ones alone and small ones in small batches, so a
  big file found late in discovery order does not start last and leave the other workers idle.
- *Small parent.* The parent loads the rules (and so libcst) once before forking: the workers inherit them instead
  of importing them each. Forked workers also inherit the files' bytes and receive only their positions; nothing
  is read or decoded twice, and each result crosses the pipe once.
"""

from __future__ import annotations

import heapq
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from .collector import loaded_objects_frozen
from ..files.prefilter import could_hold_kernel
from .runner import FileResult, Linter, Options, read_path
from ..files.worker_lifeline import bind_to_parent

# The pool's fixed costs, in bytes of linting they are worth: starting forked workers, shipping results back and
# shutting the pool down. Set from the earlier benchmark threshold (on two cores a pool of two paid for itself from
# about 96 kB of source, so its costs were worth about half of that: 40 kB plus 8 kB per worker).
POOL_START_BYTES = 40_000
WORKER_START_BYTES = 8_000
BATCHES_PER_WORKER = 16  # small files travel in batches of about total / (workers * this) bytes

_worker_linter: Linter | None = None
_worker_work: list | None = None  # inherited by forked workers: tasks are positions into it


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def makespan(sizes: Sequence[int], workers: int) -> int:
    """How long (in bytes linted) the slowest of ``workers`` takes when files go out largest first."""
    loads = [0] * workers
    for size in sorted(sizes, reverse=True):
        heapq.heapreplace(loads, loads[0] + size)
    return max(loads)


def worker_count(jobs: int, sizes: Sequence[int]) -> int:
    """``jobs`` > 0 is an explicit request; 0 means: as many cores as pay for themselves, 1 when none does."""
    if jobs > 0:
        return max(1, min(jobs, len(sizes)))
    best, best_cost = 1, sum(sizes)
    for workers in range(2, min(available_cores(), len(sizes)) + 1):
        cost = makespan(sizes, workers) + POOL_START_BYTES + workers * WORKER_START_BYTES
        if cost < best_cost:
            best, best_cost = workers, cost
    return best


def platforms(linter: Linter, paths: Sequence[Path]) -> dict[Path, object]:
    """How a run treats each file (``analysis.platform.Platform``, None when CUDA-only modules are linted anyway
    or the file is not a module), with the verdicts decided over the tree: for `--show-files` and `--verbose`."""
    read = []
    for path in paths:
        data, error = read_path(path)
        if error is None and could_hold_kernel(data):
            read.append((path, data))
    from .tree_order import cuda_only_through_importers, plan as plan_tree

    tree = plan_tree(read)
    through = cuda_only_through_importers(tree, read, linter.platform_of_data) if tree.members else {}
    found = {}
    for index, (path, data) in enumerate(read):
        if index in through:
            from ..analysis.platform import through_importers

            found[path] = through_importers(through[index])
        else:
            found[path] = linter.platform_of_data(path, data)
    return found


def lint_paths(linter: Linter, paths: Sequence[Path], options: Options, jobs: int = 0,
               progress=None) -> list[FileResult]:
    """One result per path, in order; fixes are written (``--fix``) and new results cached by the caller's linter.
    ``progress(n)``, when given, is told each time ``n`` more files are done.

    Modules that other linted modules import from are linted first (``tree_order``), so their jit helpers'
    summaries are known to their importers; each wave is linted as a whole, serially or in a pool."""
    results: list[FileResult | None] = [None] * len(paths)
    candidates: list[tuple[int, Path, bytes]] = []
    unmentioned: list[tuple[int, Path, bytes]] = []  # never mention triton: linted only when linked to a kernel
    for position, path in enumerate(paths):
        data, error = read_path(path)
        if error is not None:
            results[position] = FileResult(path=str(path), error=error)
        elif not could_hold_kernel(data):
            results[position] = FileResult(path=str(path))
            unmentioned.append((position, path, data))
        else:
            candidates.append((position, path, data))
    from .tree_order import cuda_only_through_importers, linked_modules, plan as plan_tree

    if candidates and unmentioned:
        linked = linked_modules([(p, d) for _, p, d in candidates], [(p, d) for _, p, d in unmentioned])
        candidates = sorted([*candidates, *(unmentioned[i] for i in linked)], key=lambda item: item[0])
    advance = progress or (lambda _n: None)
    advance(len(paths) - len(candidates))

    planned = [(path, data) for _, path, data in candidates]
    tree = plan_tree(planned)
    through = cuda_only_through_importers(tree, planned, linter.platform_of_data) if tree.members else {}
    project = None
    for number, wave in enumerate(tree.waves, 1):
        if tree.members and project is None:
            from ..analysis.project import ProjectFacts

            project = ProjectFacts()
        pending = []
        for index in wave:
            position, path, data = candidates[index]
            unit = tree.unit(index, project) if project is not None else None
            if unit is not None and index in through:
                unit.cuda_only_importers = through[index]
                unit.seen += "|cuda-only through its importers"
            cached = linter.cached_result(data, str(path), path, options, None, unit)
            if cached is not None:
                results[position] = cached
                _add_summaries(project, unit, cached)
                advance(1)
            else:
                pending.append((position, path, data, unit))
        # the waves before the last hold the modules others import from, usually a few small ones: a pool only
        # where it pays for itself there, whatever ``jobs`` asks (which the last and largest wave gets)
        outcomes = _lint_wave(linter, pending, options, jobs if number == len(tree.waves) else 0,
                              cap=jobs, advance=advance)
        for (position, path, data, unit), (result, new_data) in zip(pending, outcomes):
            linter.remember(data, path, options, result, None, unit)
            results[position] = linter.write_back(path, result, new_data, options)
            _add_summaries(project, unit, result)
    return results  # type: ignore[return-value]


def _add_summaries(project, unit, result: FileResult) -> None:
    if project is not None and unit is not None and unit.export and result.summaries:
        from ..analysis.project import summaries_from_json

        try:
            project.add(unit.name, summaries_from_json(result.summaries))
        except (KeyError, TypeError, ValueError, IndexError):  # a damaged cache entry: the helpers stay unknown
            pass


def _lint_wave(linter: Linter, pending: list, options: Options, jobs: int, cap: int = 0, advance=None) -> list:
    advance = advance or (lambda _n: None)
    if not pending:
        return []
    workers = worker_count(jobs, [len(data) for _, _, data, _ in pending])
    if cap > 0:
        workers = min(workers, cap)
    work = [(str(path), path, data, unit) for _, path, data, unit in pending]
    uncached = linter.without_cache()  # looked up above, stored below: by the parent only
    # loaded once here, frozen with what is loaded already: no collection walks libcst and the rules, and pool
    # workers inherit them
    with loaded_objects_frozen(load=uncached.load_rules):
        if workers > 1:
            return _in_pool(uncached, work, options, workers, advance)
        outcomes = []
        for filename, path, data, unit in work:
            outcomes.append(uncached.process_bytes(data, filename, path, options, unit))
            advance(1)
        return outcomes


def batches(sizes: Sequence[int], workers: int) -> list[list[int]]:
    """Positions in decreasing size, cut into batches of about ``total / (workers * BATCHES_PER_WORKER)`` bytes.

    A file at least that big is a batch of its own; the small ones at the end share batches, which keeps the
    number of round trips small without leaving a worker with a long tail at the end.
    """
    target = max(1, sum(sizes) // (workers * BATCHES_PER_WORKER))
    found, current, current_size = [], [], 0
    for position in sorted(range(len(sizes)), key=lambda p: -sizes[p]):
        current.append(position)
        current_size += sizes[position]
        if current_size >= target:
            found.append(current)
            current, current_size = [], 0
    if current:
        found.append(current)
    return found


def _in_pool(linter: Linter, work: list, options: Options, workers: int, advance=None) -> list:
    advance = advance or (lambda _n: None)
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = _context()
    forked = context.get_start_method() == "fork"
    outcomes: list = [None] * len(work)
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                 initargs=(linter, work if forked else None, os.getpid())) as pool, \
                _workers_killed_on_interrupt(pool):
            futures = {}
            for batch in batches([len(item[2]) for item in work], workers):
                items = batch if forked else [work[p] for p in batch]
                futures[pool.submit(_lint_batch, items, options)] = batch
            for future in as_completed(futures):
                try:
                    done = future.result()
                except BrokenProcessPool:
                    raise
                except Exception:  # noqa: BLE001 - e.g. a result that cannot be pickled: this batch goes serially
                    continue
                for position, outcome in zip(futures[future], done):
                    outcomes[position] = outcome
                advance(len(done))
    except (BrokenProcessPool, OSError):
        pass  # a worker died (killed, out of memory) or none could start: what is missing is linted serially
    for position, outcome in enumerate(outcomes):
        if outcome is None:
            filename, path, data, unit = work[position]
            outcomes[position] = linter.process_bytes(data, filename, path, options, unit)
            advance(1)
    return outcomes


@contextmanager
def _workers_killed_on_interrupt(pool) -> Iterator[None]:
    """Ctrl-C (or any exception leaving the pool early) ends the workers at once: leaving the pool would otherwise
    wait for every batch still queued before the run could exit."""
    try:
        yield
    except BaseException:
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                process.kill()
            except (OSError, AttributeError, ValueError):
                pass
        pool.shutdown(wait=False, cancel_futures=True)
        raise


def _context():
    """Fork where it is safe (Linux): workers inherit the loaded rules and the files' bytes instead of receiving them."""
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _start_worker(linter: Linter, work: list | None, parent_pid: int) -> None:
    global _worker_linter, _worker_work
    bind_to_parent(parent_pid)  # a worker never outlives the run (SIGKILL of the parent included)
    _worker_linter, _worker_work = linter, work


def _lint_batch(items: list, options: Options) -> list[tuple[FileResult, bytes | None]]:
    return [_lint_one(item, options) for item in items]


def _lint_one(item, options: Options) -> tuple[FileResult, bytes | None]:
    """``item`` is a position into the inherited work (forked workers) or the work item itself."""
    filename, path, data, unit = _worker_work[item] if isinstance(item, int) else item
    assert _worker_linter is not None
    return _worker_linter.process_bytes(data, filename, path, options, unit)
