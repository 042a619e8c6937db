"""``sarif``: a SARIF 2.1.0 log that GitHub code scanning (``github/codeql-action/upload-sarif``) accepts.

Every registered rule is described in ``tool.driver.rules`` so that a result's help, severity and documentation
link show in the code-scanning UI. Columns count Unicode code points (``columnKind``), ends are exclusive, as in
ascendlint's own diagnostics. Each result carries a fingerprint built from its rule, the text of its line and its
rank among identical lines, so an alert keeps its identity when code above it moves. Fixes the run could apply
(safe ones, and unsafe ones under ``--unsafe-fixes``) are included as SARIF ``fixes``: one replacement per fix,
of the whole lines it touches, the same change the ``rdjson`` suggestions offer.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..diagnostics import Applicability, Diagnostic, Severity
from ..docs_links import home_url
from ..catalog.suites import measured, suites_of
from ..text.text_positions import line_starts, offset_to_location
from . import RunReport, register, shown, sorted_diagnostics
from .notebook_raw import cell_label, raw_span
from .whole_lines import whole_line_edit

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"
FINGERPRINT_KEY = "ascendlint/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.ADVISORY: "note"}
PROBLEM_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.ADVISORY: "recommendation"}
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


def _rules_for(diagnostics: list[Diagnostic]) -> list:
    """Every registered rule, plus a minimal stand-in for any code only seen in the findings."""
    from ..catalog.registry import all_rules

    rules = list(all_rules())
    known = {rule.code for rule in rules}
    extra: dict[str, tuple] = {}
    for d in diagnostics:
        if d.code not in known:
            extra.setdefault(d.code, (d.code, d.name, d.severity, d.url))
    return rules + [extra[code] for code in sorted(extra)]


def _pascal_case(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_\s]+", name) if part)


def _first_sentence(text: str) -> str:
    paragraph = text.split("\n\n")[0].replace("\n", " ").strip()
    match = _FIRST_SENTENCE.match(paragraph)
    return match.group(1) if match else paragraph


def _rule_descriptor(rule) -> dict:
    if isinstance(rule, tuple):  # a code with no registered rule
        code, name, severity, url = rule
        descriptor = {"id": code, "name": _pascal_case(name), "shortDescription": {"text": f"{code} {name}."}}
        if url:
            descriptor["helpUri"] = url
        descriptor["defaultConfiguration"] = {"level": LEVELS[severity]}
        return descriptor
    from ..catalog.docs import render_rule

    summary = rule.summary()
    why = " ".join(rule.why.split())
    url = rule.url()
    return {
        "id": rule.code,
        "name": _pascal_case(rule.name),
        "shortDescription": {"text": _first_sentence(summary)},
        "fullDescription": {"text": " ".join(summary.split())},
        "help": {"text": f"{' '.join(summary.split())}\n\nWhy: {why}", "markdown": render_rule(rule)},
        **({"helpUri": url} if url else {}),
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": _tags(rule),
            "precision": measured(rule).precision,
            "problem.severity": PROBLEM_SEVERITY[rule.severity],
        },
    }


def _tags(rule) -> list[str]:
    """What code-scanning services filter on: the platform, the kind of problem, and the suites (``suite:review``)."""
    kind = "performance" if rule.severity is Severity.ADVISORY else "correctness"
    return ["ascend", "triton", kind, *(f"suite:{name}" for name in suites_of(rule))]


def artifact_uri(filename: str) -> tuple[str, bool]:
    """(URI, relative?) for a file: relative to the current folder when under it, else an absolute file URI.

    The name's original bytes are percent-encoded, so names that are not UTF-8 or hold control characters give
    valid URIs that still name the file exactly.
    """
    path = Path(filename)
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(Path.cwd())
    except ValueError:
        if os.name == "nt":  # drive letters and UNC shares; Windows names are Unicode anyway
            return absolute.as_uri(), False
        return "file://" + quote(os.fsencode(absolute.as_posix()), safe="/"), False
    return quote(os.fsencode(relative.as_posix()), safe="/"), True


def _artifact_location(filename: str) -> dict:
    uri, relative = artifact_uri(filename)
    return {"uri": uri, "uriBaseId": SOURCE_ROOT} if relative else {"uri": uri}


def _region(diagnostic: Diagnostic, text: str | None) -> dict:
    start, end = diagnostic.location, diagnostic.end_location
    region = {"startLine": start.row, "startColumn": start.column}
    if end > start:  # an empty span (a syntax error's point) is shown to the end of its line
        region.update(endLine=end.row, endColumn=end.column)
        snippet = _slice(text, start, end)
        if snippet:
            region["snippet"] = {"text": snippet}
    return region


@lru_cache(maxsize=64)
def _line_starts(text: str) -> tuple[int, ...]:
    return tuple(line_starts(text))


def _slice(text: str | None, start, end) -> str | None:
    """The source text of a span, when the span lies inside ``text``."""
    if text is None:
        return None
    starts = _line_starts(text)
    if not (start.row <= len(starts) and end.row <= len(starts)):
        return None
    return text[starts[start.row - 1] + start.column - 1 : starts[end.row - 1] + end.column - 1]


def _line_text(text: str | None, row: int) -> str:
    if text is None:
        return ""
    lines = text.split("\n")
    return lines[row - 1].strip() if 1 <= row <= len(lines) else ""


def _place_in_notebook(location: dict, diagnostic: Diagnostic) -> None:
    """A notebook finding: the region of the same characters in the stored .ipynb (a JSON file, which is what
    code scanning shows), the cell and its own region in ``properties``; the cell region when unmappable."""
    cell_region = dict(location["physicalLocation"]["region"])
    cell_region.pop("snippet", None)
    location["properties"] = {"notebookCell": diagnostic.cell, "cellRegion": cell_region}
    location["logicalLocations"] = [{"name": f"cell {diagnostic.cell}", "kind": "module"}]
    mapped = raw_span(diagnostic.filename, diagnostic.cell, diagnostic.location, diagnostic.end_location)
    if mapped is None:
        location["physicalLocation"]["region"] = cell_region
        return
    book, start, end = mapped
    region = {"startLine": start.row, "startColumn": start.column}
    if end > start:
        region.update(endLine=end.row, endColumn=end.column)
        snippet = _slice(book.raw, start, end)
        if snippet:
            region["snippet"] = {"text": snippet}
    location["physicalLocation"]["region"] = region


def _fingerprints(diagnostics: list[Diagnostic], report: RunReport) -> dict[int, str]:
    """Stable identities: rule, file, the stripped text of the line, and the rank among equal triples (a notebook
    finding's line is its cell's)."""
    seen: dict[tuple, int] = {}
    result = {}
    for diagnostic in diagnostics:
        line = _line_text(report.source_of(diagnostic), diagnostic.location.row)
        key = (diagnostic.code, diagnostic.filename, line)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        digest = hashlib.sha256("\0".join((*key, str(rank))).encode("utf-8", "surrogateescape")).hexdigest()
        result[id(diagnostic)] = f"{digest[:32]}:{rank + 1}"
    return result


def _fix(diagnostic: Diagnostic, text: str | None, unsafe: bool) -> dict | None:
    """The fix as one replacement of the whole lines it touches (``whole_lines``), as the review suggestions."""
    fix = diagnostic.fix
    if fix is None or text is None or not fix.edits:
        return None
    if fix.applicability is not Applicability.SAFE and not (unsafe and fix.applicability is Applicability.UNSAFE):
        return None
    edit = whole_line_edit(text, fix.edits)
    start, end = offset_to_location(text, edit.start), offset_to_location(text, edit.end)
    replacement = {
        "deletedRegion": {
            "startLine": start.row,
            "startColumn": start.column,
            "endLine": end.row,
            "endColumn": end.column,
            "charOffset": edit.start,
            "charLength": edit.end - edit.start,
        },
        "insertedContent": {"text": edit.content},
    }
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {"artifactLocation": _artifact_location(diagnostic.filename), "replacements": [replacement]}
        ],
    }


def _invocation(failures: list[tuple[str, str]]) -> dict:
    """Whether every path was linted; each one that was not is an error-level tool execution notification."""
    invocation = {"executionSuccessful": not failures}
    if failures:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "error",
                "descriptor": {"id": "lint-error"},
                "message": {"text": f"Failed to lint {shown(path)}: {shown(reason)}"},
                "locations": [{"physicalLocation": {"artifactLocation": _artifact_location(path)}}],
            }
            for path, reason in failures
        ]
    return invocation


def sarif_log(report: RunReport) -> dict:
    diagnostics = sorted_diagnostics(report.diagnostics)
    rules = _rules_for(diagnostics)
    index = {(rule[0] if isinstance(rule, tuple) else rule.code): i for i, rule in enumerate(rules)}
    fingerprints = _fingerprints(diagnostics, report)
    results = []
    for diagnostic in diagnostics:
        location = {
            "physicalLocation": {
                "artifactLocation": _artifact_location(diagnostic.filename),
                "region": _region(diagnostic, report.sources.get(diagnostic.filename)),
            }
        }
        message = diagnostic.message
        if diagnostic.cell is not None:
            message = f"{message} ({cell_label(diagnostic.cell, diagnostic.location)})"
            _place_in_notebook(location, diagnostic)
        result = {
            "ruleId": diagnostic.code,
            "ruleIndex": index[diagnostic.code],
            "level": LEVELS[diagnostic.severity],
            "message": {"text": message},
            "locations": [location],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprints[id(diagnostic)]},
        }
        fix = _fix(diagnostic, report.sources.get(diagnostic.filename), report.unsafe_fixes)
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    run = {
        "tool": {
            "driver": {
                "name": "ascendlint",
                "version": __version__,
                "semanticVersion": __version__,
                **({"informationUri": home_url()} if home_url() else {}),
                "rules": [_rule_descriptor(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [_invocation(report.failures)],
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


@register("sarif")
def render_sarif(report: RunReport) -> str:
    return json.dumps(sarif_log(report), indent=2, ensure_ascii=False) + "\n"
