"""The fix-verification harness: compile every fixed kernel offline and run it before and after the fix.

For each case (``cases.py``) and each kernel the fix changed (or that calls a changed jit helper):

1. the fixed kernel is compiled by triton-ascend 3.2.0's frontend to TTIR, then to Linalg, for every
   representative signature (``signatures.py``: each data type a tile can have, each flag setting, integers
   specialised to 1). The original is compiled to judge a failure (a signature the original does not compile
   either, an int8 tile fed to ``tl.exp`` say, is outside what the example supports), for rules whose fix
   repairs a compile error, and for rules whose fixed IR is compared with the original's;
2. where the kernel can run in the interpreter, the original and the fixed kernel run on the same inputs and
   every buffer is compared (for ASC301 also under the emulator's ``tl.dot`` lhs clobber).

Jobs run in two child processes at once (``offline_worker.py``: compiles need TRITON_INTERPRET unset, runs need
it set). Results are cached by the job's content and the worker's code, so a second run compiles only what
changed (pytest's cache folder; ``--cache-clear`` empties it). A job that crashed its worker is not cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import signatures
from .cases import FixCase

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORKER = HERE / "offline_worker.py"
# What a job's result depends on besides the job itself: the worker, its stand-ins, and the emulator it runs
# kernels under (a cached run from an older emulator would hide what the current one raises).
_WORKER_INPUTS = (
    WORKER, HERE / "device_stubs.py", HERE / "offline_frontend.py", HERE / "expectations.py",
    *sorted((REPO / "ascendlint" / "emulate").rglob("*.py")),
)
_CHILD_TIMEOUT = 900
LAST_RUN: dict = {}  # job counts and time of the last evaluation in this session (shown in the summary)

# What each fixing rule's fix must preserve (the rule pages say why for the ones that change behaviour).
SAME_NUMBERS = "same numbers"  # the fix must not change any result at sizes where nothing overflows
REPAIRS_COMPILE = "repairs compile"  # the original fails to compile (the trap); the fixed one must compile
CHANGES_BEHAVIOUR = "changes behaviour"  # an unsafe fix that repairs a protocol: it must compile and run
# The original fails in the emulator on the trap (RUNTIME_TRAPS); the fixed one must run and leave what the
# case's expectation (signatures.OVERRIDES, expectations.py) says.
REPAIRS_RUNTIME = "repairs runtime failure"
# The same numbers, unless the original raced (read data its producer had not yet made visible): then the fixed
# kernel must leave what the case's expectation says and the original must not.
REPAIRS_RACE = "same numbers or repairs a race"
CLAIMS = {
    "ASC003": SAME_NUMBERS,
    "ASC101": SAME_NUMBERS,
    "ASC102": REPAIRS_COMPILE,
    "ASC106": SAME_NUMBERS,  # deletes a cache hint the lowering drops anyway
    "ASC108": REPAIRS_COMPILE,
    "ASC201": SAME_NUMBERS,
    "ASC202": SAME_NUMBERS,
    "ASC203": SAME_NUMBERS,
    "ASC301": SAME_NUMBERS,
    "ASC306": SAME_NUMBERS,  # ASC301's reload fix, for the loop-carried shape
    "ASC303": SAME_NUMBERS,
    "ASC402": CHANGES_BEHAVIOUR,
    "ASC403": REPAIRS_RACE,  # the emulator holds MTE stores until a fence: an unfenced notify can publish stale data
    "ASC405": REPAIRS_RUNTIME,  # the emulator rejects a UDMA address mapped by symm_at / remote_ptr, as UDMA does
}
# Rules whose fixed IR is checked against the original's (the Linalg of ASC301's copy, ASC403's fence order).
COMPARED_WITH_ORIGINAL = {"ASC301", "ASC306", "ASC403"}
# The compile error each REPAIRS_COMPILE rule's trap produces.
TRAP_ERRORS = {
    "ASC102": "object has no attribute 'to'",
    "ASC108": ("'dtype' object is not callable", "got an unexpected keyword argument 'overflow_mode'"),
}
# The emulator error each REPAIRS_RUNTIME rule's trap produces in the original.
RUNTIME_TRAPS = {"ASC405": "it was mapped by dl.symm_at / remote_ptr"}


@dataclass
class CompileOutcome:
    kernel: str
    variant: str
    fixed: dict
    original: dict | None = None
    trap: str | tuple[str, ...] | None = None  # the compile error(s) the fix claims to remove (REPAIRS_COMPILE)

    @property
    def status(self) -> str:
        """compiles | repaired (the original failed on the trap the fix removes) | unsupported (the original does
        not compile this signature either: the example does not support it) | broken (only the fix fails)."""
        original_error = (self.original or {}).get("error") or (self.original or {}).get("crash")
        # A jit helper's error reaches its caller's CompilationError as a repr, its quotes escaped (\').
        unescaped = original_error.replace("\\'", "'") if original_error is not None else None
        traps = (self.trap,) if isinstance(self.trap, str) else self.trap or ()
        trap = unescaped is not None and any(t in unescaped for t in traps)
        if self.fixed.get("ttir") is not None:
            return "repaired" if trap else "compiles"
        if original_error is not None and not trap:
            return "unsupported"
        return "broken"

    @property
    def linalg_status(self) -> str:
        """linalg | no-linalg (neither side lowers) | broken-linalg (only the fix stops lowering) | n/a."""
        if self.fixed.get("ttir") is None:
            return "n/a"
        if self.fixed.get("linalg") is not None:
            return "linalg"
        if self.original is not None and self.original.get("linalg") is None:
            return "no-linalg"
        return "broken-linalg"

    @property
    def bisheng_status(self) -> str:
        """What BiShengIR says of the fixed kernel next to the original: fits (reached the last step) |
        same (neither side fits, alike) | broken-bisheng (the fix made the verdict worse) | n/a (not compiled)."""
        fixed = self.fixed.get("bisheng")
        if fixed is None:
            return "n/a"
        if fixed["status"] == "fits":
            return "fits"
        before = (self.original or {}).get("bisheng")
        if before is not None and before["status"] != "fits":
            return "same"
        return "broken-bisheng"


@dataclass
class CaseReport:
    case: FixCase
    plans: dict = field(default_factory=dict)
    compiles: list[CompileOutcome] = field(default_factory=list)
    runs: list[tuple[str, str, dict]] = field(default_factory=list)  # (kernel, variant, result)
    not_run: dict[str, str] = field(default_factory=dict)  # kernel -> why it was not interpreted

    @property
    def claims(self) -> set[str]:
        return {CLAIMS.get(code, SAME_NUMBERS) for code in self.case.codes}


def _affected_kernels(case: FixCase, plans: dict) -> list[str]:
    """Launchable kernels whose code changed or that call (transitively) a changed jit function."""
    changed = case.changed_kernels
    if not changed:
        return []
    calls = _calls_between_jit_functions(case.fixed)
    affected = []
    for name in plans:
        seen, pending = set(), [name]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            pending.extend(calls.get(current, ()))
        if seen & changed:
            affected.append(name)
    return affected


def _calls_between_jit_functions(text: str) -> dict[str, set[str]]:
    import ast

    from .cases import _is_jit

    functions = {
        node.name: node
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list)
    }
    return {
        name: {
            call.func.id
            for call in ast.walk(node)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in functions
        }
        for name, node in functions.items()
    }


class Cache:
    """Job results by content hash, in a folder that survives test runs."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        for path in _WORKER_INPUTS:
            digest.update(path.read_bytes())
        digest.update(_triton_version().encode())
        self.salt = digest.hexdigest()[:16]

    def key(self, job: dict) -> str:
        payload = json.dumps(job, sort_keys=True).encode("utf-8")
        return hashlib.sha256(payload + self.salt.encode()).hexdigest()[:32]

    def get(self, key: str) -> dict | None:
        path = self.folder / f"{key}.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _triton_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("triton-ascend")
    except metadata.PackageNotFoundError:
        return "none"


