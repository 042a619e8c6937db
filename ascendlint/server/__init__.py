"""``ascendlint server``: a Language Server (pygls) that lints Python buffers as they are edited.

Diagnostics are published when a document opens or is saved, and shortly after it changes (edits within the
debounce delay are linted once), from the editor's unsaved text, with the settings of the file's closest
configuration and through the same engine and result cache as ``ascendlint check``. Each fixable finding offers a
quick fix; ``source.fixAll.ascendlint`` applies every safe fix at once; hovering a finding, or a code in a
``# noqa:`` comment, shows the rule's documentation. Needs the ``server`` extra (``pip install 'ascendlint[server]'``).

Configuration follows the files as ``ascendlint check`` does, and is reloaded (every open document relinted) when a
configuration file is saved, when the client reports a watched one changed (the server registers a watcher for
``ascendlint.toml``, ``.ascendlint.toml`` and ``pyproject.toml``, as ruff's does) and on
``workspace/didChangeConfiguration``. Editor settings (``select``, ``extendSelect``, ``ignore``, ``configuration``,
``debounceMs``) come from ``initializationOptions`` and from the client's ``ascendlint`` section of
``workspace/configuration``, the latter winning. ``untitled:`` buffers are linted with the settings of the workspace
folder; files that ``exclude``/``extend-exclude`` match get no diagnostics. Every finding a comment can suppress
offers "Disable CODE for this line" (adds or merges ``# noqa: CODE``).

The server is this package's ``__init__``: ``ascendlint server`` (what editors are set up to start) runs
``ascendlint.server.run``, whose path stays as it was.
"""

from __future__ import annotations

