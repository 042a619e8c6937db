"""``ascendlint server`` end to end: pytest-lsp starts the real server as a subprocess and talks LSP to it."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from tests.conftest import REPO  # noqa: E402

BAD = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4, num_stages=2)\n"
FIXED = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x)\n"
SERVER_ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "quiet").mkdir()
    (tmp_path / "quiet" / "ascendlint.toml").write_text('ignore = ["ASC101"]\n', encoding="utf-8")
    return tmp_path


def _record_publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    """pytest-lsp's own handler keeps the last diagnostics per URI; keep each publication's version too."""
    client.diagnostics[params.uri] = params.diagnostics
    client.versions = {**getattr(client, "versions", {}), params.uri: params.version}
    client.published = [*getattr(client, "published", []), (params.uri, params.version)]


def _accept_registration(client: LanguageClient, params: types.RegistrationParams) -> None:
    """The server registers a watcher for configuration files (see test_server_settings.py)."""


def _client_factory() -> LanguageClient:
    from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
    from pygls.protocol import default_converter

    client = LanguageClient(converter_factory=default_converter)
    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _record_publish,
                                   types.CLIENT_REGISTER_CAPABILITY: _accept_registration})
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "ascendlint", "server"],
                                              server_env=SERVER_ENV, client_factory=_client_factory))
async def client(lsp_client: LanguageClient, project: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=project.as_uri(),
            initialization_options={"debounceMs": 200},
        )
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=version,
                                                               text=text))
    )
    return uri


async def _published(client: LanguageClient, uri: str, version: int | None = None):
    for _ in range(50):
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if uri in client.diagnostics and (version is None or client.versions.get(uri) == version):
            return client.diagnostics[uri]
    raise AssertionError("no diagnostics published")


@pytest.mark.asyncio
async def test_diagnostics_on_open_from_the_buffer_not_the_disk(client: LanguageClient, project: Path):
    path = project / "pkg" / "k.py"
    path.write_text("import triton\n", encoding="utf-8")  # the disk says clean; the unsaved buffer is not
    uri = _open(client, path, BAD)
    diagnostics = await _published(client, uri)
    assert sorted(d.code for d in diagnostics) == ["ASC101", "ASC101"]
    first = min(diagnostics, key=lambda d: d.range.start.character)
    assert first.range.start == types.Position(line=4, character=15)
    assert first.source == "ascendlint" and first.severity == types.DiagnosticSeverity.Warning
    assert first.code_description is None  # no link until [project.urls] names the repository (docs_links)


@pytest.mark.asyncio
async def test_changes_are_debounced_and_relinted(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    await _published(client, uri)
    half = BAD.replace(", num_stages=2", "")
    for version, text in ((2, BAD + "\n"), (3, half + "\n"), (4, half)):  # quicker than the debounce delay
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
    diagnostics = await _published(client, uri, version=4)
    assert [d.code for d in diagnostics] == ["ASC101"]
    await asyncio.sleep(0.5)
    assert [version for _, version in client.published] == [1, 4], "versions 2 and 3 were never linted"


@pytest.mark.asyncio
async def test_the_closest_config_applies(client: LanguageClient, project: Path):
    uri = _open(client, project / "quiet" / "k.py", BAD)
    assert list(await _published(client, uri)) == []


@pytest.mark.asyncio
async def test_a_quick_fix_per_finding_and_fix_all(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    diagnostics = await _published(client, uri)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Disable ")]
    assert [a.title for a in actions if a.title.startswith("Disable ")] == ["Disable ASC101 for this line"]
    assert len(quick) == 1 and quick[0].title.startswith("ASC101: ")
    (edit,) = quick[0].edit.changes[uri]
    assert _apply(BAD, edit) in (BAD.replace(", num_warps=4", ""), BAD.replace(", num_stages=2", ""))
    fix_all = [a for a in actions if a.kind == "source.fixAll.ascendlint"]
    assert len(fix_all) == 1
    (whole,) = fix_all[0].edit.changes[uri]
    assert _apply(BAD, whole) == FIXED
    only_fix_all = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
        )
    )
    assert [a.kind for a in only_fix_all] == ["source.fixAll.ascendlint"]


@pytest.mark.asyncio
async def test_hover_shows_the_rule_documentation(client: LanguageClient, project: Path):
    text = BAD.replace("num_stages=2)", "num_stages=2)  # noqa: ASC102")
    uri = _open(client, project / "pkg" / "k.py", text)
    diagnostics = await _published(client, uri)
    on_finding = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=diagnostics[0].range.start)
    )
    assert on_finding.contents.value.startswith("# ASC101 launch-num-warps")
    assert "## Why is this bad?" in on_finding.contents.value
    column = text.splitlines()[4].index("ASC102") + 2
    on_noqa = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(4, column))
    )
    assert on_noqa.contents.value.startswith("# ASC102 ")
    nothing = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0))
    )
    assert nothing is None


@pytest.mark.asyncio
async def test_utf16_columns_after_non_ascii_text(client: LanguageClient, project: Path):
    text = BAD.replace("k[(1,)](x,", "k[(1,)]('😀', x,")
    uri = _open(client, project / "pkg" / "k.py", text)
    diagnostics = await _published(client, uri)
    first = min(diagnostics, key=lambda d: d.range.start.character)
    line = text.splitlines()[4]
    assert first.range.start.character == len(line[: line.index("num_warps")].encode("utf-16-le")) // 2


@pytest.mark.asyncio
async def test_close_clears_the_diagnostics(client: LanguageClient, project: Path):
    uri = _open(client, project / "pkg" / "k.py", BAD)
    await _published(client, uri)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    for _ in range(10):
        await asyncio.sleep(0.1)
        if not client.diagnostics[uri]:
            break
    assert list(client.diagnostics[uri]) == []


def _apply(text: str, edit: types.TextEdit) -> str:
    """Apply one LSP edit (ASCII text: UTF-16 units equal characters)."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]


@pytest.mark.asyncio
async def test_a_chain_split_over_lines_is_answered_at_once(client: LanguageClient, project: Path):
    """3,000 subscripts one per line froze the server for 9-17 s while libcst parsed them; the guard is the
    engine's, so the server answers with the parser-limit finding at once."""
    text = "import triton\nx = (a\n" + "[0]\n" * 3000 + ")\n"
    started = asyncio.get_running_loop().time()
    uri = _open(client, project / "pkg" / "chain.py", text)
    diagnostics = await _published(client, uri)
    assert asyncio.get_running_loop().time() - started < 5
    assert [d.code for d in diagnostics] == ["ASC001"]
