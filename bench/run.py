"""Measure ascendlint against libcst parsing, flake8, fixit and ruff on the same files; report medians and ratios.

Run by hand (it is not a test; the whole benchmark takes a good half hour on two shared cores):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/run.py                          # generated trees and checks; rewrites docs/performance.md
    .venv/bin/python bench/run.py --tree /work/corpus      # ... and a real tree (its own section of the document)
    .venv/bin/python bench/run.py --tree PATH --only tree --no-write    # any tree of yours; prints only

A real tree is every ``.py`` file under PATH except in folders whose names hold ``@`` (the materialised corpus
keeps older snapshots there; ``bench.corpus.real_tree_files``), copied into the work folder first.

Every timing of a whole command is a fresh process (startup included), the median of ``--repeat`` runs, all taken
in the same invocation so the ratios compare like with like; CPU times include the process's workers. The
measured code is a byte-compiled snapshot of this working tree, and every measured process reads byte code from
the snapshot's own byte-code folder, as an installed tool does (``snapshot_code``). Nothing can
hang the benchmark: a command past ``--run-limit`` or a file past ``--file-limit`` is reported as over limit.
``--select``/``--ignore`` pass rule selections to every ascendlint run (to leave out slow rules while developing).
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import hook, memory, profile_rules, scaling  # noqa: E402
from bench.corpus import REPO, Tree, build_kernel_tree, build_mixed_tree, build_real_tree, line_count  # noqa: E402
from bench.measure import (CODE, LONG_RUN, FileTiming, Series, environment, interleaved,  # noqa: E402
                           lint_files_alone, series)

PYTHON = sys.executable
BIN = Path(sys.executable).parent
DOC = REPO / "docs" / "performance.md"
SECTIONS = {"synthetic": ("<!-- bench:start -->", "<!-- bench:end -->"),
            "tree": ("<!-- bench-tree:start -->", "<!-- bench-tree:end -->"),
            "hook": ("<!-- bench-hook:start -->", "<!-- bench-hook:end -->")}
PARTS = ("kernel", "mixed", "single", "profile", "scaling", "memory", "tree", "hook")
SLOWEST = 15
FILE_BAR = 1.0  # seconds: every real file, alone, cold
PARSE_ONLY = (
    "import sys, libcst\n"
    "for name in open(sys.argv[1]).read().split('\\n'):\n"
    "    try:\n"
    "        libcst.parse_module(open(name, 'rb').read().decode('utf-8'))\n"
    "    except Exception:\n"
    "        pass\n"
)


def snapshot_code(work: Path) -> Path:
    """A frozen copy of ascendlint and its rules, so that edits made to the tree during a run change nothing.

    The copy is byte-compiled into its own byte-code folder (``work/pycache``, the ``PYTHONPYCACHEPREFIX`` of
    every measured process, ``bench.measure.environment``), as pip compiles an installed package: an editable
    install where ``PYTHONDONTWRITEBYTECODE`` is set would compile every module from source in every process,
    a tenth of a second of start-up that no user pays. The measured processes may write byte code there too, so
    the modules of flake8, libcst and the standard library are compiled by their first run and read from then
    on (the hook part runs every command once before its rounds for that).
    """
    target = work / "code"
    shutil.rmtree(target, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "ascendlint", target / "ascendlint", ignore=skip)
    shutil.copytree(REPO / "checks", target / "ascendlint" / "checks", ignore=skip)
    CODE["path"] = str(target)
    CODE["pycache"] = str(work / "pycache")
    compiled = subprocess.run([PYTHON, "-m", "compileall", "-q", "-f", str(target)], env=environment(),
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        raise SystemExit(f"could not byte-compile the code snapshot in {target}:\n{compiled.stdout}{compiled.stderr}")
    return target


class Bench:
    """The run's settings: repeats, limits and the rule selection every ascendlint command gets."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.repeat = args.repeat
        self.run_limit = args.run_limit
        self.file_limit = args.file_limit
        self.select = args.select or []
        self.ignore = args.ignore or []
        self.commit = commit()  # at the start: the code snapshot is taken from this working tree now

    @property
    def rule_args(self) -> list[str]:
        return [*(f"--select={s}" for s in self.select), *(f"--ignore={i}" for i in self.ignore)]

    def ascendlint(self, *args: str) -> list[str]:
        return [PYTHON, "-m", "ascendlint", "check", *args, "--exit-zero", "--format", "concise", "--quiet",
                *self.rule_args]

    @staticmethod
    def installed_command() -> list[str]:
        """The installed ``ascendlint`` script, as a pre-commit hook runs it (``python -m ascendlint`` without one)."""
        script = BIN / "ascendlint"
        return [str(script)] if script.exists() else [PYTHON, "-m", "ascendlint"]

    def command_line(self, *args: str) -> list[str]:
        return [*self.installed_command(), "check", *args, "--exit-zero", "--format", "concise", "--quiet",
                *self.rule_args]

    def series(self, label: str, command: list[str], lines: int, repeat: int | None = None, **kw) -> Series:
        return series(label, command, repeat or self.repeat, self.run_limit, lines, **kw)

    def in_turns(self, commands: list[tuple[str, list[str], Path | None]], lines: int,
                 repeat: int | None = None) -> list[Series]:
        return interleaved(commands, repeat or self.repeat, self.run_limit, lines)