import asyncio
import bisect
import io
import re
import tokenize
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__, docs_links, fixes
from ..workspace import selection
from ..fixes.add_noqa import NOT_SUPPRESSIBLE, add_noqa_to_text
from ..workspace.config import CONFIG_NAMES, ConfigError, SettingsResolver
from ..diagnostics import Edit
from ..diagnostics import Applicability, Diagnostic, Severity
from ..workspace.discovery import is_force_excluded
from ..linter.notebook_lint import is_notebook
from ..linter.per_file import LinterSet
from ..catalog.rule_index import rule_index
from ..linter.runner import Linter, Options
from ..text.text_positions import line_starts, source_lines

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
        self.init_options: dict = {}  # from `initialize`
        self.client_options: dict = {}  # the client's `ascendlint` section of workspace/configuration
        self.client_settings = ClientSettings()
        self.configuring: asyncio.Task | None = None  # the first workspace/configuration pull, awaited by lints
        self.linters = self.make_linters(self.client_settings)

    # -- configuration ---------------------------------------------------------------------------------------
    def make_linters(self, chosen: "ClientSettings") -> LinterSet:
        rules = rule_index()
        resolver = SettingsResolver(rules, chosen.config)
        return _EditorLinters(resolver, lambda s, cache: _editor_linter(rules, s, chosen, cache))

    def root(self) -> Path:
        root = self.workspace.root_path if self.workspace is not None else None
        return Path(root) if root else Path.cwd()

    def reload(self) -> None:
        """Forget every configuration file read so far and relint every open document with what is there now."""
        merged = {**self.init_options, **self.client_options}
        try:
            chosen = ClientSettings.parse(merged, self.root())
            linters = self.make_linters(chosen)
            if chosen.config is not None:
                linters.linter_for(None)  # a broken --config file is reported now, not on every lint
        except (ConfigError, selection.SelectionError, ValueError) as exc:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ascendlint: {exc}"))
            return
        self.worker.submit(self.linters.save_caches)  # in the lint thread: never while a lint writes the cache
        self.client_settings, self.linters = chosen, linters
        if chosen.debounce is not None:
            self.debounce = chosen.debounce
        self.linted.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, 0.0)

    async def pull_configuration(self) -> None:
        """The client's ``ascendlint`` settings (workspace/configuration), when it offers them."""
        try:
            answer = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="ascendlint")])
                ),
                timeout=5.0,
            )
        except Exception as exc:  # noqa: BLE001 - a client that cannot answer keeps the other settings
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning,
                                                           f"ascendlint: workspace/configuration failed: {exc}"))
            return
        section = answer[0] if answer else None
        self.client_options = dict(section) if isinstance(section, dict) else {}

    # -- linting ----------------------------------------------------------------------------------------------
    def target(self, uri: str) -> tuple[Path | None, Path, str] | None:
        """(the file's path or None for an untitled buffer, the path its settings come from, the reported name);
        None for what is not linted (notebooks, other schemes, untitled buffers in another language)."""
        if uri.startswith("untitled:"):
            document = self.workspace.get_text_document(uri)
            if document.language_id not in (None, "", "python"):
                return None
            return None, self.root(), uri
        path = _path_of(uri)
        if path is None or is_notebook(str(path), path):
            return None
        return path, path, str(path)

    def lint_now(self, uri: str) -> Linted | None:
        document = self.workspace.get_text_document(uri)
        text = document.source
        version = document.version
        target = self.target(uri)
        if target is None:
            return None
        path, settings_path, filename = target
        try:
            linter = self.linters.linter_for(settings_path)
        except (ConfigError, selection.SelectionError) as exc:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ascendlint: {exc}"))
            return None
        if path is not None and is_force_excluded(path, linter.settings):
            return Linted(version, text, [])  # `exclude`/`extend-exclude` match it, as `check --force-exclude`
        docs_links.use_template(linter.settings.docs_url)
        refused = _refused_as_too_large(text, filename, linter)
        if refused is not None:
            return Linted(version, text, refused)
        data = _buffer_bytes(text)
        if path is None:  # untitled: linted as text, never cached under a made-up name
            findings = linter.lint_source(text, filename, linter.rules)
        elif data is None:
            findings = linter.lint_source(text, str(path), linter.rules_for(path))
        else:
            result, _ = linter.process_bytes(data, str(path), path, Options())
            findings = result.diagnostics
        for finding in findings:
            finding.url = docs_links.rule_url(finding.code)
        return Linted(version, text, findings)

    async def lint(self, uri: str) -> Linted | None:
        """Lint the document's current text in the worker; None when it cannot be linted or changed meanwhile."""
        if self.configuring is not None:
            await asyncio.shield(self.configuring)
        try:
            linted = await asyncio.get_running_loop().run_in_executor(self.worker, self.lint_now, uri)
        except Exception as exc:  # noqa: BLE001 - an editor session must survive any one file
            self.window_log_message(types.LogMessageParams(types.MessageType.Error,
                                                           f"ascendlint failed on {uri}: {type(exc).__name__}: {exc}"))
            return None
        if linted is None:
            return None
        current = self.workspace.get_text_document(uri)
        if current.version != linted.version or current.source != linted.text:  # edited meanwhile
            return None
        return linted

    async def lint_and_publish(self, uri: str, delay: float = 0.0) -> None:
        if delay:
            await asyncio.sleep(delay)
        linted = await self.lint(uri)
        if linted is not None:
            self.publish(uri, linted)

    async def fresh(self, uri: str) -> Linted | None:
        """Findings of the document's current text: the last lint's if it saw this text, else a lint now (which
        also publishes, and makes a pending debounced lint of the same text unnecessary)."""
        document = self.workspace.get_text_document(uri)
        linted = self.linted.get(uri)
        if linted is not None and linted.text == document.source:
            return linted
        linted = await self.lint(uri)
        if linted is None:
            return None
        pending = self.pending.pop(uri, None)  # it would lint this same text again
        if pending is not None and not pending.done() and pending is not asyncio.current_task():
            pending.cancel()
        self.publish(uri, linted)
        return linted

    def publish(self, uri: str, linted: Linted) -> None:
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



@dataclass
class ClientSettings:
    """What the editor asks for, over the configuration files (as ``check``'s options are)."""

    select: list[str] | None = None  # replaces the configuration's `select`
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    config: Path | None = None  # one configuration file for every document (``check --config``)
    debounce: float | None = None

    def narrows(self) -> bool:
        """The editor's own selection may turn off rules the project's configuration enables."""
        return self.select is not None or bool(self.ignore)

    @classmethod
    def parse(cls, options, root: Path) -> "ClientSettings":
        """From ``{"select": [...], "extendSelect": [...], "ignore": [...], "configuration": "path",
        "debounceMs": 300}``, also under a ``settings`` key (as ruff's clients send them); kebab-case keys too."""
        if not isinstance(options, dict):
            return cls()
        if isinstance(options.get("settings"), dict):
            options = {**options, **options["settings"]}
        chosen = cls()
        for key, attribute in (("select", "select"), ("extendSelect", "extend_select"),
                               ("extend-select", "extend_select"), ("ignore", "ignore")):
            value = options.get(key)
            if value is None:
                continue
            if isinstance(value, str):
                value = [part.strip() for part in value.split(",") if part.strip()]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"setting `{key}` must be a list of rule codes")
            setattr(chosen, attribute, value)
        config = options.get("configuration", options.get("config"))
        if isinstance(config, str) and config.strip():
            path = Path(config).expanduser()
            path = path if path.is_absolute() else root / path
            if not path.is_file():
                raise ValueError(f"setting `configuration` names {config!r}, which is not a file")
            chosen.config = path
        debounce = options.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool):
            chosen.debounce = max(0.0, debounce / 1000)
        return chosen


