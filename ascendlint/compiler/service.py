"""Verdicts for compile jobs: from the content-keyed cache when known, otherwise from worker processes run in
parallel, each under a time and a memory limit and bound to die with the process that started it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..files.worker_lifeline import die_with_parent
from . import verdict as v
from .jobs import CompileJob

FRONTEND_TIMEOUT = 60.0  # seconds, per job
COMPILER_TIMEOUT = 120.0  # seconds, per job
MEMORY_MB = 4096  # address space of one worker (triton and BiShengIR run in it)
CACHE_ENV = "ASCENDLINT_COMPILER_CACHE"
_UNCACHED = ("ran past", "worker crash", "worker stopped", "compiler crashed")  # verdicts that may differ on another run
_memory: dict[str, v.Verdict] = {}
# The worker runs isolated (``-I``: no PYTHONPATH, no user site, no script folder) in a folder of its own, so a
# module the linted project plants (``triton.py`` beside the kernels) is never what it imports; ascendlint itself
# is found where this process found it.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOTSTRAP = ("import sys; root = sys.argv.pop(1); sys.path.insert(0, root); "
              "from ascendlint.compiler.worker import main; main(*sys.argv[1:])")


def cache_folder() -> Path | None:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    from ..catalog.rule_index import _user_cache

    base = _user_cache()
    return base / "compiler" if base is not None else None


def _cached(key: str) -> v.Verdict | None:
    if key in _memory:
        return _memory[key]
    folder = cache_folder()
    if folder is None:
        return None
    try:
        data = json.loads((folder / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
        found = v.Verdict.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    _memory[key] = found
    return found


def _store(key: str, found: v.Verdict) -> None:
    _memory[key] = found
    if any(marker in found.message for marker in _UNCACHED):
        return
    folder = cache_folder()
    if folder is None:
        return
    try:
        shard = folder / key[:2]
        shard.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=shard, prefix=".verdict-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(found.as_json(), out)
        os.replace(temporary, shard / f"{key}.json")
    except OSError:
        pass


def _die_with_parent() -> None:  # runs in the child between fork and exec: a process group of its own
    os.setsid()
    die_with_parent()


def default_workers() -> int:
    """One compile worker per core; one per lint worker when files are linted in parallel (their pool already
    spreads over the cores)."""
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def verdicts(jobs: list[CompileJob], workers: int | None = None, frontend_timeout: float = FRONTEND_TIMEOUT,
             compiler_timeout: float = COMPILER_TIMEOUT) -> dict[str, v.Verdict]:
    """Verdict by job key; every job gets one (``NOT_COMPILED`` with the reason when none could be had)."""
    keyed = {job.key(): job for job in jobs}
    found = {key: hit for key in keyed if (hit := _cached(key)) is not None}
    missing = [key for key in keyed if key not in found]
    if not missing:
        return found
    count = max(1, min(workers or default_workers(), len(missing)))
    chunks = [missing[i::count] for i in range(count)]
    with tempfile.TemporaryDirectory(prefix="ascendlint-compile-") as work:
        out = Path(work)
        running = []
        for number, chunk in enumerate(chunks):
            batch = out / f"jobs-{number}.json"
            batch.write_text(json.dumps([{**keyed[k].as_json(), "key": k, "flags": keyed[k].compiler_flags()}
                                         for k in chunk]), encoding="utf-8")
            env = {**os.environ, "ASCENDLINT_COMPILER_MEMORY_MB": os.environ.get("ASCENDLINT_COMPILER_MEMORY_MB",
                                                                                str(MEMORY_MB))}
            env.pop("TRITON_INTERPRET", None)
            process = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOTSTRAP, _PACKAGE_ROOT, str(batch), str(out), str(frontend_timeout),
                 str(compiler_timeout)],
                cwd=out, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                preexec_fn=_die_with_parent if os.name == "posix" else None)
            deadline = time.monotonic() + (frontend_timeout + compiler_timeout) * len(chunk) + 30
            running.append((process, chunk, deadline))
        for process, chunk, deadline in running:
            try:
                _, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill(process)
                stderr = b""
            for key in chunk:
                path = out / f"{key}.json"
                try:
                    result = v.Verdict.from_json(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, ValueError, KeyError, TypeError):
                    tail = (stderr or b"").decode("utf-8", "replace").strip().splitlines()[-1:]
                    result = v.Verdict(v.NOT_COMPILED, message="worker stopped before this job" +
                                       (f": {tail[0][:300]}" if tail else ""))
                _store(key, result)
                found[key] = result
    return found


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    process.wait()
