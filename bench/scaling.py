"""Does lint time grow at most linearly with the code in one file? Two checks on generated kernel modules.

- *Repeated kernels*: each kernel module of this repository (``examples/``, ``reference_kernels/``) repeated 1, 2,
  4 and 8 times in one file (renamed copies, ``bench.generate``). Linear growth means ``t(n) <= n * t(1)``; the
  fixed per-file costs (rule setup) make a linear analysis come out below that.
- *One long module*: a 10,000-line generated kernel module against the same code as 10 modules of 1,000 lines.

Every file is linted alone in one worker process (``bench.measure.lint_files_alone``): CPU seconds, medians.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench import generate
from bench.corpus import REPO, fresh_root
from bench.measure import FileTiming, lint_files_alone

COPIES = (1, 2, 4, 8)
LINEAR_SLACK = 1.1  # t(n) / (n t(1)) allowed: 10% for measurement noise on a shared machine
LONG_MODULE_LINES, LONG_MODULE_PARTS = 10_000, 10
LONG_MODULE_BAR = 1.2


def kernel_modules() -> list[Path]:
    """The repository's kernel modules (helpers such as ``_cores.py`` hold no kernel and are left out)."""
    found = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "reference_kernels").glob("*.py"))
    return [p for p in found if not p.name.startswith("_")]


@dataclass
class ScalingResult:
    rows: list[tuple[str, int, list[FileTiming]]]  # module, lines of one copy, timings for COPIES
    parts: list[FileTiming]
    whole: FileTiming

    def worst_growth(self) -> float:
        """The largest ``t(n) / (n t(1))`` over every module and copy count (nan when a file ran over limit)."""
        worst = 0.0
        for _, _, timings in self.rows:
            base = timings[0].lint_cpu
            for copies, timing in zip(COPIES[1:], timings[1:]):
                if timing.over_limit or timings[0].over_limit:
                    return float("nan")
                worst = max(worst, timing.lint_cpu / (copies * base))
        return worst

    def long_module_ratio(self) -> float:
        if self.whole.over_limit or any(p.over_limit for p in self.parts):
            return float("nan")
        return self.whole.lint_cpu / sum(p.lint_cpu for p in self.parts)


def measure(work: Path, repeat: int, limit: float, select=None, ignore=None) -> ScalingResult:
    root = work / "scaling"
    fresh_root(root)
    files, rows = [], []
    for module in kernel_modules():
        text = module.read_text(encoding="utf-8")
        paths = []
        for copies in COPIES:
            path = root / f"{module.parent.name}_{module.stem}_x{copies}.py"
            path.write_text(generate.repeated(text, copies), encoding="utf-8")
            paths.append(path)
        rows.append((f"{module.parent.name}/{module.name}", text.count("\n"), paths))
        files.extend(paths)
    parts, whole = generate.split_and_whole(LONG_MODULE_LINES, LONG_MODULE_PARTS)
    part_paths = []
    for number, part in enumerate(parts):
        path = root / f"long_part{number:02d}.py"
        path.write_text(part, encoding="utf-8")
        part_paths.append(path)
    whole_path = root / "long_whole.py"
    whole_path.write_text(whole, encoding="utf-8")
    files.extend([*part_paths, whole_path])

    timings = {t.path: t for t in lint_files_alone(files, root, repeat, limit, select, ignore)}
    return ScalingResult(
        rows=[(name, lines, [timings[str(p)] for p in paths]) for name, lines, paths in rows],
        parts=[timings[str(p)] for p in part_paths],
        whole=timings[str(whole_path)],
    )


def _ms(timing: FileTiming) -> str:
    return "over limit" if timing.over_limit else f"{timing.lint_cpu * 1000:.0f}"


def render(result: ScalingResult, repeat: int) -> list[str]:
    head = " | ".join(f"x{n} (ms)" for n in COPIES)
    out = [
        f"Each kernel module repeated in one file (renamed copies); lint CPU milliseconds, each file alone in one "
        f"process, median of {repeat}; the last column is the largest `t(n) / (n t(1))` (linear: at most 1).",
        "",
        f"| module | lines | {head} | growth |",
        "|---|---:|" + "---:|" * len(COPIES) + "---:|",
    ]
    for name, lines, timings in result.rows:
        base = timings[0].lint_cpu
        growth = max((t.lint_cpu / (n * base) for n, t in zip(COPIES[1:], timings[1:])), default=float("nan"))
        cells = " | ".join(_ms(t) for t in timings)
        out.append(f"| {name} | {lines} | {cells} | {growth:.2f} |")
    parts_cpu = sum(p.lint_cpu for p in result.parts)
    parts_parse = sum(p.parse_cpu for p in result.parts)
    part_lines = [p.lines for p in result.parts]
    out += [
        "",
        f"One generated module of {result.whole.lines:,} lines against the same code as {len(result.parts)} modules "
        f"of {min(part_lines):,}-{max(part_lines):,} lines (CPU seconds, each file alone, median of {repeat}):",
        "",
        "| files | lint | libcst parse-only |",
        "|---|---:|---:|",
        f"| {len(result.parts)} modules | {parts_cpu:.3f} | {parts_parse:.3f} |",
        f"| 1 module | {'over limit' if result.whole.over_limit else f'{result.whole.lint_cpu:.3f}'} | "
        f"{result.whole.parse_cpu:.3f} |",
        f"| ratio | {result.long_module_ratio():.2f} | {result.whole.parse_cpu / parts_parse:.2f} |",
    ]
    return out
