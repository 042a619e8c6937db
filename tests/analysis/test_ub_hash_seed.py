"""The UB estimate reports at the same place whatever the interpreter's string hash seed: two tile sizes set to the
same value at one launch tie, and the tie must break by the kernel's signature, not by a set's iteration order."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import REPO

TIED_SIZES = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def wide(x, y, n, BLOCK_A: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_C: tl.constexpr):
        rows = tl.arange(0, BLOCK_A)
        cols = tl.arange(0, BLOCK_B)
        more = tl.arange(0, BLOCK_C)
        a = tl.load(x + rows[:, None] * n + cols[None, :])
        b = tl.load(x + rows[:, None] * n + more[None, :])
        tl.store(y + rows[:, None] * n + cols[None, :], a * 2 + b)

    def run(x, y):
        wide[(1,)](x, y, x.shape[1],
                   BLOCK_C=512,
                   BLOCK_B=512,
                   BLOCK_A=512)
    """
)


def test_ub_findings_do_not_depend_on_the_hash_seed(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(TIED_SIZES, encoding="utf-8")
    outputs = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": str(seed)}
        run = subprocess.run([sys.executable, "-m", "ascendlint", "check", "--isolated", "--no-cache", "--exit-zero",
                              "--select", "ASC305", "--format", "concise", str(path)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
        assert "ASC305" in run.stdout, run.stdout + run.stderr
        outputs.add(run.stdout)
    assert len(outputs) == 1, outputs
    assert "k.py:18:" in outputs.pop()  # BLOCK_A's argument: the first of the tied sizes in the signature