def run_jobs(jobs: dict[str, list[dict]], cache: Cache) -> tuple[dict[str, dict], dict]:
    """Run missing jobs (mode -> list) in one child per mode, concurrently. Returns results by id and counts."""
    pending = {mode: [j for j in mode_jobs if cache.get(j["id"]) is None] for mode, mode_jobs in jobs.items()}
    counts = {mode: {"jobs": len(jobs[mode]), "ran": len(pending[mode])} for mode in jobs}
    crashed: dict[str, dict] = {}
    children = []
    with tempfile.TemporaryDirectory(prefix="ascendlint-fix-jobs-") as folder:
        for mode, mode_jobs in pending.items():
            if mode_jobs:
                children.append(_start(mode, mode_jobs, Path(folder), cache))
        for mode, mode_jobs, process in children:
            _finish(mode, mode_jobs, process, Path(folder), cache, crashed)
    results = {j["id"]: crashed.get(j["id"]) or cache.get(j["id"]) for mode_jobs in jobs.values() for j in mode_jobs}
    return results, counts


def _environment(mode: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("TRITON_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ascendlint-fix-triton-cache"))
    if mode == "interpret":
        env["TRITON_INTERPRET"] = "1"
    return env


def _start(mode: str, mode_jobs: list[dict], folder: Path, cache: Cache):
    jobs_path = folder / f"{mode}.json"
    jobs_path.write_text(json.dumps(mode_jobs), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(WORKER), mode, str(jobs_path), str(cache.folder)],
        cwd=REPO,
        env=_environment(mode),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return mode, mode_jobs, process


