"""Compile verdicts on a tree of kernel files, counted, and the static UB estimate set beside them.

    python -m bench.compile_corpus TREE [--json OUT] [--rows]

Reads every Python file under TREE as the linter does (parsed, never imported or run; CUDA-only modules left out
as the engine leaves them out), asks ``ascendlint.compiler`` for the verdict of every kernel at every configuration
the code states (the same requests, options and cache as ``ascendlint check --compile``), and prints:

- kernels and configurations compiled, and how many fit, overflow (per on-chip scope, and how many only with the
  launch's multi-buffering) and cannot be compiled here, with the reasons grouped;
- for every configuration that compiles (fits or overflows) and that ``ub.estimates`` estimates: the estimate's
  overflow prediction against the compiler's, and the estimate's bits against the compiler's UB peak.

The compiler's UB figure for a configuration is the larger of its planned peak and the bits an overflow message
says it required (that message gives a lower bound). A configuration whose tile is sized at run time is compared
at the size the compiler was last run at (the smallest that overflows, or the sweep's limit).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import libcst as cst

from ascendlint.analysis import platform, ub
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from ascendlint.compiler import findings, outcomes, toolchain
from ascendlint.compiler import verdict as v
from ascendlint.cli.ub_report import python_files

UB_BITS = 1572864  # what BiShengIR makes available on A2/A3 (192 KB)


@dataclass
class Row:
    """One configuration: where it is, what the compiler said, and what the estimate says."""

    path: str
    kernel: str
    config: str
    status: str
    reason: str = ""
    scope: str = ""  # the on-chip memory that overflowed
    fits_after_retry: bool | None = None
    compiler_bits: int | None = None  # UB as the compiler planned it
    estimate_bits: int | None = None
    estimate_complete: bool | None = None
    swept: str = ""  # "BLOCK=4096": the runtime-sized constexpr and the size compared at

    @property
    def compiler_over(self) -> bool:
        return self.status == v.OVERFLOW and self.scope == "ub"

    @property
    def estimate_over(self) -> bool:
        return self.estimate_bits is not None and self.estimate_bits > ub.UB_BUDGET * 8

    @property
    def compared(self) -> bool:
        return self.status in (v.FITS, v.OVERFLOW) and self.estimate_bits is not None


_GROUPS = (
    (re.compile(r"rebuilt kernel text does not load"), "the rebuilt kernel text does not load (a name it needs)"),
    (re.compile(r"frontend lacks a name"), "the frontend lacks a name the module provides (extension, global)"),
    (re.compile(r"no value for the constexpr"), "a constexpr with no value at the config"),
    (re.compile(r"parameters differ"), "parameters differ from the linted signature"),
    (re.compile(r"ran past"), "time limit"),
    (re.compile(r"worker (crash|stopped)"), "worker crash"),
)


def reason_group(message: str) -> str:
    """A message reduced to its kind: names, numbers and quoted code left out."""
    for pattern, group in _GROUPS:
        if pattern.search(message):
            return group
    text = re.sub(r"^frontend: (`[^`]*`: )?", "frontend: ", message)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "…", text)
    text = re.sub(r"\b\d+\b", "N", text)
    text = re.sub(r"%\w+|@\w+|\w+\.py:\d+|<[^>]*>", "…", text)
    return text.split(" (possible reason")[0][:110]


def _facts(path: Path, root: Path) -> ModuleFacts | None:
    try:
        text = path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return None
    if platform.classify(text, path.relative_to(root).as_posix()).cuda_only:
        return None
    facts = ModuleFacts(module, NodeIndex(module))
    facts.filename = str(path)
    return facts


def _compiler_bits(verdict: v.Verdict) -> int | None:
    scope = verdict.scope("ub")
    if scope is None:
        return None
    return max(scope.peak_bits, scope.required_bits or 0)


def _estimate_bits(facts, outcome) -> tuple[int | None, bool | None, str]:
    """The estimate at the constexpr values and pointer types the compiler was given (a runtime-sized tile at the
    size compiled last, a flag at the value the request chose), so that both read the same kernel."""
    request = outcome.request
    config = next((c for c in ub.configs(facts, request.kernel) if c.label == request.label), None)
    if config is None:
        return None, None, ""
    values = {**config.values, **{k: x for k, x in request.values.items() if type(x) is int}}
    swept = ""
    if request.runtime is not None:
        size = outcome.overflow_from or max(outcomes._sizes(findings.RULE_OPTIONS["runtime-size-limit"]))
        values[request.runtime] = size
        swept = f"{request.runtime}={size}"
    dtypes = {p["name"]: p["dtype"] for p in request.job.params if p.get("kind") == "pointer" and p.get("dtype")}
    found = ub.estimate_at(facts, request.kernel, config, values, findings.RULE_OPTIONS["pointer-dtype"], dtypes)
    if found is None:
        return None, None, swept
    return found.bytes * 8, not found.unknown, swept


def rows_for(tree: Path) -> list[Row]:
    rows: list[Row] = []
    settings = dict(findings.RULE_OPTIONS)
    for path in python_files([tree]):
        facts = _facts(path, tree)
        if facts is None or not facts.kernels:
            continue
        for outcome in findings.module_outcomes(facts, settings):
            verdict = outcome.verdict
            row = Row(path.relative_to(tree).as_posix(), outcome.request.kernel.name, outcome.request.label,
                      verdict.status)
            if verdict.status in (v.ERROR, v.NOT_COMPILED):
                row.reason = verdict.message
            if verdict.status == v.OVERFLOW:
                failed = verdict.overflow
                row.scope = failed.name if failed is not None else "?"
                row.fits_after_retry = verdict.fits_after_retry
            if verdict.status in (v.FITS, v.OVERFLOW):
                row.compiler_bits = _compiler_bits(verdict)
                row.estimate_bits, row.estimate_complete, row.swept = _estimate_bits(facts, outcome)
            rows.append(row)
    return rows


def _ratio(row: Row) -> float | None:
    if not row.compiler_bits or not row.estimate_bits:
        return None
    return row.compiler_bits / row.estimate_bits


def summary(rows: list[Row]) -> dict:
    statuses = collections.Counter(r.status for r in rows)
    compiled = [r for r in rows if r.status in (v.FITS, v.OVERFLOW, v.ERROR)]
    overflows = [r for r in rows if r.status == v.OVERFLOW]
    compared = [r for r in rows if r.compared]
    agree = [r for r in compared if r.estimate_over == r.compiler_over]
    ratios = [x for x in (_ratio(r) for r in compared) if x is not None]
    errors = [abs(r.estimate_bits - r.compiler_bits) for r in compared if r.compiler_bits is not None]
    confusion = collections.Counter((("over" if r.estimate_over else "fits"), ("over" if r.compiler_over else "fits"))
                                    for r in compared)
    return {
        "files": len({r.path for r in rows}),
        "kernels": len({(r.path, r.kernel) for r in rows}),
        "kernels_compiled": len({(r.path, r.kernel) for r in compiled}),
        "configurations": len(rows),
        "by_status": dict(statuses),
        "overflow_scopes": dict(collections.Counter(r.scope for r in overflows)),
        "overflow_only_with_multibuffer": sum(1 for r in overflows if r.fits_after_retry),
        "errors_grouped": dict(collections.Counter(reason_group(r.reason) for r in rows
                                                   if r.status == v.ERROR).most_common()),
        "not_compiled_grouped": dict(collections.Counter(reason_group(r.reason) for r in rows
                                                         if r.status == v.NOT_COMPILED).most_common()),
        "compared": len(compared),
        "compared_complete": sum(1 for r in compared if r.estimate_complete),
        "agree": len(agree),
        "agreement": round(len(agree) / len(compared), 3) if compared else None,
        "confusion_estimate_vs_compiler": {f"{a}/{b}": n for (a, b), n in sorted(confusion.items())},
        "compiler_over_estimate_ratio_median": round(statistics.median(ratios), 2) if ratios else None,
        "compiler_over_estimate_ratio_range": [round(min(ratios), 2), round(max(ratios), 2)] if ratios else None,
        "abs_error_bits_median": int(statistics.median(errors)) if errors else None,
        "disagreements": [f"{r.path}:{r.kernel}:{r.config}{' ' + r.swept if r.swept else ''}: estimate "
                          f"{r.estimate_bits // 8192} KB ({'over' if r.estimate_over else 'fits'}), compiler "
                          f"{(r.compiler_bits or 0) // 8192} KB ({'over' if r.compiler_over else 'fits'})"
                          for r in compared if r.estimate_over != r.compiler_over],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--json", type=Path, help="write the summary and every row here")
    parser.add_argument("--rows", action="store_true", help="print every compared row")
    args = parser.parse_args(argv)
    reason = toolchain.missing()
    if reason is not None:
        print(f"no compiler: {reason}", file=sys.stderr)
        return 2
    rows = rows_for(args.tree.resolve())
    result = summary(rows)
    print(json.dumps(result, indent=2))
    if args.rows:
        for r in rows:
            if r.compared:
                print(f"{r.path}:{r.kernel}:{r.config} {r.swept} est={r.estimate_bits} cc={r.compiler_bits} "
                      f"{r.status}{'/' + r.scope if r.scope else ''}")
    if args.json:
        args.json.write_text(json.dumps({"summary": result, "rows": [asdict(r) for r in rows]}, indent=1),
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
