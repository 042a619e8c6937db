"""Measure ascendlint against libcst parsing, flake8, fixit and ruff on the same files; report medians and ratios.

Run by hand (it is not a test; it takes a few minutes on two cores):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/run.py                 # generated trees; rewrites the numbers in docs/performance.md
    .venv/bin/python bench/run.py --tree PATH     # any tree of yours; prints the table only

Every timing is the wall time of a fresh process (startup included), the median of ``--repeat`` runs, all taken
in the same invocation so the ratios compare like with like.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import profile_rules  # noqa: E402
from bench.corpus import REPO, Tree, build_kernel_tree, build_mixed_tree, line_count  # noqa: E402

PYTHON = sys.executable
BIN = Path(sys.executable).parent
DOC = REPO / "docs" / "performance.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
PARSE_ONLY = (
    "import sys, libcst\n"
    "for name in open(sys.argv[1]).read().split('\\n'):\n"
    "    try:\n"
    "        libcst.parse_module(open(name, 'rb').read().decode('utf-8'))\n"
    "    except Exception:\n"
    "        pass\n"
)


@dataclass
class Measurement:
    label: str
    seconds: float
    lines: int
    runs: list[float] = field(default_factory=list)

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds else float("inf")


CODE = {"path": str(REPO)}  # where the measured processes import ascendlint from (see snapshot_code)


def snapshot_code(work: Path) -> Path:
    """A frozen copy of ascendlint and its rules, so that edits made to the tree during a run change nothing."""
    target = work / "code"
    shutil.rmtree(target, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "ascendlint", target / "ascendlint", ignore=skip)
    shutil.copytree(REPO / "checks", target / "ascendlint" / "checks", ignore=skip)
    CODE["path"] = str(target)
    return target


def timed(command: list[str], repeat: int, cwd: Path | None = None, before=None) -> list[float]:
    runs = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                       env={**os.environ, "PYTHONPATH": CODE["path"]})
        runs.append(time.perf_counter() - start)
    return runs


def ascendlint(*args: str) -> list[str]:
    return [PYTHON, "-m", "ascendlint", "check", *args, "--exit-zero", "--format", "concise", "--quiet"]


def tool(name: str) -> str | None:
    found = BIN / name
    return str(found) if found.exists() else shutil.which(name)


def measure_tree(tree: Tree, repeat: int, with_fixit: bool, prefix: str) -> dict[str, Measurement]:
    lines = tree.lines
    root = str(tree.root)
    cache = tree.root / ".ascendlint_cache"
    listing = tree.root.parent / f"{tree.root.name}.files"
    listing.write_text("\n".join(str(p) for p in tree.files if _is_utf8(p)))
    results: dict[str, Measurement] = {}

    def add(label: str, runs: list[float], measured_lines: int = lines) -> None:
        results[label] = Measurement(f"{prefix} {label}", statistics.median(runs), measured_lines, runs)

    slow_repeat = 1 if lines > 200_000 else repeat  # flake8 needs minutes for a whole standard library

    add("libcst parse-only", timed([PYTHON, "-c", PARSE_ONLY, str(listing)], repeat))
    add("ascendlint cold, 1 process", timed(ascendlint(root, "--no-cache", "--jobs", "1"), repeat))
    add("ascendlint cold, all cores", timed(ascendlint(root, "--no-cache"), repeat))
    drop_cache = lambda: shutil.rmtree(cache, ignore_errors=True)  # noqa: E731
    add("ascendlint cold, writing the cache", timed(ascendlint(root), repeat, before=drop_cache))
    add("ascendlint warm (nothing changed)", timed(ascendlint(root), repeat))
    if tool("ruff"):
        ruff = [tool("ruff"), "check", "--no-cache", "--exit-zero", "--quiet", root]
        add("ruff check --no-cache", timed(ruff, repeat))
    if tool("flake8"):
        add("flake8 (all cores)", timed([tool("flake8"), "--exit-zero", root], slow_repeat))
    first_copy = tree.root / "copy000"
    if with_fixit and tool("fixit") and first_copy.is_dir():  # fixit manages ~1k lines/s: one copy is enough
        copy_lines = sum(line_count(p) for p in first_copy.glob("*.py"))
        add("fixit lint (default rules), first copy only", timed([tool("fixit"), "lint", str(first_copy)], 1),
            copy_lines)
    return results


def single_file_runs(kernel: Path, plain: Path, repeat: int) -> dict[str, float]:
    """What a pre-commit hook pays per invocation on one file."""
    edits = iter(range(10**6))

    def edit_kernel() -> None:
        with open(kernel, "a", encoding="utf-8") as handle:
            handle.write(f"# edit {next(edits)}\n")

    median = statistics.median
    return {
        "python -c pass": median(timed([PYTHON, "-c", "pass"], repeat)),
        "ascendlint --version": median(timed([PYTHON, "-m", "ascendlint", "--version"], repeat)),
        "one file without kernels": median(timed(ascendlint(str(plain)), repeat)),
        "one kernel file, unchanged (cache hit)": median(timed(ascendlint(str(kernel)), repeat)),
        "one kernel file, edited (cache miss)": median(timed(ascendlint(str(kernel)), repeat, before=edit_kernel)),
        "one kernel file, --no-cache": median(timed(ascendlint(str(kernel), "--no-cache"), repeat)),
    }


def discovery_seconds(root: Path) -> float:
    from ascendlint.config import load_settings
    from ascendlint.discovery import discover
    from ascendlint.registry import all_rules

    settings = load_settings(root / "pyproject.toml", all_rules())
    start = time.perf_counter()
    discover([root], settings)
    return time.perf_counter() - start


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def machine_facts() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for name in ("libcst", "ruff", "flake8", "fixit"):
        try:
            from importlib.metadata import version

            versions.append(f"{name} {version(name)}")
        except Exception:  # noqa: BLE001 - a missing tool is reported as such
            versions.append(f"{name} (not installed)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg()) if hasattr(os, "getloadavg") else "unknown"
    return [
        f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load average at the end: {load}",
        f"machine: {cpu}, {cores} usable cores, {platform.system()} {platform.release()}",
        f"python: {platform.python_version()}; {', '.join(versions)}",
    ]


def render(trees: dict[str, Tree], results: dict[str, dict[str, Measurement]], single: dict[str, float],
           discovery: float, rule_profile: list[str], cpu_ratio: float | None, repeat: int) -> list[str]:
    out = [*(f"- {fact}" for fact in machine_facts()), f"- every time: median of {repeat} fresh processes", ""]
    for name, tree in trees.items():
        found = results[name]
        out += [f"### {name} tree: {len(tree.files)} files, {tree.lines} lines", "",
                "| run | median wall (s) | lines/s | runs (s) |", "|---|---:|---:|---|"]
        for label, m in found.items():
            runs = ", ".join(f"{r:.2f}" for r in m.runs)
            out.append(f"| {label} | {m.seconds:.3f} | {m.lines_per_second:,.0f} | {runs} |")
        out.append("")
    out += ["### one file, as a pre-commit hook runs it", "", "| run | median wall (ms) |", "|---|---:|"]
    out += [f"| {label} | {seconds * 1000:.0f} |" for label, seconds in single.items()]
    out += ["", f"Discovery of the mixed tree (walk, excludes, .gitignore), in process: {discovery * 1000:.0f} ms.", ""]
    out += ["### targets", "", "| target | measured | limit | met |", "|---|---:|---:|---|"]
    for label, value, limit, higher_is_better in targets(results, single, cpu_ratio):
        met = value >= limit if higher_is_better else value <= limit
        out.append(f"| {label} | {value:,.2f} | {'>=' if higher_is_better else '<='} {limit:,} | "
                   f"{'yes' if met else 'NO'} |")
    out += ["", "### where the time goes (kernel files, in process)", "", *rule_profile]
    return out


def targets(results, single, cpu_ratio) -> list[tuple[str, float, float, bool]]:
    kernel, mixed = results.get("kernel", {}), results.get("mixed", {})
    rows = []
    if kernel:
        rows.append(("kernel cold, 1 process / libcst parse-only (wall, fresh processes)",
                     kernel["ascendlint cold, 1 process"].seconds / kernel["libcst parse-only"].seconds, 1.5, False))
    if cpu_ratio is not None:
        rows.append(("kernel lint / libcst parse (CPU, in process, every rule)", cpu_ratio, 1.5, False))
    if mixed and "ruff check --no-cache" in mixed:
        rows.append(("mixed cold, all cores / ruff --no-cache",
                     mixed["ascendlint cold, all cores"].seconds / mixed["ruff check --no-cache"].seconds, 2.0, False))
    for name, found in results.items():
        rows.append((f"{name} warm, lines/s (wall, startup included)",
                     found["ascendlint warm (nothing changed)"].lines_per_second, 1_000_000, True))
    for label in ("one file without kernels", "one kernel file, unchanged (cache hit)",
                  "one kernel file, edited (cache miss)"):
        if label in single:
            rows.append((f"{label} (ms)", single[label] * 1000, 250, False))
    return rows


def write_doc(lines: list[str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{START}\n" + "\n".join(lines) + f"\n{END}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="measure this tree only (no generated trees, no doc update)")
    parser.add_argument("--kernel-lines", type=int, default=30_000, help="size of the generated kernel tree")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ascendlint-bench")
    parser.add_argument("--no-fixit", action="store_true", help="skip fixit (about 1k lines/s)")
    parser.add_argument("--no-mixed", action="store_true", help="skip the standard-library tree")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md alone")
    args = parser.parse_args()

    snapshot_code(args.work)
    if args.tree is not None:
        files = sorted(p for p in args.tree.rglob("*.py") if p.is_file())
        trees = {"given": Tree(args.tree.resolve(), files)}
    else:
        trees = {"kernel": build_kernel_tree(args.work / "kernel", args.kernel_lines)}
        if not args.no_mixed:
            trees["mixed"] = build_mixed_tree(args.work / "mixed")
    results = {}
    for name, tree in trees.items():
        print(f"measuring the {name} tree ({len(tree.files)} files, {tree.lines} lines) ...", flush=True)
        results[name] = measure_tree(tree, args.repeat, with_fixit=not args.no_fixit and name == "kernel", prefix=name)

    single, discovery, rule_profile, cpu_ratio = {}, 0.0, [], None
    if args.tree is None:
        kernel_tree = trees["kernel"]
        kernel_file = next(p for p in kernel_tree.files if "matmul_epilogue" in p.name)
        plain = kernel_tree.root / "plain.py"
        plain.write_text("def add(a, b):\n    return a + b\n")
        single = single_file_runs(kernel_file, plain, args.repeat)
        discovery = discovery_seconds(trees["mixed"].root) if "mixed" in trees else 0.0
        rule_profile, cpu_ratio = profile_rules.report(kernel_tree.files)
    lines = render(trees, results, single, discovery, rule_profile, cpu_ratio, args.repeat)
    print("\n".join(lines))
    if args.tree is None and not args.no_write and not args.no_mixed:
        write_doc(lines)
        print(f"\nwrote {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
