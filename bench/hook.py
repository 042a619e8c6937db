"""One edited real kernel file as a pre-commit hook checks it, in turns with flake8 on the same file.

A hook runs the installed ``ascendlint check FILE`` in a fresh process for the files a commit changed: start-up
is most of what it costs. The file is copied into a project folder of its own (a ``pyproject.toml`` with an
``[tool.ascendlint]`` table, as a configured project has) and a line is appended before every ascendlint run, so
every run is a result-cache miss that reads, parses and lints the file; the rule index is current, as it is on
any machine after the first run. The measured code is the benchmark's byte-compiled snapshot, and every command
(ascendlint, flake8, ``python -c``) runs once before the rounds, so that each reads its modules' byte code as an
installed tool does, never compiles them from source (``bench.run.snapshot_code``). Every round runs each
command once (``bench.measure.interleaved``), so the ratio to flake8 compares runs made under the same load; the
load average is read before and after, because on a shared machine it decides the absolute figures. CPU time
(user and system of the process) is reported beside the wall time: it moves less with the load.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.corpus import CONFIG, line_count, real_tree_files
from bench.measure import Series, interleaved, run_process

WALL_BAR_MS = 250.0  # on a quiet machine
FLAKE8_BAR = 2.5  # ascendlint's median wall time over flake8's, same file, same rounds
ROUNDS = 15


@dataclass
class HookResult:
    file: Path  # the measured copy
    source: Path  # where it was copied from
    lines: int
    series: dict[str, Series]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def ms(self, label: str) -> float:
        return self.series[label].wall * 1000

    @property
    def ratio(self) -> float:
        return self.series[ASCENDLINT].wall / self.series[FLAKE8].wall


ASCENDLINT = "ascendlint check FILE (edited: a cache miss)"
FLAKE8 = "flake8 FILE"


def pick_file(tree: Path) -> Path | None:
    """The kernel file (one the prefilter passes) of median size among the tree's files (``real_tree_files``)."""
    from ascendlint.files.prefilter import could_hold_kernel

    kernels = sorted((p for p in real_tree_files(tree) if could_hold_kernel(p.read_bytes())),
                     key=lambda p: (p.stat().st_size, str(p)))
    return kernels[len(kernels) // 2] if kernels else None


def measure(ascendlint: list[str], source: Path, work: Path, rounds: int = ROUNDS, limit: float = 120.0,
            tool=shutil.which) -> HookResult:
    """``ascendlint``: the command line that checks one file (the installed script with its options)."""
    folder = work / "hook"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(CONFIG)
    target = folder / source.name
    shutil.copyfile(source, target)
    edits = iter(range(10**6))

    def edited() -> list[str]:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"# edit {next(edits)}\n")
        return [*ascendlint, str(target)]

    commands = [
        ("python -c pass", [sys.executable, "-c", "pass"], folder),
        ("python -c 'import libcst'", [sys.executable, "-c", "import libcst"], folder),
        (ASCENDLINT, edited, folder),
    ]
    flake8 = tool("flake8")
    if flake8:
        commands.append((FLAKE8, [flake8, "--isolated", "--exit-zero", str(target)], folder))
    ruff = tool("ruff")
    if ruff:
        commands.append(("ruff check --no-cache FILE",
                         [ruff, "check", "--no-cache", "--isolated", "--exit-zero", "--quiet", str(target)], folder))
    for _, command, cwd in commands:  # compiles what lacks byte code; ascendlint's first run stores the rule index
        run_process([*ascendlint, str(target)] if callable(command) else command, limit, cwd)
    before = os.getloadavg()
    found = interleaved(commands, rounds, limit)
    after = os.getloadavg()
    return HookResult(target, source, line_count(source), {s.label: s for s in found}, before, after)


def render(result: HookResult, shown_source: str) -> list[str]:
    load = lambda values: ", ".join(f"{v:.2f}" for v in values)  # noqa: E731
    out = [
        f"`{shown_source}` ({result.lines} lines), copied into a project folder of its own and edited before "
        f"every ascendlint run (a result-cache miss; the rule index current). {len(next(iter(result.series.values())).runs)} "
        "rounds, each command once per round, every command run once before them; byte code compiled in advance "
        "(nothing is compiled from source in a measured run); wall and CPU (user + system) milliseconds.",
        "",
        f"Load average (1, 5, 15 min) before: {load(result.load_before)}; after: {load(result.load_after)} "
        f"({os.cpu_count()} cores).",
        "",
        "| run | wall median (ms) | wall min (ms) | CPU median (ms) | wall runs (ms) |",
        "|---|---:|---:|---:|---|",
    ]
    for label, found in result.series.items():
        walls = [r.wall * 1000 for r in found.finished]
        runs = ", ".join(f"{w:.0f}" for w in walls)
        cpu = statistics.median(r.cpu * 1000 for r in found.finished)
        out.append(f"| {label} | {statistics.median(walls):.0f} | {min(walls):.0f} | {cpu:.0f} | {runs} |")
    return [*out, ""]


def target_rows(result: HookResult) -> list[tuple[str, float, float, bool]]:
    rows = [("an edited real kernel file, as a hook runs it (ms, wall median; bar for a quiet machine)",
             result.ms(ASCENDLINT), WALL_BAR_MS, False)]
    if FLAKE8 in result.series:
        rows.append(("the same, over flake8 on the same file (wall medians, in turns)", result.ratio, FLAKE8_BAR,
                     False))
    return rows
