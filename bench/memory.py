"""Does memory stay flat over a long run? Peak resident memory of a serial run over many copies of one large file.

The file is a generated kernel module of about 1,000 lines with ``@triton.jit`` on every function (the most
analysis per line; ``bench.generate``), copied 20 and 160 times under distinct names. A run that keeps nothing
per file peaks at about the same memory for both; the bar is 2x.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench import generate
from bench.corpus import fresh_root
from bench.measure import Run, run_process

FILE_LINES = 1_000
FEW, MANY = 20, 160
BAR = 2.0


def measure(work: Path, limit: float, extra_args: list[str]) -> dict[int, Run]:
    text = generate.kernel_module(FILE_LINES, decorate=True)
    found = {}
    for copies in (FEW, MANY):
        root = work / f"memory{copies}"
        fresh_root(root)
        for number in range(copies):
            (root / f"decorated_{number:03d}.py").write_text(text, encoding="utf-8")
        command = [sys.executable, "-m", "ascendlint", "check", str(root), "--no-cache", "--jobs", "1",
                   "--exit-zero", "--quiet", "--format", "concise", *extra_args]
        found[copies] = run_process(command, limit)
    return found


def ratio(runs: dict[int, Run]) -> float:
    if any(r.over_limit for r in runs.values()):
        return float("nan")
    return runs[MANY].max_rss_mb / runs[FEW].max_rss_mb


def render(runs: dict[int, Run]) -> list[str]:
    lines = generate.kernel_module(FILE_LINES, decorate=True).count("\n")
    out = [f"A serial run (`--jobs 1 --no-cache`) over copies of one generated {lines:,}-line module with every "
           "function decorated:", "", "| copies | peak RSS (MB) | wall (s) | CPU (s) |", "|---:|---:|---:|---:|"]
    for copies, run in runs.items():
        state = " (over limit)" if run.over_limit else ""
        out.append(f"| {copies} | {run.max_rss_mb:,.0f}{state} | {run.wall:.1f} | {run.cpu:.1f} |")
    return out
