"""An error is exit 2 even when stderr cannot take its message (a full disk, a closed descriptor): the message
failing to print made a traceback, and Python's exit status 1 read as "findings"."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _run_with_stderr(stderr, *args: str, cwd) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=stderr, env=env, timeout=60).returncode


@pytest.mark.parametrize("args", [("check", "missing.py"), ("check", "--select", "NOPE", "."),
                                  ("check", ".", "--config", "missing.toml")],
                         ids=["missing-file", "unknown-rule", "missing-config"])
@pytest.mark.parametrize("stderr", ["full", "closed"])
def test_an_error_exits_2_whatever_becomes_of_its_message(tmp_path, args, stderr):
    (tmp_path / "k.py").write_text("import triton\n")
    if stderr == "full":
        if not os.path.exists("/dev/full"):
            pytest.skip("needs /dev/full")
        with open("/dev/full", "w") as full:
            assert _run_with_stderr(full, *args, cwd=tmp_path) == 2
    else:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = " ".join([sys.executable, "-m", "ascendlint", *args]) + " 2>&- >/dev/null"
        assert subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, timeout=60).returncode == 2
