"""Measure the fixes on a corpus of real kernels: copy it, ``--fix --unsafe-fixes``, lint again, count what is new.

    python -m tests.fixes.corpus_measure /work/corpus
    python -m tests.fixes.corpus_measure /work/corpus --compile ASC301,ASC403

Never touches the corpus itself (the first form works on a copy in a temporary folder, the second reads it).
The first prints how many findings the fixes resolved per rule, and every finding that exists only after the
fixes (a fix that creates a finding is a defect). The second applies only the named rules' fixes and compiles
every kernel they change offline (``harness.py``), with inferred signatures: corpus kernels often need values
inference cannot give, so a signature neither side compiles is counted apart ("unsupported") from one only the
fixed kernel fails ("broken").
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .test_no_new_findings import finding_keys

REPO = Path(__file__).resolve().parents[2]


def _check(folder: Path, *extra: str) -> list[dict]:
    run = subprocess.run(
        [sys.executable, "-m", "ascendlint", "check", str(folder), "--no-cache", "--format", "json", "--exit-zero",
         *extra],
        capture_output=True, text=True, cwd=REPO, check=False,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"ascendlint failed ({run.returncode}): {run.stderr[-2000:]}")
    return json.loads(run.stdout or "[]")


class _Finding:
    def __init__(self, record: dict) -> None:
        self.code, self.message = record["code"], record["message"]


def measure(corpus: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="ascendlint-corpus-") as folder:
        copy = Path(folder) / "corpus"
        shutil.copytree(corpus, copy, symlinks=True)
        originals = {p: p.read_text(encoding="utf-8", errors="replace") for p in copy.rglob("*.py") if p.is_file()}
        started = time.monotonic()
        before = _check(copy)
        fix_run = subprocess.run(
            [sys.executable, "-m", "ascendlint", "check", str(copy), "--no-cache", "--fix", "--unsafe-fixes",
             "--exit-zero", "--format", "concise"],
            capture_output=True, text=True, cwd=REPO, check=False,
        )
        after = _check(copy)
        seconds = time.monotonic() - started
        by_file_before, by_file_after = _by_file(before), _by_file(after)
        changed = [p for p, text in originals.items() if p.read_text(encoding="utf-8", errors="replace") != text]
        new = []
        for filename in set(by_file_before) | set(by_file_after):
            created = finding_keys(by_file_after.get(filename, [])) - finding_keys(by_file_before.get(filename, []))
            where = Path(filename).relative_to(copy).as_posix()
            new += [(where, code, message) for code, message in created.elements()]
        resolved = Counter(r["code"] for r in before) - Counter(r["code"] for r in after)
        result = {
            "files": len(originals),
            "files changed by fixes": len(changed),
            "findings before": len(before),
            "findings after": len(after),
            "resolved by rule": dict(sorted(resolved.items())),
            "new findings": sorted(new),
            "fix run exit code": fix_run.returncode,
            "seconds (lint, fix, lint)": round(seconds, 1),
        }
    return result


def _by_file(records: list[dict]) -> dict[str, list]:
    found: dict[str, list] = {}
    for record in records:
        found.setdefault(record["filename"], []).append(_Finding(record))
    return found


def compile_fixes(corpus: Path, codes: tuple[str, ...]) -> dict:
    """Apply only ``codes``' fixes to every corpus file and compile each changed kernel before and after, with
    inferred signatures (no interpreter: corpus kernels index memory with data the harness cannot invent)."""
    from . import harness
    from .cases import _case

    cases = []
    for path in sorted(corpus.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "triton" in text:
            case = _case(path.relative_to(corpus).as_posix(), text, codes)
            if case is not None and case.changed_kernels:
                cases.append(case)
    with tempfile.TemporaryDirectory(prefix="ascendlint-corpus-compile-") as folder:
        reports, counts = harness.evaluate(cases, harness.Cache(Path(folder)), interpret=False)
    statuses = Counter(o.status for r in reports.values() for o in r.compiles)
    linalg = Counter(o.linalg_status for r in reports.values() for o in r.compiles)
    broken = sorted({(r.case.id, o.kernel, o.fixed.get("error", "")[-300:]) for r in reports.values()
                     for o in r.compiles if o.status == "broken"})
    kernels = Counter(
        "compiles" if any(o.status in ("compiles", "repaired") for o in r.compiles if o.kernel == k) else "not"
        for r in reports.values() for k in r.plans
    )
    return {"cases": len(cases), "jobs": counts, "signatures by status": dict(statuses),
            "linalg": dict(linalg), "kernels with a compiling signature": dict(kernels), "broken": broken}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--compile", metavar="CODES", help="only compile the kernels these rules' fixes change")
    args = parser.parse_args()
    if args.compile:
        print(json.dumps(compile_fixes(args.corpus, tuple(args.compile.split(","))), indent=2))
    else:
        print(json.dumps(measure(args.corpus), indent=2))


if __name__ == "__main__":
    main()
