import inspect

import pytest
from click.testing import CliRunner

from ascendlint.cli import main

KERNEL = (
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "def run(kernel, x):\n"
    "    kernel[(1,)](x, num_warps=4)\n"
)
FIXED_KERNEL = KERNEL.replace(", num_warps=4", "")


@pytest.fixture
def run_in_process():
    """Run ``ascendlint`` in this process, so a test can monkeypatch file-system calls (stdout and stderr apart)."""
    separate = {"mix_stderr": False} if "mix_stderr" in inspect.signature(CliRunner).parameters else {}

    def _run(*args: str):
        return CliRunner(**separate).invoke(main, list(args), catch_exceptions=False)

    return _run
