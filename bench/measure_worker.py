"""The worker of ``bench.measure.lint_files_alone``: lints files one at a time and reports each on stdout.

One JSON line when a lint starts (so the parent knows the worker is alive) and one with the result per file.
Every lint goes through the same path as ``ascendlint check FILE --no-cache --jobs 1`` (read, prefilter, decode,
parse, rules), with the rules the command would enable; the imports and a first lint of one of this repository's
kernels happen before the first measurement, so no file pays for them.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from ascendlint import cli
from ascendlint.linter import parallel
from ascendlint.workspace.config import find_config, load_settings
from ascendlint.catalog.rule_index import rule_classes, rule_index
from ascendlint.linter.runner import Linter, Options

WARM_UP = Path(__file__).resolve().parents[1] / "reference_kernels" / "matmul_epilogue.py"


def _say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _linter(root: Path, select: list[str], ignore: list[str]) -> Linter:
    rules = rule_index(use_stored=False)
    settings = load_settings(find_config(root), rules)
    enabled = cli._enabled_rules(rules, settings, tuple(select), (), tuple(ignore))
    return Linter(rule_classes(enabled), settings, cache=None)


def _lint_once(linter: Linter, path: Path) -> tuple[float, float, int]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = parallel.lint_paths(linter, [path], Options(), jobs=1)[0]
    return time.process_time() - cpu, time.perf_counter() - wall, len(result.diagnostics)


def _parse_once(data: bytes) -> float | None:
    import libcst

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    cpu = time.process_time()
    try:
        libcst.parse_module(text)
    except Exception:  # noqa: BLE001 - a file libcst rejects still cost its parse attempt
        pass
    return time.process_time() - cpu


def main(job_file: str) -> None:
    job = json.loads(Path(job_file).read_text())
    linter = _linter(Path(job["root"]), job["select"], job["ignore"])
    repeat, limit = job["repeat"], job["limit"]
    if WARM_UP.is_file():
        linter.lint_source(WARM_UP.read_text(encoding="utf-8"), str(WARM_UP))
    from ascendlint.files.prefilter import could_hold_kernel

    for name in job["files"]:
        path = Path(name)
        data = path.read_bytes()
        lints, over = [], False
        for _ in range(repeat):
            _say({"start": name})
            lints.append(_lint_once(linter, path))
            if lints[-1][0] > limit:
                over = True
                break
        parses = [p for p in (_parse_once(data) for _ in range(repeat)) if p is not None]
        _say({"result": {
            "lint_cpu": statistics.median(t[0] for t in lints),
            "lint_wall": statistics.median(t[1] for t in lints),
            "parse_cpu": statistics.median(parses) if parses else float("nan"),
            "findings": lints[-1][2],
            "prefiltered": not could_hold_kernel(data),
            "over_limit": over,
            "note": f"one lint took {lints[-1][0]:.1f} s CPU" if over else "",
        }})


if __name__ == "__main__":
    main(sys.argv[1])
