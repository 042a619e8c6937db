"""``full`` (finding with a code frame and the fix's help line) and ``concise`` (one line per finding)."""

from __future__ import annotations

from ..diagnostics import Applicability, Diagnostic, fix_applies
from ..text.text_positions import source_lines
from . import RunReport, register, sorted_diagnostics


_BOLD, _RED, _CYAN, _BLUE, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[34m", "\x1b[0m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color and text else text


def _fixable_marker(diagnostic: Diagnostic, unsafe: bool, color: bool = False) -> str:
    return _paint("[*]", _CYAN, color) + " " if fix_applies(diagnostic, unsafe) else ""


def _unsafe_note(diagnostic: Diagnostic, unsafe_fixes: bool) -> str:
    """An unsafe fix this run does not apply says so next to its help, so `--fix` leaving it is no surprise."""
    if diagnostic.fix is None or diagnostic.fix.applicability is not Applicability.UNSAFE or unsafe_fixes:
        return ""
    return " (unsafe fix: applied only with `--fix --unsafe-fixes`)"


def headline(diagnostic: Diagnostic, unsafe: bool = False, color: bool = False) -> str:
    """``file:row:col: CODE [*] message``; with ``color``, ruff's look: bold place, red bold code, cyan marker."""
    return (f"{_paint(diagnostic.where(), _BOLD, color)}: {_paint(diagnostic.code, _BOLD + _RED, color)} "
            f"{_fixable_marker(diagnostic, unsafe, color)}{diagnostic.message}")


def _frame(diagnostic: Diagnostic, text: str | None, color: bool = False, unsafe_fixes: bool = False) -> list[str]:
    if text is None:
        return []
    lines = source_lines(text)
    row = diagnostic.location.row
    if not 1 <= row <= len(lines):
        return []
    first = max(1, row - 1)
    width = len(str(row))
    out = [" " * width + " |"]
    for number in range(first, row + 1):
        out.append(f"{number:>{width}} | {lines[number - 1]}")
    line = lines[row - 1]
    start = diagnostic.location.column
    if diagnostic.end_location.row == row:
        end = max(diagnostic.end_location.column, start + 1)
    else:
        end = max(len(line) + 1, start + 1)
    out.append(" " * width + " | " + " " * (start - 1) + _paint("^" * (end - start) + f" {diagnostic.code}",
                                                                 _BOLD + _RED, color))
    out.append(" " * width + " |")
    if diagnostic.fix is not None:
        out.append(" " * width + f" = help: {diagnostic.fix.message}{_unsafe_note(diagnostic, unsafe_fixes)}")
    out.append(" " * width + f" = info: {diagnostic.url or f'ascendlint rule {diagnostic.code}'}")
    return out


def summary(report: RunReport) -> list[str]:
    """ruff's closing lines: what was found (and fixed), then what ``--fix`` or ``--unsafe-fixes`` would add."""
    if report.fix_only:
        return _fix_only_summary(report)
    if not report.show_summary:
        return []
    lines = []
    remaining = len(report.diagnostics)
    fixed = report.fixed_count if report.fix_mode else 0
    total = fixed + remaining
    if fixed:
        lines.append(f"Found {total} finding{_s(total)} ({fixed} fixed, {remaining} remaining).")
    elif remaining:
        lines.append(f"Found {remaining} finding{_s(remaining)}.")
    elif not report.failed_paths:
        lines.append("All checks passed!")
    applicable, hidden = _fix_counts(report)
    if report.unsafe_hint and hidden:
        if applicable:
            lines.append(f"[*] {applicable} fixable with the `--fix` option ({hidden} hidden fix{_es(hidden)} can be "
                         "enabled with the `--unsafe-fixes` option).")
        else:
            lines.append(f"No fixes available ({hidden} hidden fix{_es(hidden)} can be enabled with the "
                         "`--unsafe-fixes` option).")
    elif applicable:
        lines.append(f"[*] {applicable} fixable with the `--fix` option.")
    return lines


def _fix_only_summary(report: RunReport) -> list[str]:
    """``--fix-only``: the fixes made, and the unsafe ones left (ruff's wording); nothing about other findings."""
    fixed = report.fixed_count
    _, hidden = _fix_counts(report)
    if hidden and report.unsafe_hint:
        if fixed:
            return [f"Fixed {fixed} finding{_s(fixed)} ({hidden} additional fix{_es(hidden)} available with "
                    "`--unsafe-fixes`)."]
        return [f"No findings fixed ({hidden} fix{_es(hidden)} available with `--unsafe-fixes`)."]
    return [f"Fixed {fixed} finding{_s(fixed)}."] if fixed else []


def _fix_counts(report: RunReport) -> tuple[int, int]:
    """Remaining findings whose fix this run's options apply, and those whose unsafe fix they do not."""
    applicable = hidden = 0
    for d in report.diagnostics:
        if d.fix is None:
            continue
        if d.fix.applicability is Applicability.SAFE or (report.unsafe_fixes and
                                                         d.fix.applicability is Applicability.UNSAFE):
            applicable += 1
        elif d.fix.applicability is Applicability.UNSAFE:
            hidden += 1
    return applicable, hidden


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _es(count: int) -> str:
    return "" if count == 1 else "es"


def _fixed_listing(report: RunReport) -> list[str]:
    if not (report.show_fixes and report.fixed and report.show_summary):
        return []
    out = [f"Fixed {len(report.fixed)} finding{'s' if len(report.fixed) != 1 else ''}:"]
    by_file: dict[str, dict[str, int]] = {}
    for d in report.fixed:
        counts = by_file.setdefault(d.filename, {})
        counts[f"{d.code} ({d.name})"] = counts.get(f"{d.code} ({d.name})", 0) + 1
    for filename in sorted(by_file):
        out.append(f"- {filename}:")
        for label, count in sorted(by_file[filename].items()):
            out.append(f"    {count} x {label}")
    return out


@register("full")
def render_full(report: RunReport) -> str:
    out: list[str] = []
    for diagnostic in sorted_diagnostics(report.diagnostics):
        out.append(headline(diagnostic, report.unsafe_fixes, report.color))
        out.extend(_frame(diagnostic, report.source_of(diagnostic), report.color, report.unsafe_fixes))
        out.append("")
    out.extend(_fixed_listing(report))
    out.extend(summary(report))
    return "\n".join(out) + "\n"


@register("concise")
def render_concise(report: RunReport) -> str:
    out = [headline(d, report.unsafe_fixes, report.color) for d in sorted_diagnostics(report.diagnostics)]
    out.extend(_fixed_listing(report))
    out.extend(summary(report))
    return "\n".join(out) + "\n"
