"""``full`` (finding with a code frame and the fix's help line) and ``concise`` (one line per finding)."""

from __future__ import annotations

from ..diagnostics import Applicability, Diagnostic, fix_applies
from ..text_positions import source_lines
from . import RunReport, register, sorted_diagnostics


_BOLD, _RED, _CYAN, _BLUE, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[34m", "\x1b[0m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color and text else text


def _fixable_marker(diagnostic: Diagnostic, unsafe: bool, color: bool = False) -> str:
    return _paint("[*]", _CYAN, color) + " " if fix_applies(diagnostic, unsafe) else ""


def headline(diagnostic: Diagnostic, unsafe: bool = False, color: bool = False) -> str:
    """``file:row:col: CODE [*] message``; with ``color``, ruff's look: bold place, red bold code, cyan marker."""
    return (f"{_paint(diagnostic.where(), _BOLD, color)}: {_paint(diagnostic.code, _BOLD + _RED, color)} "
            f"{_fixable_marker(diagnostic, unsafe, color)}{diagnostic.message}")


def _frame(diagnostic: Diagnostic, text: str | None, color: bool = False) -> list[str]:
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
        out.append(" " * width + f" = help: {diagnostic.fix.message}")
    out.append(" " * width + f" = info: {diagnostic.url or f'ascendlint rule {diagnostic.code}'}")
    return out


def summary(report: RunReport) -> list[str]:
    if not report.show_summary:
        return []
    lines = []
    remaining = len(report.diagnostics)
    if report.fix_mode:
        if report.fixed_count or remaining:
            lines.append(f"Found {report.fixed_count + remaining} finding{'s' if report.fixed_count + remaining != 1 else ''} "
                         f"({report.fixed_count} fixed, {remaining} remaining).")
            lines.append(f"Fixed {report.fixed_count} ({remaining} remaining)")
        elif not report.failed_paths:
            lines.append("All checks passed!")
        return lines
    if not remaining:
        return [] if report.failed_paths else ["All checks passed!"]
    lines.append(f"Found {remaining} finding{'s' if remaining != 1 else ''}.")
    safe = sum(1 for d in report.diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in report.diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)
    if safe or (unsafe and report.unsafe_fixes):
        count = safe + (unsafe if report.unsafe_fixes else 0)
        lines.append(f"[*] {count} fixable with the `--fix` option.")
    if unsafe and not report.unsafe_fixes:
        lines.append(f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option.")
    return lines


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
        out.extend(_frame(diagnostic, report.source_of(diagnostic), report.color))
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
