"""One run of ``bishengir-compile`` on a Linalg module, read as it happens: the memory display is copied the moment
the compiler announces its first overflow retry, so the verdict is the first attempt's (the launch's options)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from . import verdict as v
from ..files.worker_lifeline import die_with_parent
from .toolchain import compiler_binary

DISPLAY_FILES = ("memory_info_aiv.json", "memory_info_aic.json")


def _read_displays(folder: Path) -> list[v.Scope]:
    scopes: list[v.Scope] = []
    for name in DISPLAY_FILES:
        path = folder / name
        try:
            display = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        scopes.extend(v.scopes_from_display(display))
    return scopes


def compile_linalg(linalg: str, flags: list[str], target: str, timeout: float) -> v.Verdict:
    """The verdict; a compiler that dies by a signal is run once more before the run says it crashed."""
    result = _compile_once(linalg, flags, target, timeout)
    if result.status == v.NOT_COMPILED and result.message.startswith(CRASHED):
        result = _compile_once(linalg, flags, target, timeout)
    return result


CRASHED = "the compiler crashed"
# One thread per compile: the workers already run compiles side by side, and BiShengIR 1.2.0's threaded pass
# manager crashes now and then (a segmentation fault in about one run in twelve on one kernel; none in twenty
# with threading off).
SINGLE_THREADED = "--mlir-disable-threading"


def _compile_once(linalg: str, flags: list[str], target: str, timeout: float) -> v.Verdict:
    binary = compiler_binary(target)
    if binary is None:
        return v.Verdict(v.NOT_COMPILED, message=f"no BiShengIR binary for {target}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascendlint-bisheng-") as work:
        folder = Path(work)
        (folder / "kernel.mlir").write_text(linalg, encoding="utf-8")
        command = [str(binary), "kernel.mlir", SINGLE_THREADED, *flags, "--enable-memory-display", "-o", "kernel"]
        process = subprocess.Popen(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, errors="replace",
                                   env={**os.environ, "PATH": os.environ.get("PATH", "")},
                                   preexec_fn=die_with_parent if os.name == "posix" else None)  # never outlives its worker
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        lines: list[str] = []
        first_attempt: list[v.Scope] = []
        try:
            for line in process.stderr:
                lines.append(line)
                if not first_attempt and v.RETRY_NOTE in line:
                    first_attempt = _read_displays(folder)
            process.wait()
        finally:
            timer.cancel()
        elapsed = time.monotonic() - started
        if process.returncode is not None and process.returncode < 0 and elapsed >= timeout:
            return v.Verdict(v.NOT_COMPILED, message=f"the compiler ran past the {timeout:g} s limit",
                             seconds=elapsed)
        stderr = "".join(lines)
        if process.returncode is not None and process.returncode < 0 and v.REACHED_LAST_STEP not in stderr:
            return v.Verdict(v.NOT_COMPILED, message=f"{CRASHED} (signal {-process.returncode})", seconds=elapsed)
        result = v.from_compiler(stderr, first_attempt, _read_displays(folder))
        result.seconds = round(elapsed, 3)
        return result
