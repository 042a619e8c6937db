"""Measure the fixes on a corpus of real kernels: copy it, ``--fix --unsafe-fixes``, lint again, count what is new.

    python -m tests.fixes.corpus_measure /work/corpus [--compile]

Never touches the corpus itself (it works on a copy in a temporary folder). Prints, per rule, how many findings
its fixes resolved, and every finding that exists only after the fixes (a fix that creates a finding is a
defect). With ``--compile``, every changed kernel is also compiled offline before and after (``harness.py``);
the corpus has no launch signatures, so inferred ones are used and many kernels need more than inference gives:
the count of kernels that compile before the fix is reported next to the count that still compile after.
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

from .cases import FixCase
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


def measure(corpus: Path, compile_kernels: bool) -> dict:
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
        if compile_kernels:
            result["compile"] = _compile(copy, changed, originals)
    return result


def _by_file(records: list[dict]) -> dict[str, list]:
    found: dict[str, list] = {}
    for record in records:
        found.setdefault(record["filename"], []).append(_Finding(record))
    return found


def _compile(copy: Path, changed: list[Path], originals: dict) -> dict:
    from . import harness

    cases = [
        FixCase(p.relative_to(copy).as_posix(), ("corpus",), originals[p], p.read_text(encoding="utf-8"), ())
        for p in changed
    ]
    with tempfile.TemporaryDirectory(prefix="ascendlint-corpus-compile-") as folder:
        reports, counts = harness.evaluate(cases, harness.Cache(Path(folder)))
    statuses = Counter(o.status for r in reports.values() for o in r.compiles)
    broken = sorted({(r.case.id, o.kernel) for r in reports.values() for o in r.compiles if o.status == "broken"})
    return {"jobs": counts, "signatures by status": dict(statuses), "kernels a fix broke": broken}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--compile", action="store_true", help="also compile changed kernels before and after")
    args = parser.parse_args()
    print(json.dumps(measure(args.corpus, args.compile), indent=2))


if __name__ == "__main__":
    main()
