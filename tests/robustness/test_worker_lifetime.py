"""Workers never outlive the run: whatever signal ends the main process, SIGKILL included, no ascendlint process
is left a second later (they used to wait on the pool's queue for ever, holding the terminal's output open)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has exited; only its parent's bookkeeping is left


@pytest.fixture
def busy_tree(tmp_path):
    """Enough kernels that the pool is busy for several seconds."""
    for copy in range(30):
        for kernel in sorted((REPO / "reference_kernels").glob("[a-z]*.py")):
            shutil.copy(kernel, tmp_path / f"{kernel.stem}_{copy}.py")
    return tmp_path


def _start(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "ascendlint", "check", str(tree), "--jobs", "2", "--no-cache",
                             "--select", "ALL"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


@pytest.mark.parametrize("name", ["SIGKILL", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGINT"])
def test_no_worker_is_left_a_second_after_the_main_process_ends(busy_tree, name):
    main = _start(busy_tree)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline and main.poll() is None:
            time.sleep(0.05)
            workers = _children(main.pid)
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(0.3)  # the workers are linting now
        main.send_signal(getattr(signal, name))
        main.wait(timeout=30)
        ended = time.monotonic()
        while any(_alive(pid) for pid in workers) and time.monotonic() - ended < 1:
            time.sleep(0.02)
        assert not [pid for pid in workers if _alive(pid)], f"workers left after {name}"
    finally:
        for pid in workers | _children(main.pid) | {main.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        main.wait()