class _EditorLinters(LinterSet):
    """An editor's buffers are not discovered: each is linted with the settings of its own path, resolved here, at
    the entry point, when the buffer is linted (configuration files may change while the server runs)."""

    def __init__(self, resolver: SettingsResolver, make_linter) -> None:
        super().__init__(make_linter)
        self.resolver = resolver

    def linter_for(self, path: Path | None) -> Linter:
        return self.linter_for_settings(self.resolver.for_path(path if path is not None else Path.cwd()))


def _editor_linter(rules, settings, chosen: "ClientSettings", cache) -> Linter:
    """The editor's linter: its own selection, but a `# noqa` for a rule the project enables and the editor's
    settings turn off is never stale here, so fix-all does not remove a suppression CI still needs."""
    enabled = _enabled(rules, settings, chosen)
    project = {rule.code for rule in _enabled(rules, settings)} if chosen.narrows() else set()
    kept = sorted(project - {rule.code for rule in enabled})
    return Linter(enabled, settings, cache=cache, noqa_kept=kept)


def _enabled(rules, settings, chosen: ClientSettings | None = None):
    chosen = chosen or ClientSettings()
    origin = f" of {settings.path}" if settings.path else ""
    select = selection.validate(chosen.select, rules, "editor setting `select`") if chosen.select is not None \
        else selection.validate(settings.select, rules, f"`select`{origin}")
    return selection.resolve(
        rules,
        select,
        selection.validate(settings.extend_select, rules, f"`extend-select`{origin}")
        + selection.validate(chosen.extend_select, rules, "editor setting `extendSelect`"),
        selection.validate(settings.ignore, rules, f"`ignore`{origin}")
        + selection.validate(chosen.ignore, rules, "editor setting `ignore`"),
    )


server = AscendlintServer()


def _path_of(uri: str) -> Path | None:
    path = to_fs_path(uri)
    return Path(path) if path else None


def _refused_as_too_large(text: str, filename: str, linter) -> list[Diagnostic] | None:
    """A buffer over the size limit gets one finding saying so, as ``check`` refuses such a file (linting a 3 MB
    document took 30 s and 1.7 GB); None for a buffer within the limit."""
    from ..files.user_input import SourceTooLarge, check_size

    try:
        check_size(text, "the document")
    except SourceTooLarge as exc:
        if "triton" not in text:
            return []
        from ..linter import engine

        return [engine.parser_limit_diagnostic(filename, str(exc), 1, 1, linter._classes(linter.rules))]
    return None


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
    options = params.initialization_options
    ls.init_options = dict(options) if isinstance(options, dict) else {}
    try:
        chosen = ClientSettings.parse(ls.init_options, ls.root())
        ls.linters = ls.make_linters(chosen)
    except (ValueError, ConfigError, selection.SelectionError) as exc:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ascendlint: {exc}"))
        return
    ls.client_settings = chosen
    if chosen.debounce is not None:
        ls.debounce = chosen.debounce


CONFIG_GLOBS = tuple(f"**/{name}" for name in CONFIG_NAMES)


@server.feature(types.INITIALIZED)
def initialized(ls: AscendlintServer, params: types.InitializedParams) -> None:
    workspace = ls.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        ls.configuring = asyncio.get_running_loop().create_task(_first_configuration(ls))
    watched = workspace.did_change_watched_files if workspace is not None else None
    if watched is not None and watched.dynamic_registration:
        asyncio.get_running_loop().create_task(_watch_config_files(ls))


async def _first_configuration(ls: AscendlintServer) -> None:
    await ls.pull_configuration()
    if ls.client_options:
        ls.configuring = None
        ls.reload()
    ls.configuring = None


