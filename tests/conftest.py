import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# compile verdicts of this run live in a folder of its own, never in the user's cache, removed when the run ends
if "ASCENDLINT_COMPILER_CACHE" not in os.environ:
    _verdicts = Path(tempfile.mkdtemp(prefix="ascendlint-test-verdicts-"))
    os.environ["ASCENDLINT_COMPILER_CACHE"] = str(_verdicts)
    atexit.register(shutil.rmtree, _verdicts, ignore_errors=True)


def run_cli(*args: str, cwd: Path | str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the real ``ascendlint`` command in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "ascendlint", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write(tmp_path):
    """Write a dedented file under tmp_path and return its path."""

    def _write(name: str, code: str, newline: str = "\n") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(textwrap.dedent(code).lstrip("\n").replace("\n", newline).encode())
        return path

    return _write