def _finish(mode: str, mode_jobs: list[dict], process, folder: Path, cache: Cache, crashed: dict) -> None:
    """Wait for a child; when it died on a job (a crash in the interpreter), record that job and go on."""
    while True:
        try:
            output, _ = process.communicate(timeout=_CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        left = [j for j in mode_jobs if cache.get(j["id"]) is None]
        if not left:
            return
        reason = f"worker exited with {process.returncode} on this job:\n{(output or '')[-3000:]}"
        crashed[left[0]["id"]] = {"crash": reason}
        mode_jobs = left[1:]
        if not mode_jobs:
            return
        _, _, process = _start(mode, mode_jobs, folder, cache)


def _needs_original(fixed: dict) -> bool:
    """A failure (to compile, or to lower to Linalg) is judged against the original."""
    return fixed.get("ttir") is None or fixed.get("linalg") is None


def _compile_job(cache: Cache, text: str, kernel: str, signature: dict, constants: dict) -> dict:
    job = {"kind": "compile", "module": text, "kernel": kernel, "signature": signature, "constants": constants,
           "linalg": True}
    job["id"] = cache.key(job)
    return job


def evaluate(cases: list[FixCase], cache: Cache, interpret: bool = True) -> tuple[dict[str, CaseReport], dict]:
    """Compile and run every case (``interpret=False``: compile only); the reports say what happened, the tests
    judge it."""
    reports: dict[str, CaseReport] = {}
    compile_jobs, interpret_jobs = [], []
    planned = []  # (report, kernel, variant label, fixed job, original job or None)
    runs = []
    for case in cases:
        report = reports[case.id] = CaseReport(case)
        plans = signatures.plans_for(case.id, case.fixed)
        report.plans = {name: plans[name] for name in _affected_kernels(case, plans)}
        for name, plan in report.plans.items():
            for label, signature, constants in plan.compile_variants():
                fixed_job = _compile_job(cache, case.fixed, name, signature, constants)
                original_job = None
                if REPAIRS_COMPILE in report.claims or COMPARED_WITH_ORIGINAL & set(case.codes):
                    original_job = _compile_job(cache, case.original, name, signature, constants)
                    compile_jobs.append(original_job)
                compile_jobs.append(fixed_job)
                planned.append((report, name, label, fixed_job, original_job, signature, constants))
            if plan.not_interpreted or not interpret:
                report.not_run[name] = plan.not_interpreted or "compile only"
                continue
            for label, arguments in plan.interpret_variants():
                job = {"kind": "interpret", "original": case.original, "fixed": case.fixed, "kernel": name,
                       "args": arguments, "grid": list(plan.grid), "world": plan.world,
                       "hazards": bool({"ASC301", "ASC306"} & set(case.codes)) and not plan.world, "expect": plan.expect}
                job["id"] = cache.key(job)
                interpret_jobs.append(job)
                runs.append((report, name, label, job))
    results, first = run_jobs({"compile": compile_jobs, "interpret": interpret_jobs}, cache)
    # Second round: the original of every signature the fixed kernel does not compile for, to judge the failure.
    judging = []
    for item in planned:
        report, name, label, fixed_job, original_job, signature, constants = item
        if _needs_original(results[fixed_job["id"]]) and original_job is None:
            judging.append(_compile_job(cache, report.case.original, name, signature, constants))
    second_results, second = run_jobs({"compile": judging}, cache)
    results.update(second_results)
    for report, name, label, fixed_job, original_job, signature, constants in planned:
        original = results[original_job["id"]] if original_job is not None else None
        if original is None and _needs_original(results[fixed_job["id"]]):
            original = results[_compile_job(cache, report.case.original, name, signature, constants)["id"]]
        trap = next((TRAP_ERRORS[c] for c in report.case.codes if c in TRAP_ERRORS), None)
        report.compiles.append(CompileOutcome(name, label, results[fixed_job["id"]], original, trap))
    for report, name, label, job in runs:
        report.runs.append((name, label, results[job["id"]]))
    counts = {
        "compile jobs": first["compile"]["jobs"] + second["compile"]["jobs"],
        "compiled now": first["compile"]["ran"] + second["compile"]["ran"],
        "interpreter jobs": first["interpret"]["jobs"],
        "interpreted now": first["interpret"]["ran"],
    }
    return reports, counts
