"""``ascendlint server`` against a real LSP client (pytest-lsp): configuration reloads, editor settings, the
"Disable CODE for this line" action, untitled buffers, excluded files, and code actions right after a change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from tests.server.test_language_server import BAD, SERVER_ENV, _apply, _open, _record_publish  # noqa: E402

ONE = BAD.replace(", num_stages=2", "")  # one ASC101 finding


def _record_registration(client: LanguageClient, params: types.RegistrationParams) -> None:
    client.registrations = [*getattr(client, "registrations", []), *params.registrations]


def _client_factory() -> LanguageClient:
    from pygls.protocol import default_converter
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES,
                                   types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_publish,
                                   types.CLIENT_REGISTER_CAPABILITY: _record_registration})
    return client


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "strict.toml").write_text('select = ["ASC101"]\n', encoding="utf-8")
    return tmp_path


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "ascendlint", "server"],
                                              server_env=SERVER_ENV, client_factory=_client_factory))
async def client(lsp_client: LanguageClient, project: Path, request):
    """``@pytest.mark.server_options(init={...}, editor={...})``: the initializationOptions (default: a 200 ms
    debounce) and the client's `ascendlint` section of workspace/configuration (default: none)."""
    marker = request.node.get_closest_marker("server_options")
    init_options = marker.kwargs.get("init", {}) if marker else {"debounceMs": 200}
    editor_settings = marker.kwargs.get("editor") if marker else None
    if editor_settings is not None:
        lsp_client.set_configuration(editor_settings, section="ascendlint")
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=project.as_uri(),
                               workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
                               initialization_options=init_options)
    )
    yield
    await lsp_client.shutdown_session()


async def _next(client: LanguageClient, uri: str, action=None):
    """The next diagnostics published for ``uri`` after ``action()`` (or the first, when none)."""
    count = sum(1 for published, _ in getattr(client, "published", []) if published == uri)
    if action is not None:
        action()
    for _ in range(100):
        if sum(1 for published, _ in getattr(client, "published", []) if published == uri) > count:
            return [d.code for d in client.diagnostics[uri]]
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    raise AssertionError(f"no diagnostics published for {uri}")


def _ignore_asc101(folder: Path) -> Path:
    config = folder / "ascendlint.toml"
    config.write_text('ignore = ["ASC101"]\n', encoding="utf-8")
    return config


# -- configuration reloads ---------------------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_saving_a_config_file_relints_open_documents(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]
    config = _ignore_asc101(project / "pkg")
    saved = types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=config.as_uri()))
    assert await _next(client, uri, lambda: client.text_document_did_save(saved)) == []


@pytest.mark.asyncio
async def test_a_watched_config_change_relints_and_the_watcher_is_registered(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]
    (registration,) = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    globs = sorted(w["globPattern"] if isinstance(w, dict) else w.glob_pattern
                   for w in _watchers(registration.register_options))
    assert globs == ["**/.ascendlint.toml", "**/ascendlint.toml", "**/pyproject.toml"]
    (project / "pyproject.toml").write_text('[tool.ascendlint]\nignore = ["ASC101"]\n', encoding="utf-8")
    change = types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=(project / "pyproject.toml").as_uri(), type=types.FileChangeType.Created)]
    )
    assert await _next(client, uri, lambda: client.workspace_did_change_watched_files(change)) == []
    (project / "pyproject.toml").write_text('[tool.ascendlint]\nselect = ["ASC1"]\n', encoding="utf-8")
    change.changes[0].type = types.FileChangeType.Changed
    assert await _next(client, uri, lambda: client.workspace_did_change_watched_files(change)) == ["ASC101", "ASC101"]


def _watchers(options):
    return options["watchers"] if isinstance(options, dict) else options.watchers


@pytest.mark.asyncio
async def test_did_change_configuration_reloads_config_files_and_editor_settings(client: LanguageClient,
                                                                                 project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]
    _ignore_asc101(project)
    changed = types.DidChangeConfigurationParams(settings=None)
    assert await _next(client, uri, lambda: client.workspace_did_change_configuration(changed)) == []
    (project / "ascendlint.toml").unlink()
    client.set_configuration({"ignore": ["ASC1"]}, section="ascendlint")  # now the editor's setting ignores it
    assert await _next(client, uri, lambda: client.workspace_did_change_configuration(changed)) == []
    client.set_configuration({}, section="ascendlint")
    assert await _next(client, uri, lambda: client.workspace_did_change_configuration(changed)) == ["ASC101", "ASC101"]


