"""``ascendlint server``: a Language Server (pygls) that lints Python buffers as they are edited.

Diagnostics are published when a document opens or is saved, and shortly after it changes (edits within the
debounce delay are linted once), from the editor's unsaved text, with the settings of the file's closest
configuration and through the same engine and result cache as ``ascendlint check``. Each fixable finding offers a
quick fix; ``source.fixAll.ascendlint`` applies every safe fix at once; hovering a finding, or a code in a
``# noqa:`` comment, shows the rule's documentation. Needs the ``server`` extra (``pip install 'ascendlint[server]'``).
"""

from __future__ import annotations

import asyncio
import bisect
import io
import re
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__, docs_links, fixes, selection
from .config import ConfigError, SettingsResolver
from .diagnostics import Applicability, Diagnostic, Severity
from .notebook_lint import is_notebook
from .per_file import LinterSet
from .rule_index import rule_index
from .runner import Linter, Options
from .text_positions import line_starts, source_lines

DEBOUNCE_SECONDS = 0.3
SOURCE = "ascendlint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.ascendlint"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.ADVISORY: types.DiagnosticSeverity.Information,
}
_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


@dataclass
class Linted:
    """One lint of one document version: the text it saw and what it found (with fixes)."""

    version: int | None
    text: str
    findings: list[Diagnostic]


class AscendlintServer(LanguageServer):
    def __init__(self) -> None:
        # Whole documents on every change: pygls applies incremental changes by str.splitlines() lines, which also
        # break at form feeds and U+2028, so after such a character its copy of the buffer would drift from the
        # editor's (and every position with it). LSP lines break at \n, \r\n and \r only.
        super().__init__("ascendlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.debounce = DEBOUNCE_SECONDS
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ascendlint-lint")  # one cache, one writer
        rules = rule_index()
        self.linters = LinterSet(SettingsResolver(rules), lambda s, cache: Linter(_enabled(rules, s), s, cache=cache))

    # -- linting ----------------------------------------------------------------------------------------------
    def lint_now(self, uri: str) -> Linted | None:
        document = self.workspace.get_text_document(uri)
        path = _path_of(uri)
        text = document.source
        if path is None or is_notebook(str(path), path):
            return None
        try:
            linter = self.linters.linter_for(path)
        except (ConfigError, selection.SelectionError) as exc:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ascendlint: {exc}"))
            return None
        docs_links.use_template(linter.settings.docs_url)
        data = _buffer_bytes(text)
        if data is None:
            findings = linter.lint_source(text, str(path), linter.rules_for(path))
        else:
            result, _ = linter.process_bytes(data, str(path), path, Options())
            findings = result.diagnostics
        for finding in findings:
            finding.url = docs_links.rule_url(finding.code)
        return Linted(document.version, text, findings)

    async def lint_and_publish(self, uri: str, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            linted = await asyncio.get_running_loop().run_in_executor(self.worker, self.lint_now, uri)
        except Exception as exc:  # noqa: BLE001 - an editor session must survive any one file
            self.window_log_message(types.LogMessageParams(types.MessageType.Error,
                                                           f"ascendlint failed on {uri}: {type(exc).__name__}: {exc}"))
            return
        if linted is None:
            return
        current = self.workspace.get_text_document(uri)
        if current.version != linted.version:  # edited while linting: the next lint publishes
            return
        self.linted[uri] = linted
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=linted.version,
                                           diagnostics=[self.to_lsp(uri, d, linted.text) for d in linted.findings])
        )

    def schedule(self, uri: str, delay: float) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self.lint_and_publish(uri, delay))

    # -- positions ---------------------------------------------------------------------------------------------
    # LSP lines end at \n, \r\n and \r only (as Python's do: text_positions.line_starts), never at a form feed or
    # U+2028 as str.splitlines would have it; characters are counted in the negotiated units (UTF-16 by default).
    def _units(self, uri: str) -> Callable[[str], int]:
        return self.workspace.get_text_document(uri).position_codec.client_num_units

    def position(self, uri: str, text: str, row: int, column: int) -> types.Position:
        return location_position(text, row, column, self._units(uri))

    def offset_position(self, uri: str, text: str, offset: int) -> types.Position:
        return offset_position(text, offset, self._units(uri))

    def to_lsp(self, uri: str, finding: Diagnostic, text: str) -> types.Diagnostic:
        start = self.position(uri, text, finding.location.row, finding.location.column)
        end = self.position(uri, text, finding.end_location.row, finding.end_location.column)
        return types.Diagnostic(
            range=types.Range(start, end),
            message=finding.message,
            severity=_SEVERITY[finding.severity],
            code=finding.code,
            code_description=types.CodeDescription(href=finding.url) if finding.url else None,
            source=SOURCE,
            data={"fixable": finding.fix is not None},
        )

    def edits_of(self, uri: str, text: str, finding: Diagnostic) -> list[types.TextEdit]:
        return text_edits(text, finding.fix.edits, self._units(uri))


def _utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@lru_cache(maxsize=8)
def _starts(text: str) -> tuple[int, ...]:
    return tuple(line_starts(text))


def offset_position(text: str, offset: int, units: Callable[[str], int] = _utf16_units) -> types.Position:
    """The LSP position of a character offset into ``text``."""
    starts = _starts(text)
    offset = max(0, min(offset, len(text)))
    row = bisect.bisect_right(starts, offset) - 1
    return types.Position(row, units(text[starts[row] : offset]))