def tool(name: str) -> str | None:
    """The tool's own executable: this environment's, else the base interpreter's, else the one on PATH. A version
    manager's shim on PATH (pyenv's is a shell script that starts the tool) would add its own start-up to
    every run, tens of milliseconds that a one-file comparison would count against the tool."""
    for folder in (BIN, Path(sys.base_prefix) / "bin"):
        found = folder / name
        if found.exists():
            return str(found)
    return shutil.which(name)


def measure_tree(bench: Bench, tree: Tree, with_fixit: bool, explicit: bool = False,
                 with_cache: bool = True) -> dict[str, Series]:
    """Fresh-process runs over one tree. ``explicit``: name every file (so every tool sees exactly the same ones);
    ``with_cache``: also the runs that write and read the result cache."""
    lines = tree.lines
    targets = [str(p) for p in tree.files] if explicit else [str(tree.root)]
    cache = tree.root / ".ascendlint_cache"
    listing = tree.root.parent / f"{tree.root.name}.files"
    listing.write_text("\n".join(str(p) for p in tree.files if _is_utf8(p)))
    results: dict[str, Series] = {}

    def add(found: Series) -> None:
        results[found.label] = found

    slow_repeat = 1 if lines > 200_000 else None  # flake8 needs minutes for a whole standard library
    # The two runs whose ratio is a target, in turns.
    for found in bench.in_turns([
        ("libcst parse-only", [PYTHON, "-c", PARSE_ONLY, str(listing)], None),
        ("ascendlint cold, 1 process", bench.ascendlint(*targets, "--no-cache", "--jobs", "1"), None),
    ], lines):
        add(found)
    all_cores = bench.ascendlint(*targets, "--no-cache")
    flake8 = [tool("flake8"), "--isolated", "--exit-zero", *targets] if tool("flake8") else None
    if flake8 is not None and slow_repeat is None:  # compared with each other: in turns as well
        for found in bench.in_turns([("ascendlint cold, all cores", all_cores, None),
                                     ("flake8 (all cores)", flake8, tree.root.parent)], lines):
            add(found)
    else:
        add(bench.series("ascendlint cold, all cores", all_cores, lines))
    if with_cache:
        drop_cache = lambda: shutil.rmtree(cache, ignore_errors=True)  # noqa: E731
        add(bench.series("ascendlint cold, writing the cache", bench.ascendlint(*targets), lines, before=drop_cache))
        add(bench.series("ascendlint warm (nothing changed)", bench.ascendlint(*targets), lines))
    if tool("ruff"):
        ruff = [tool("ruff"), "check", "--no-cache", "--isolated", "--exit-zero", "--quiet", *targets]
        add(bench.series("ruff check --no-cache", ruff, lines))
    if flake8 is not None and "flake8 (all cores)" not in results:
        add(bench.series("flake8 (all cores)", flake8, lines, slow_repeat, cwd=tree.root.parent))
    first_copy = tree.root / "copy000"
    if with_fixit and tool("fixit") and first_copy.is_dir():  # fixit manages ~1k lines/s: one copy is enough
        copy_lines = sum(line_count(p) for p in first_copy.glob("*.py"))
        add(bench.series("fixit lint (default rules), first copy only", [tool("fixit"), "lint", str(first_copy)],
                         copy_lines, 1))
    return results


