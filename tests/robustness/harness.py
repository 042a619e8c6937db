"""What every robustness test checks: all registered rules and all their fixes survive a text.

"Survive" means: no exception escapes the engine, no rule crashes (an ASC002 finding counts as a failure here),
the fixed text parses, a CRLF file stays CRLF, and fixing it again changes nothing. The editor server's edits go
through the same checks: each quick fix, turned into LSP positions by the server and applied as an editor applies
them (lines end at \n, \r\n, \r; UTF-16 units), must change the text exactly as ``--fix`` applies that fix, and
its fix-all edit must give ``--fix``'s text. A fix the fixer refuses
because its result would not parse is kept apart: the file stays safe (the fix is never written), but it is a bug
in the rule's edit, which ``scripts/fuzz.py`` reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.catalog.registry import all_rules

REPO = Path(__file__).resolve().parents[2]
_LONE_LF = re.compile(r"(?<!\r)\n")


@dataclass
class Verdict:
    """Problems found with one text (empty means it survived)."""

    problems: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # fixes dropped because their result would not parse
    stale: list[str] = field(default_factory=list)  # fixes dropped because their range held other text

    def __bool__(self) -> bool:
        return not self.problems


def _rules():
    return list(all_rules())  # whatever is registered when the test runs, third-party plugins included


def examine(text: str, filename: str = "fuzzed.py") -> Verdict:
    """Lint and fix ``text`` with every registered rule, unsafe fixes included, and collect what went wrong."""
    rules = _rules()
    verdict = Verdict()
    crashes: dict[str, str] = {}

    def lint(candidate: str):
        found = engine.lint_text(candidate, filename, rules)
        for diagnostic in found:
            if diagnostic.code == engine.INTERNAL_ERROR:
                crashes.setdefault(diagnostic.extra.get("rule", "?"), diagnostic.message)
        return found

    try:
        outcome = fixes.fix_text(text, lint, unsafe=True)
    except Exception as exc:  # noqa: BLE001 - the point is to report it
        verdict.problems.append(f"exception escaped: {type(exc).__name__}: {exc}")
        return verdict
    verdict.problems.extend(f"ASC002: {message}" for message in crashes.values())
    verdict.problems.extend(_server_edit_problems(text, lint(text), outcome.text))
    for diagnostic in outcome.rejected:
        reason = diagnostic.extra.get(fixes.REFUSED_NOTE, fixes.DOES_NOT_PARSE)
        kind = verdict.refused if reason == fixes.DOES_NOT_PARSE else verdict.stale
        kind.append(f"fix of {diagnostic.code} refused ({reason}): {diagnostic.message}")
    if outcome.text != text:
        if not fixes.parses(outcome.text):
            verdict.problems.append("fixed text does not parse")
        if "\n" in text and not _LONE_LF.search(text) and _LONE_LF.search(outcome.text):
            verdict.problems.append("a fix wrote LF line endings into a CRLF file")
        again = fixes.fix_text(outcome.text, lint, unsafe=True)
        if again.text != outcome.text:
            verdict.problems.append("fixing twice changed the text again")
    return verdict


def _server_edit_problems(text: str, found, fixed_text: str) -> list[str]:
    """The server's quick fixes and fix-all, applied as an editor would, against ``--fix``'s own application."""
    from ascendlint.server import offset_position, text_edits
    from lsprotocol import types
    from tests.server.lsp_text import apply

    problems = []
    for diagnostic in found:
        if diagnostic.fix is None or not diagnostic.fix.edits:
            continue
        if fixes.mismatched_edit(text, diagnostic.fix.edits) is not None:
            continue  # refused by --fix as well
        expected = fixes.apply_edits(text, diagnostic.fix.edits)
        if apply(text, text_edits(text, diagnostic.fix.edits)) != expected:
            problems.append(f"the server's quick fix for {diagnostic.code} changes other text than --fix does")
    whole = types.TextEdit(types.Range(types.Position(0, 0), offset_position(text, len(text))), fixed_text)
    if apply(text, [whole]) != fixed_text:
        problems.append("the server's fix-all edit does not give --fix's text")
    return problems


def examine_notebook(data: bytes) -> Verdict:
    """Lint and fix a notebook's bytes with every rule: a damaged notebook must be one ASC001, never an exception."""
    from ascendlint.workspace.config import Settings
    from ascendlint.linter.runner import Linter, Options

    verdict = Verdict()
    linter = Linter(_rules(), Settings(root=REPO))
    for options in (Options(), Options(fix=True, unsafe_fixes=True)):
        try:
            result, written = linter.process_bytes(data, "fuzzed.ipynb", None, options)
        except Exception as exc:  # noqa: BLE001 - the point is to report it
            verdict.problems.append(f"exception escaped: {type(exc).__name__}: {exc}")
            return verdict
        if any(d.code == engine.INTERNAL_ERROR for d in result.diagnostics):
            verdict.problems.append("ASC002 on a notebook")
        if written is not None:
            from ascendlint.linter import notebook

            try:
                notebook.read(written)
            except notebook.NotebookError as exc:
                verdict.problems.append(f"the fixed notebook cannot be read back: {exc}")
    return verdict


def corpus() -> list[tuple[str, str]]:
    """(name, source) of every rule example and every bundled kernel module: realistic starting points."""
    found = []
    for rule in _rules():
        for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID)):
            found.extend((f"{rule.code}-{kind}-{i}", example.code) for i, example in enumerate(examples))
    for folder in ("reference_kernels", "examples"):
        for path in sorted((REPO / folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "triton" in text:
                found.append((f"{folder}/{path.name}", text))
    return found