async def _watch_config_files(ls: AscendlintServer) -> None:
    registration = types.Registration(
        id="ascendlint-config-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob) for glob in CONFIG_GLOBS]
        ),
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as exc:  # noqa: BLE001 - without a watcher, saves and didChangeConfiguration still reload
        ls.window_log_message(types.LogMessageParams(types.MessageType.Warning,
                                                     f"ascendlint: could not watch configuration files: {exc}"))


def _is_config_uri(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_NAMES


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: AscendlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(_is_config_uri(change.uri) for change in params.changes):
        ls.reload()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: AscendlintServer, params: types.DidChangeConfigurationParams) -> None:
    workspace = ls.client_capabilities.workspace
    if workspace is not None and workspace.configuration:
        await ls.pull_configuration()
    elif isinstance(params.settings, dict):  # a client that pushes its settings
        pushed = params.settings.get("ascendlint", params.settings)
        ls.client_options = dict(pushed) if isinstance(pushed, dict) else {}
    ls.reload()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: AscendlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0.0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: AscendlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: AscendlintServer, params: types.DidSaveTextDocumentParams) -> None:
    if _is_config_uri(params.text_document.uri):
        ls.reload()
        return
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
async def code_actions(ls: AscendlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    linted = await ls.fresh(uri)  # right after a change: lint the current text now rather than answer []
    if linted is None:
        return []
    wanted = params.context.only
    actions = []
    if not wanted or any(kind == types.CodeActionKind.QuickFix or kind == "quickfix" for kind in wanted):
        actions.extend(_quick_fixes(ls, uri, linted, params.range))
        actions.extend(_disable_for_line(ls, uri, linted, params.range))
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


def _disable_for_line(ls: AscendlintServer, uri: str, linted: Linted, wanted: types.Range) -> list[types.CodeAction]:
    """ "Disable CODE for this line": the `# noqa: CODE` that `--add-noqa` would write (merged into one there)."""
    actions, seen = [], set()
    for finding in linted.findings:
        if finding.code in NOT_SUPPRESSIBLE or not finding.noqa_row or (finding.code, finding.noqa_row) in seen:
            continue
        lsp = ls.to_lsp(uri, finding, linted.text)
        if not _overlaps(lsp.range, wanted):
            continue
        new_text = add_noqa_to_text(linted.text, [finding]).text
        if new_text == linted.text:
            continue
        seen.add((finding.code, finding.noqa_row))
        edit = _smallest_edit(linted.text, new_text)
        actions.append(
            types.CodeAction(
                title=f"Disable {finding.code} for this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[lsp],
                edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(
                    range=types.Range(ls.offset_position(uri, linted.text, edit.start),
                                      ls.offset_position(uri, linted.text, edit.end)),
                    new_text=edit.content,
                )]}),
            )
        )
    return actions


def _smallest_edit(old: str, new: str) -> Edit:
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return Edit(start, end_old, new[start:end_new])


def _fix_all(ls: AscendlintServer, uri: str, linted: Linted) -> types.CodeAction | None:
    if not any(fixes.applicable(d, unsafe=False) for d in linted.findings):
        return None
    target = ls.target(uri)
    if target is None:
        return None
    path, settings_path, filename = target
    linter = ls.linters.linter_for(settings_path)
    rules = linter.rules_for(path)
    outcome = fixes.fix_text(linted.text, lambda t: linter.lint_source(t, filename, rules), unsafe=False)
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
    from ..catalog.docs import render_rule
    from ..catalog.registry import rule_by_code_or_name

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


class FramedInput:
    """Standard input as pygls reads LSP frames from it, able to find the next frame after a malformed one.

    pygls reads header lines until a ``Content-Length`` line: after a frame without one, it takes that frame's
    body, which ends without a line break, and the next frame's header as one line, matches neither, and never
    answers again. Here a line holding ``Content-Length:`` after other bytes is cut in two, so the next frame's
    header is seen and the server answers again."""

    HEADER = b"Content-Length:"

    def __init__(self, raw) -> None:
        self.raw = raw
        self.pending = b""

    def readline(self) -> bytes:
        line, self.pending = (self.pending, b"") if self.pending else (self.raw.readline(), b"")
        cut = line.find(self.HEADER, 1)
        if cut > 0:
            line, self.pending = line[:cut], line[cut:]
        return line

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            data, self.pending = self.pending + self.raw.read(), b""
            return data
        data, self.pending = self.pending[:size], self.pending[size:]
        if len(data) < size:
            data += self.raw.read(size - len(data))
        return data


def run() -> None:
    import sys

    server.start_io(stdin=FramedInput(sys.stdin.buffer))