def single_file_runs(bench: Bench, kernel: Path, plain: Path) -> dict[str, Series]:
    """What a pre-commit hook pays per invocation on one file: the ``ascendlint`` command, start-up included."""
    edits = iter(range(10**6))

    def edit_kernel() -> None:
        with open(kernel, "a", encoding="utf-8") as handle:
            handle.write(f"# edit {next(edits)}\n")

    runs = [
        ("python -c pass", [PYTHON, "-c", "pass"], None),
        ("ascendlint --version", [*bench.installed_command(), "--version"], None),
        ("one file without kernels", bench.command_line(str(plain)), None),
        ("one kernel file, unchanged (cache hit)", bench.command_line(str(kernel)), None),
        ("one kernel file, edited (cache miss)", bench.command_line(str(kernel)), edit_kernel),
        ("one kernel file, --no-cache", bench.command_line(str(kernel), "--no-cache"), None),
    ]
    bench.series("warm-up", bench.command_line(str(kernel)), 0, 1)  # fills the rule index and the cache
    return {label: bench.series(label, command, 0, max(bench.repeat, 5), before=before)
            for label, command, before in runs}


def discovery_seconds(root: Path) -> float:
    import time

    from ascendlint.workspace.config import load_settings
    from ascendlint.workspace.discovery import discover
    from ascendlint.catalog.registry import all_rules

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