def location_position(text: str, row: int, column: int, units: Callable[[str], int] = _utf16_units) -> types.Position:
    """The LSP position of a finding's 1-based (row, column in characters), clamped to the row's own text."""
    starts = _starts(text)
    if row > len(starts):
        return offset_position(text, len(text), units)
    begin = starts[max(row, 1) - 1]
    end = starts[row] if row < len(starts) else len(text)
    while end > begin and text[end - 1] in "\r\n":
        end -= 1
    return offset_position(text, min(begin + max(column, 1) - 1, end), units)


def text_edits(text: str, edits, units: Callable[[str], int] = _utf16_units) -> list[types.TextEdit]:
    """Engine edits (character offsets into ``text``) as LSP text edits."""
    return [
        types.TextEdit(range=types.Range(offset_position(text, e.start, units), offset_position(text, e.end, units)),
                       new_text=e.content)
        for e in edits
    ]


server = AscendlintServer()


def _enabled(rules, settings):
    return selection.resolve(
        rules,
        selection.validate(settings.select, rules, "select"),
        selection.validate(settings.extend_select, rules, "extend-select"),
        selection.validate(settings.ignore, rules, "ignore"),
    )


def _path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def _buffer_bytes(text: str) -> bytes | None:
    """The bytes the buffer would be saved as (its coding cookie honoured), so the cache sees the same key."""
    utf8 = text.encode("utf-8", "surrogatepass")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(utf8).readline)
    except SyntaxError:
        return None
    if encoding in ("utf-8", "utf-8-sig"):
        return utf8
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return None


# -- document sync ----------------------------------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: AscendlintServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    if isinstance(options, dict) and isinstance(options.get("debounceMs"), (int, float)):
        ls.debounce = max(0.0, options["debounceMs"] / 1000)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: AscendlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0.0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: AscendlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: AscendlintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0.0)
    await asyncio.get_running_loop().run_in_executor(ls.worker, ls.linters.save_caches)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: AscendlintServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.linted.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.SHUTDOWN)
def shutdown(ls: AscendlintServer, params) -> None:
    ls.linters.save_caches()


# -- code actions -------------------------------------------------------------------------------------------------
@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
)
def code_actions(ls: AscendlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    linted = ls.linted.get(uri)
    if linted is None or linted.text != document.source:
        return []  # findings of an older text: the fresh lint is on its way
    wanted = params.context.only
    actions = []
    if not wanted or any(kind == types.CodeActionKind.QuickFix or kind == "quickfix" for kind in wanted):
        actions.extend(_quick_fixes(ls, uri, linted, params.range))
    if not wanted or any(FIX_ALL.startswith(str(kind)) for kind in wanted):
        fix_all = _fix_all(ls, uri, linted)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def _overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _quick_fixes(ls: AscendlintServer, uri: str, linted: Linted, wanted: types.Range) -> list[types.CodeAction]:
    actions = []
    for finding in linted.findings:
        if finding.fix is None or finding.fix.applicability is Applicability.DISPLAY_ONLY or not finding.fix.edits:
            continue
        lsp = ls.to_lsp(uri, finding, linted.text)
        if not _overlaps(lsp.range, wanted):
            continue
        unsafe = finding.fix.applicability is Applicability.UNSAFE
        actions.append(
            types.CodeAction(
                title=f"{finding.code}: {finding.fix.message}" + (" (unsafe)" if unsafe else ""),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp],
                is_preferred=not unsafe,
                edit=types.WorkspaceEdit(changes={uri: ls.edits_of(uri, linted.text, finding)}),
            )
        )
    return actions


def _fix_all(ls: AscendlintServer, uri: str, linted: Linted) -> types.CodeAction | None:
    if not any(fixes.applicable(d, unsafe=False) for d in linted.findings):
        return None
    path = _path_of(uri)
    linter = ls.linters.linter_for(path)
    rules = linter.rules_for(path)
    outcome = fixes.fix_text(linted.text, lambda t: linter.lint_source(t, str(path), rules), unsafe=False)
    if outcome.text == linted.text:
        return None
    whole = types.Range(types.Position(0, 0), ls.offset_position(uri, linted.text, len(linted.text)))
    return types.CodeAction(
        title=f"ascendlint: fix all ({len(outcome.fixed)} safe fix{'es' if len(outcome.fixed) != 1 else ''})",
        kind=FIX_ALL,
        edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=outcome.text)]}),
    )


# -- hover --------------------------------------------------------------------------------------------------------
@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: AscendlintServer, params: types.HoverParams) -> types.Hover | None:
    from .docs import render_rule
    from .registry import rule_by_code_or_name

    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    code = _noqa_code_at(document, params.position)
    if code is None:
        linted = ls.linted.get(uri)
        if linted is not None and linted.text == document.source:
            point = types.Range(params.position, params.position)
            code = next((d.code for d in linted.findings if _overlaps(ls.to_lsp(uri, d, linted.text).range, point)),
                        None)
    rule = rule_by_code_or_name(code) if code else None
    if rule is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=render_rule(rule)))


def _noqa_code_at(document, position: types.Position) -> str | None:
    """The rule code under the cursor in a ``# noqa: ASC101, ASC2`` comment."""
    lines = source_lines(document.source)  # LSP lines (document.lines would also split at \f and U+2028)
    if position.line >= len(lines):
        return None
    line = lines[position.line]
    column = document.position_codec.position_from_client_units(lines, position).character
    match = _NOQA_CODES.search(line)
    if match is None:
        return None
    for code in re.finditer(r"[A-Z]+[0-9]+", match.group("codes"), re.IGNORECASE):
        start, end = match.start("codes") + code.start(), match.start("codes") + code.end()
        if start <= column <= end:
            return code.group(0).upper()
    return None


def run() -> None:
    server.start_io()