# -- editor settings ---------------------------------------------------------------------------------------------
@pytest.mark.asyncio
@pytest.mark.server_options(init={"ignore": ["ASC101"]})
async def test_initialization_options_ignore(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == []


@pytest.mark.asyncio
@pytest.mark.server_options(init={"settings": {"ignore": ["ASC101"]}})
async def test_initialization_options_under_settings_as_ruff_clients_send_them(client: LanguageClient,
                                                                                project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == []


@pytest.mark.asyncio
@pytest.mark.server_options(init={"select": ["ASC2"], "extendSelect": ["ASC101"]})
async def test_initialization_options_select_replaces_and_extend_select_adds(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]


@pytest.mark.asyncio
@pytest.mark.server_options(init={"select": ["ASC2"]})
async def test_select_setting_replaces_the_config_select(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == []


@pytest.mark.asyncio
@pytest.mark.server_options(init={"ignore": ["ASC101"]}, editor={"ignore": [], "debounceMs": 0})
async def test_workspace_configuration_wins_over_initialization_options(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]


@pytest.mark.asyncio
@pytest.mark.server_options(init={"configuration": "configs/strict.toml"})
async def test_configuration_setting_names_one_file_for_every_document(client: LanguageClient, project: Path):
    _ignore_asc101(project / "pkg")  # the closest file would ignore ASC101; the named one governs instead
    uri = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, uri) == ["ASC101", "ASC101"]


# -- untitled buffers, excluded files ----------------------------------------------------------------------------
@pytest.mark.asyncio
async def test_untitled_buffers_are_linted_with_the_workspace_settings(client: LanguageClient, project: Path):
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=BAD))
    )
    assert await _next(client, uri) == ["ASC101", "ASC101"]
    _ignore_asc101(project)  # the workspace folder's configuration governs untitled buffers
    change = types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=(project / "ascendlint.toml").as_uri(), type=types.FileChangeType.Created)]
    )
    assert await _next(client, uri, lambda: client.workspace_did_change_watched_files(change)) == []


@pytest.mark.asyncio
async def test_files_that_extend_exclude_matches_get_no_diagnostics(client: LanguageClient, project: Path):
    kept = _open(client, project / "pkg" / "k.py", BAD)
    assert await _next(client, kept) == ["ASC101", "ASC101"]
    (project / "ascendlint.toml").write_text('extend-exclude = ["gen", "pkg/skip_*.py"]\n', encoding="utf-8")
    change = types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=(project / "ascendlint.toml").as_uri(), type=types.FileChangeType.Created)]
    )
    assert await _next(client, kept, lambda: client.workspace_did_change_watched_files(change)) == ["ASC101", "ASC101"]
    generated = _open(client, project / "gen" / "k.py", BAD)
    assert await _next(client, generated) == []
    skipped = _open(client, project / "pkg" / "skip_me.py", BAD)
    assert await _next(client, skipped) == []


# -- code actions ------------------------------------------------------------------------------------------------
async def _actions(client: LanguageClient, uri: str, line: int) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(line, 0), types.Position(line, 40)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


@pytest.mark.asyncio
async def test_disable_for_this_line_adds_a_noqa_comment(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    await _next(client, uri)
    actions = [a for a in await _actions(client, uri, 4) if a.title.startswith("Disable")]
    assert [a.title for a in actions] == ["Disable ASC101 for this line"]
    assert actions[0].kind == types.CodeActionKind.QuickFix
    (edit,) = actions[0].edit.changes[uri]
    assert _apply(BAD, edit) == BAD.replace("num_stages=2)\n", "num_stages=2)  # noqa: ASC101\n")


@pytest.mark.asyncio
async def test_disable_for_this_line_merges_into_an_existing_noqa(client: LanguageClient, project: Path):
    text = BAD.replace("num_stages=2)\n", "num_stages=2)  # noqa: ASC102  (reviewed)\n")
    uri = _open(client, project / "pkg" / "k.py", text)
    await _next(client, uri)
    (action,) = [a for a in await _actions(client, uri, 4) if a.title.startswith("Disable")]
    (edit,) = action.edit.changes[uri]
    assert _apply(text, edit).splitlines()[4].endswith("num_stages=2)  # noqa: ASC102, ASC101  (reviewed)")


@pytest.mark.asyncio
async def test_a_code_action_right_after_a_change_answers_for_the_new_text(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", "import triton\n")
    assert await _next(client, uri) == []
    for attempt in range(2, 6):  # each request arrives well inside the 200 ms debounce delay
        text = ONE + "\n" * attempt
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=attempt),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        titles = sorted(a.title for a in await _actions(client, uri, 4))
        assert any(t.startswith("ASC101: ") for t in titles), titles
        assert "Disable ASC101 for this line" in titles