def commit() -> str:
    """The commit measured, with ``+changes`` when the working tree differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + (" +changes" if dirty else "")


def machine_facts(bench: Bench) -> list[str]:
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
    rules = " ".join(bench.rule_args) or "the default rule set"
    return [
        f"commit measured: {bench.commit}; rules: {rules}",
        f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load average at the end: {load}",
        f"machine: {cpu}, {cores} usable cores, {platform.system()} {platform.release()}",
        f"python: {platform.python_version()}; {', '.join(versions)}",
        f"every time: median of {bench.repeat} fresh processes (one file: of at least 5); limits: "
        f"{bench.run_limit:.0f} s a command, {bench.file_limit:.0f} s CPU a file; a command that takes over "
        f"{LONG_RUN:.0f} s runs once",
    ]


def _seconds(found: Series, what: str) -> str:
    return "over limit" if found.over_limit else f"{found.median(what):.3f}"


def render_tree_table(title: str, found: dict[str, Series]) -> list[str]:
    out = [title, "", "| run | median wall (s) | median CPU (s) | of it system (s) | lines/s (wall) | runs, wall (s) |",
           "|---|---:|---:|---:|---:|---|"]
    for label, m in found.items():
        runs = ", ".join(f"{r.wall:.2f}" + (" (over limit)" if r.over_limit else "") for r in m.runs)
        speed = "-" if m.over_limit else f"{m.lines / m.wall:,.0f}"
        out.append(f"| {label} | {_seconds(m, 'wall')} | {_seconds(m, 'cpu')} | {_seconds(m, 'system')} | {speed} | "
                   f"{runs} |")
    return [*out, ""]


def render_targets(rows) -> list[str]:
    out = ["| target | measured | limit | met |", "|---|---:|---:|---|"]
    for label, value, limit, higher_is_better in rows:
        if value != value:  # nan: something ran over its limit
            out.append(f"| {label} | over limit | {'>=' if higher_is_better else '<='} {limit:,} | NO |")
            continue
        met = value >= limit if higher_is_better else value <= limit
        out.append(f"| {label} | {value:,.2f} | {'>=' if higher_is_better else '<='} {limit:,} | "
                   f"{'yes' if met else 'NO'} |")
    return out


def _ratio(found: dict[str, Series], top: str, bottom: str, what: str) -> float:
    if top not in found or bottom not in found:
        return float("nan")
    return found[top].median(what) / found[bottom].median(what)


# -- the synthetic section ----------------------------------------------------------------------------------------


def run_synthetic(bench: Bench, args, parts: set[str]) -> list[str]:
    out: list[str] = []
    rows = []
    trees = {}
    if parts & {"kernel", "single", "profile"}:
        trees["kernel"] = build_kernel_tree(args.work / "kernel", args.kernel_lines)
    if "mixed" in parts:
        trees["mixed"] = build_mixed_tree(args.work / "mixed")
    results = {}
    for name in ("kernel", "mixed"):
        if name in parts and name in trees:
            tree = trees[name]
            print(f"measuring the {name} tree ({len(tree.files)} files, {tree.lines} lines) ...", flush=True)
            results[name] = measure_tree(bench, tree, with_fixit=not args.no_fixit and name == "kernel")
            out += render_tree_table(f"### {name} tree: {len(tree.files)} files, {tree.lines} lines", results[name])
    kernel, mixed = results.get("kernel", {}), results.get("mixed", {})
    if kernel:
        rows.append(("kernel cold, 1 process / libcst parse-only (CPU, fresh processes)",
                     _ratio(kernel, "ascendlint cold, 1 process", "libcst parse-only", "cpu"), 1.5, False))
    if mixed:
        rows.append(("mixed cold, all cores / ruff --no-cache (wall)",
                     _ratio(mixed, "ascendlint cold, all cores", "ruff check --no-cache", "wall"), 2.0, False))
    for name, found in results.items():
        warm = found["ascendlint warm (nothing changed)"]
        rows.append((f"{name} warm, lines/s (wall, startup included)",
                     warm.lines / warm.wall if not warm.over_limit else float("nan"), 1_000_000, True))

    if "single" in parts:
        print("measuring one-file runs ...", flush=True)
        kernel_file = next(p for p in trees["kernel"].files if "matmul_epilogue" in p.name)
        plain = trees["kernel"].root / "plain.py"
        plain.write_text("def add(a, b):\n    return a + b\n")
        single = single_file_runs(bench, kernel_file, plain)
        out += ["### one file, as a pre-commit hook runs it", "",
                f"The `ascendlint check FILE` command ({kernel_file.name}, {line_count(kernel_file)} lines), start-up "
                "included; wall milliseconds.", "", "| run | median (ms) | runs (ms) |", "|---|---:|---|"]
        for label, found in single.items():
            runs = ", ".join(f"{r.wall * 1000:.0f}" for r in found.runs)
            out.append(f"| {label} | {found.wall * 1000:.0f} | {runs} |")
            if label.startswith("one"):
                rows.append((f"{label} (ms)", found.wall * 1000, 250, False))
        if "mixed" in trees:
            out += ["", f"Discovery of the mixed tree (walk, excludes, .gitignore), in process: "
                        f"{discovery_seconds(trees['mixed'].root) * 1000:.0f} ms."]
        out.append("")

    if "scaling" in parts:
        print("measuring the scaling checks ...", flush=True)
        result = scaling.measure(args.work, args.scaling_repeat, bench.file_limit, bench.select, bench.ignore)
        out += ["### scaling", "", *scaling.render(result, args.scaling_repeat), ""]
        rows.append(("kernel repeated 1-8 times in one file: largest t(n) / (n t(1))", result.worst_growth(),
                     scaling.LINEAR_SLACK, False))
        rows.append(("10,000-line module / 10 x 1,000-line modules (CPU)", result.long_module_ratio(),
                     scaling.LONG_MODULE_BAR, False))

    if "memory" in parts:
        print("measuring peak memory ...", flush=True)
        runs = memory.measure(args.work, bench.run_limit, bench.rule_args)
        out += ["### memory", "", *memory.render(runs), ""]
        rows.append((f"peak RSS, {memory.MANY} copies / {memory.FEW} copies", memory.ratio(runs), memory.BAR, False))

    cpu_ratio = None
    if "profile" in parts:
        print("profiling the rules ...", flush=True)
        rule_profile, cpu_ratio = profile_rules.report(trees["kernel"].files)
        rows.insert(1, ("kernel lint / libcst parse (CPU, in process, every rule)", cpu_ratio, 1.5, False))
    out += ["### targets", "", *render_targets(rows), ""]
    if "profile" in parts:
        out += ["### where the time goes (kernel files, in process)", "", *rule_profile]
    return out


# -- the real-tree section ----------------------------------------------------------------------------------------


def run_tree(bench: Bench, source: Path, work: Path) -> list[str]:
    tree = build_real_tree(source, work / "tree")
    print(f"measuring the real tree {source} ({len(tree.files)} files, {tree.lines} lines) ...", flush=True)
    found = measure_tree(bench, tree, with_fixit=False, explicit=True, with_cache=False)
    print("linting every file alone ...", flush=True)
    alone = lint_files_alone(tree.files, tree.root, bench.repeat, bench.file_limit, bench.select, bench.ignore,
                             progress=_progress(len(tree.files)))
    edited = _pick_edited_file(tree, alone)
    hook = None
    if edited is not None:
        counter = iter(range(10**6))

        def edit() -> None:
            with open(edited, "a", encoding="utf-8") as handle:
                handle.write(f"# edit {next(counter)}\n")

        bench.series("warm-up", bench.command_line(str(edited)), 0, 1)
        hook = bench.series("edited", bench.command_line(str(edited)), 0, max(bench.repeat, 5), before=edit)

    folders = sorted({p.relative_to(tree.root).parts[0] for p in tree.files})
    out = [f"Tree: `{source}`, every `.py` file outside folders whose names hold `@` "
           f"({len(folders)} folders: {', '.join(f'`{f}`' for f in folders)}), {len(tree.files)} files, "
           f"{tree.lines:,} lines; every tool gets the same explicit list of files.", ""]
    out += render_tree_table("### whole tree, fresh processes", found)
    out += _render_alone(tree, alone)
    if hook is not None:
        out += ["### an edited real kernel file, as a pre-commit hook runs it", "",
                f"`ascendlint check {edited.relative_to(tree.root)}` ({line_count(edited)} lines, the kernel file "
                f"closest to the median size), edited before every run: median {hook.wall * 1000:.0f} ms "
                f"(runs: {', '.join(f'{r.wall * 1000:.0f}' for r in hook.runs)}).", ""]
    measured = [t for t in alone if not t.over_limit]
    lint_sum = sum(t.lint_cpu for t in measured)
    parse_sum = sum(t.parse_cpu for t in measured if t.parse_cpu == t.parse_cpu)
    over = [t for t in alone if t.over_limit]
    rows = [
        ("slowest file alone, wall (s)", max((t.lint_wall for t in alone), default=0) if not over else float("nan"),
         FILE_BAR, False),
        ("slowest file alone, CPU (s)", max((t.lint_cpu for t in alone), default=0) if not over else float("nan"),
         FILE_BAR, False),
        ("files alone: lint / libcst parse-only, summed (CPU)", lint_sum / parse_sum if not over else float("nan"),
         1.5, False),
        ("cold, 1 process / libcst parse-only (CPU, fresh processes)",
         _ratio(found, "ascendlint cold, 1 process", "libcst parse-only", "cpu"), 1.5, False),
        ("cold, all cores / flake8 all cores (wall)",
         _ratio(found, "ascendlint cold, all cores", "flake8 (all cores)", "wall"), 1.0, False),
    ]
    if hook is not None:
        rows.append(("an edited real kernel file (ms)", hook.wall * 1000 if not hook.over_limit else float("nan"),
                     250, False))
    out += ["### targets", "", *render_targets(rows)]
    return out


# -- the hook section ------------------------------------------------------------------------------------------


def run_hook(bench: Bench, args) -> list[str]:
    """One edited real kernel file as pre-commit checks it, in turns with flake8 (``bench.hook``)."""
    source = args.hook_file.resolve() if args.hook_file else hook.pick_file(args.tree.resolve())
    if source is None:
        raise SystemExit(f"no kernel file under {args.tree}")
    print(f"measuring one edited file as a hook checks it ({source}) ...", flush=True)
    result = hook.measure(bench.command_line(), source, args.work, args.hook_rounds, bench.run_limit, tool)
    base = args.tree.resolve() if args.tree and source.is_relative_to(args.tree.resolve()) else None
    shown = str(source.relative_to(base)) if base else source.name
    return [*hook.render(result, shown), "### targets", "", *render_targets(hook.target_rows(result))]


def _progress(total: int):
    done = iter(range(1, total + 1))

    def report(timing: FileTiming) -> None:
        number = next(done)
        if timing.over_limit or timing.lint_cpu > FILE_BAR or number % 25 == 0:
            state = "over limit" if timing.over_limit else f"{timing.lint_cpu:.2f} s"
            print(f"  [{number}/{total}] {state} {timing.path}", flush=True)

    return report


def _pick_edited_file(tree: Tree, alone: list[FileTiming]) -> Path | None:
    """The kernel file (one the prefilter passes) closest to the median size, that lints within the limit."""
    kernels = sorted((t for t in alone if not t.prefiltered and not t.over_limit), key=lambda t: t.size)
    if not kernels:
        return None
    return Path(kernels[len(kernels) // 2].path)


def _render_alone(tree: Tree, alone: list[FileTiming]) -> list[str]:
    over = [t for t in alone if t.over_limit]
    measured = [t for t in alone if not t.over_limit]
    kernels = [t for t in measured if not t.prefiltered]
    lint_sum = sum(t.lint_cpu for t in measured)
    parse_sum = sum(t.parse_cpu for t in measured if t.parse_cpu == t.parse_cpu)
    k_lint = sum(t.lint_cpu for t in kernels)
    k_parse = sum(t.parse_cpu for t in kernels if t.parse_cpu == t.parse_cpu)
    out = [
        "### every file alone (one process, cold, no cache)", "",
        f"Each file linted alone in one worker process, as `ascendlint check FILE --no-cache --jobs 1` lints it, "
        f"median of the repeats (stopped after a run past the limit); parse-only is `libcst.parse_module` of the "
        f"same file in the same process. {len(alone) - len(kernels) - len(over)} files never mention triton and stop "
        f"at the prefilter.", "",
        "| files | lint CPU (s) | parse-only CPU (s) | ratio |", "|---|---:|---:|---:|",
        f"| all measured ({len(measured)}) | {lint_sum:.2f} | {parse_sum:.2f} | {lint_sum / max(parse_sum, 1e-9):.2f} |",
        f"| passing the prefilter ({len(kernels)}) | {k_lint:.2f} | {k_parse:.2f} | {k_lint / max(k_parse, 1e-9):.2f} |",
        "",
        f"Files over {FILE_BAR:.0f} s CPU: {sum(1 for t in measured if t.lint_cpu > FILE_BAR)}; over the limit: "
        f"{len(over)}{' (' + ', '.join(f'`{Path(t.path).relative_to(tree.root)}`' for t in over) + ')' if over else ''}.",
        "", f"The {SLOWEST} slowest:", "",
        "| file | lines | lint CPU (s) | lint wall (s) | parse-only CPU (s) | x parse | findings |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    ranked = sorted(alone, key=lambda t: (not t.over_limit, -(t.lint_cpu if t.lint_cpu == t.lint_cpu else 0)))
    for t in ranked[:SLOWEST]:
        name = Path(t.path).relative_to(tree.root)
        if t.over_limit:
            parse = f"{t.parse_cpu:.3f}" if t.parse_cpu == t.parse_cpu else "-"  # a killed worker parsed nothing
            out.append(f"| `{name}` | {t.lines} | over limit ({t.note}) | | {parse} | | |")
        else:
            out.append(f"| `{name}` | {t.lines} | {t.lint_cpu:.3f} | {t.lint_wall:.3f} | {t.parse_cpu:.3f} | "
                       f"{t.lint_cpu / max(t.parse_cpu, 1e-9):.1f} | {t.findings} |")
    return [*out, ""]


def write_doc(section: str, lines: list[str]) -> None:
    start, end = SECTIONS[section]
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(f"{head}{start}\n" + "\n".join(lines) + f"\n{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="also measure this real tree (its own section of the document)")
    parser.add_argument("--only", help=f"comma-separated parts to run, of: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--kernel-lines", type=int, default=30_000, help="size of the generated kernel tree")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scaling-repeat", type=int, default=5, help="repeats of each file in the scaling checks")
    parser.add_argument("--run-limit", type=float, default=900.0, help="wall seconds one command may take")
    parser.add_argument("--file-limit", type=float, default=20.0, help="CPU seconds one file alone may take")
    parser.add_argument("--select", action="append", help="rule selection passed to every ascendlint run")
    parser.add_argument("--ignore", action="append", help="rules left out of every ascendlint run")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ascendlint-bench")
    parser.add_argument("--no-fixit", action="store_true", help="skip fixit (about 1k lines/s)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md alone")
    parser.add_argument("--hook-file", type=Path, help="the file of the hook part (default: the kernel file of "
                        "median size under --tree)")
    parser.add_argument("--hook-rounds", type=int, default=hook.ROUNDS, help="rounds of the hook part")
    args = parser.parse_args()
    parts = set(PARTS) if not args.only else {p.strip() for p in args.only.split(",")}
    unknown = parts - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    if "tree" in parts and args.tree is None:
        parts.discard("tree")
    if "hook" in parts and args.tree is None and args.hook_file is None:
        parts.discard("hook")

    bench = Bench(args)
    args.work.mkdir(parents=True, exist_ok=True)
    snapshot_code(args.work)
    sections = {}
    if parts - {"tree", "hook"}:
        sections["synthetic"] = run_synthetic(bench, args, parts)
    if "tree" in parts:
        sections["tree"] = run_tree(bench, args.tree.resolve(), args.work)
    if "hook" in parts:
        sections["hook"] = run_hook(bench, args)
    full_synthetic = set(PARTS) - {"tree", "hook"} <= parts
    facts = [f"- {fact}" for fact in machine_facts(bench)]
    for name, lines in sections.items():
        lines = [*facts, "", *lines]
        print("\n".join(lines))
        # A partial or filtered run never overwrites the documented numbers.
        if not args.no_write and not bench.rule_args and (name in ("tree", "hook") or full_synthetic):
            write_doc(name, lines)
            print(f"\nwrote the {name} section of {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
