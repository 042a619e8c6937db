"""`ascendlint ub PATH`: the estimated Unified Buffer use of every kernel at each launch or autotune config.

The estimate is ``ascendlint.analysis.ub``'s (the one ASC305 reports from); this module only finds the files,
runs the analysis and lays the rows out as a table with a bar per row, or as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from ..analysis import ub
from ..analysis.module_facts import ModuleFacts
from ..analysis.walk import NodeIndex

BAR_WIDTH = 30
_SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".tox", "build", "dist"}


@dataclass
class Row:
    path: str
    line: int
    kernel: str
    config: str
    values: dict[str, int]
    multibuffer: bool
    bytes: int
    complete: bool  # every tile shape was known at this config
    missing: list[str]
    tiles: list[tuple[str, tuple[int, ...], int]]
    compiler: dict | None = None  # BiShengIR's verdict at this config (with the `compiler` extra): status, bits

    @property
    def compiler_text(self) -> str:
        """``fits 96 KB``, ``OVER 256 KB``, ``error``, or ``-`` (not compiled)."""
        found = self.compiler
        if not found:
            return "-"
        if found["status"] == "fits":
            return f"fits {found['ub_bits'] // 8192} KB" if found.get("ub_bits") else "fits"
        if found["status"] == "overflow":
            return f"OVER {found['required_bits'] // 8192} KB {found['scope']}"
        return found["status"]

    @property
    def percent(self) -> float:
        return 100.0 * self.bytes / ub.UB_BUDGET

    def as_json(self) -> dict:
        return {
            "path": self.path, "line": self.line, "kernel": self.kernel, "config": self.config,
            "constexprs": self.values, "multibuffer": self.multibuffer, "estimate_bytes": self.bytes,
            "budget_bytes": ub.UB_BUDGET, "physical_bytes": ub.UB_PHYSICAL, "over_budget": self.bytes > ub.UB_BUDGET,
            "complete": self.complete, "missing": self.missing,
            "live_tiles": [{"name": n, "shape": list(s), "bytes": b} for n, s, b in self.tiles],
            "compiler": self.compiler,
        }


def over_budget(row: Row) -> bool:
    """Is this config over the Unified Buffer (`ub`'s exit code)? BiShengIR's verdict when it gave one (fits or
    overflow), else the estimate."""
    status = (row.compiler or {}).get("status")
    if status in ("fits", "overflow"):
        return status == "overflow"
    return row.bytes > ub.UB_BUDGET


def python_files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if not path.is_dir():  # a named file of any kind: the reader refuses what is not a regular file
            found.append(path)
            continue
        for child in sorted(path.rglob("*.py")):
            if not any(part in _SKIP_DIRS or part.startswith(".") for part in child.relative_to(path).parts[:-1]):
                found.append(child)
    return found


def _compiler_verdicts(facts) -> dict[tuple[str, str], dict]:
    """(kernel, config label) -> BiShengIR's verdict, at the estimate's assumptions (the rules' default
    ``pointer-dtype`` for a pointer whose type the host does not show)."""
    from ..compiler import findings

    found = {}
    for outcome in findings.module_outcomes(facts, findings.confirm_settings({})):
        verdict = outcome.verdict
        if outcome.request.runtime is not None:
            continue
        ub_scope, overflow = verdict.scope("ub"), verdict.overflow
        found[(outcome.request.kernel.name, outcome.request.label)] = {
            "status": verdict.status, "target": outcome.target,
            "ub_bits": ub_scope.peak_bits if ub_scope else None,
            "scope": overflow.label if overflow else None,
            "required_bits": overflow.required_bits if overflow else None,
            "available_bits": overflow.available_bits if overflow else None,
            "fits_after_retry": verdict.fits_after_retry, "message": verdict.message,
        }
    return found


def rows_for_file(path: Path, compile_kernels: bool = False) -> tuple[list[Row], str | None]:
    """The file read, decoded and parsed by ``check``'s own guards (``user_input``): a FIFO, a huge file, an odd
    encoding or code nested too deeply for the parser is a warning, never a hang or a crash."""
    from ..files.prefilter import could_hold_kernel
    from ..files.user_input import SourceDecodeError, decode_source, parse_source, read_source_bytes

    try:
        data = read_source_bytes(path)
    except OSError as exc:
        return [], f"{path}: cannot be read ({exc.strerror or exc})"
    if not could_hold_kernel(data):
        return [], None
    try:
        text = decode_source(data).text
    except SourceDecodeError as exc:
        return [], f"{path}: cannot be decoded ({exc})"
    try:
        module = parse_source(text)
    except cst.ParserSyntaxError as exc:
        return [], f"{path}: cannot be parsed ({exc.message})"
    except (RecursionError, MemoryError, ValueError) as exc:  # the guarded parse's refusals (nesting, limits)
        return [], f"{path}: cannot be parsed ({exc})"
    facts = ModuleFacts(module, NodeIndex(module))
    verdicts = _compiler_verdicts(facts) if compile_kernels else {}
    rows = []
    try:
        estimates = ub.estimates(facts)
    except Exception as exc:  # noqa: BLE001 - one file's failed estimate is reported, the others are still shown
        return [], f"{path}: the estimate failed ({type(exc).__name__}: {exc})"
    for estimate in estimates:
        config = estimate.config
        shown = {k: v for k, v in sorted(config.values.items()) if k in estimate.extents}
        rows.append(Row(str(path), ub.line_of(facts, config.anchor), estimate.kernel.name, config.label.split(" line")[0],
                        shown, config.multibuffer, estimate.bytes, not estimate.unknown, sorted(estimate.unknown),
                        [(t.name, t.shape, t.bytes) for t in estimate.live],
                        verdicts.get((estimate.kernel.name, config.label))))
    return rows, None


def collect(paths: list[Path], compile_kernels: bool = False) -> tuple[list[Row], list[str]]:
    rows, errors = [], []
    for path in python_files(paths):
        found, error = rows_for_file(path, compile_kernels)
        rows += found
        if error:
            errors.append(error)
    return rows, errors


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """``[#########.....|!!]``: filled to the budget, ``|`` marks the budget, ``!`` the part over it."""
    inside = min(fraction, 1.0)
    filled = round(inside * width)
    text = "#" * filled + "." * (width - filled)
    if fraction > 1.0:
        over = min(round((fraction - 1.0) * width), width)
        return f"[{text}|{'!' * over}]"
    return f"[{text}|]"


def render_table(rows: list[Row], compiled: bool = False) -> str:
    if not rows:
        return "No kernel with tiles of a known shape found.\n"
    budget = ub.kib(ub.UB_BUDGET)
    lines = [f"Unified Buffer estimate per program, budget {budget} KB of {ub.kib(ub.UB_PHYSICAL)} KB "
             f"(vector core; an estimate, not a compile)" + ("; BiShengIR's verdict beside it" if compiled else ""),
             ""]
    current = None
    for row in rows:
        if row.path != current:
            current = row.path
            lines.append(row.path)
        values = ", ".join(f"{k}={v}" for k, v in row.values.items()) or "-"
        if row.multibuffer:
            values += ", multibuffer"
        estimate = f"~{ub.kib(row.bytes):>4} KB"
        flag = "OVER" if row.bytes > ub.UB_BUDGET else "ok"
        if not row.complete:
            flag = "partial"  # a shape needs a value the module does not give: a lower bound
        compiler = f"{row.compiler_text:<16} " if compiled else ""
        lines.append(f"  {row.line:>5}  {row.kernel:<32.32} {row.config:<8} {estimate} {row.percent:>5.0f}% "
                     f"{bar(row.bytes / ub.UB_BUDGET)} {flag:<7} {compiler}{values}")
    over = sum(1 for r in rows if r.bytes > ub.UB_BUDGET and r.complete)
    lines += ["", f"{len(rows)} config{'s' if len(rows) != 1 else ''}, {over} over the {budget} KB budget. "
              "'partial': a tile needs a value the module does not give (the figure is a lower bound)."]
    return "\n".join(lines) + "\n"


def render_json(rows: list[Row]) -> str:
    return json.dumps({"budget_bytes": ub.UB_BUDGET, "physical_bytes": ub.UB_PHYSICAL,
                       "configs": [row.as_json() for row in rows]}, indent=2) + "\n"
