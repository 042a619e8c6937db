"""The editor server's diagnostics and edits land where they belong in documents whose lines end with lone CRs or
hold form feeds and U+2028 (which LSP, like Python, does not count as line breaks)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import LanguageClient  # noqa: E402

from tests.server.lsp_text import apply, offset_of  # noqa: E402
from tests.server.test_language_server import _open, _published, client, project  # noqa: E402, F401

DOCUMENTS = {
    "lone-cr": "import triton\r\r# note\rdef run(k, x):\r    k[(1,)](x, num_warps=4, num_stages=2)\r",
    "mixed": "import triton\r\n\rdef run(k, x):\n    k[(1,)](x, num_warps=4, num_stages=2)\r",
    "form-feed": "import triton\n\x0c\ndef run(k, x):\n\x0c    y = '\x0c'\n    k[(1,)](x, num_warps=4, num_stages=2)\n",
    "u2028": "import triton\n# a\u2028b\u2029c\x1c\x85\ndef run(k, x):\n    k[(1,)]('\u2028😀', x, num_warps=4, num_stages=2)\n",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(DOCUMENTS))
async def test_ranges_quick_fixes_and_fix_all_land_in_place(client: LanguageClient, project, name):  # noqa: F811
    text = DOCUMENTS[name]
    uri = _open(client, project / "pkg" / f"{name}.py", text)
    diagnostics = await _published(client, uri)
    spans = sorted(text[offset_of(text, d.range.start) : offset_of(text, d.range.end)] for d in diagnostics)
    assert [span.split("=")[0] for span in spans] == ["num_stages", "num_warps"], spans
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(types.Position(0, 0), types.Position(10, 0)),
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Disable ")]
    disable = [a for a in actions if a.title.startswith("Disable ")]
    assert disable and all("# noqa: ASC101" in apply(text, a.edit.changes[uri]) for a in disable)
    assert sorted(apply(text, a.edit.changes[uri]) for a in quick) == sorted(
        [text.replace(", num_warps=4", ""), text.replace(", num_stages=2", "")])
    (fix_all,) = [a for a in actions if a.kind == "source.fixAll.ascendlint"]
    assert apply(text, fix_all.edit.changes[uri]) == text.replace(", num_warps=4, num_stages=2", "")


@pytest.mark.asyncio
async def test_an_edited_document_with_form_feeds_and_u2028_stays_in_step(client: LanguageClient, project):  # noqa: F811
    """The server asks for whole documents: pygls would apply incremental changes by ``str.splitlines`` lines."""
    text = DOCUMENTS["u2028"]
    uri = _open(client, project / "pkg" / "edited.py", text)
    await _published(client, uri)
    edited = text.replace("num_stages=2", "num_stages=3")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
        )
    )
    diagnostics = await _published(client, uri, version=2)
    spans = sorted(edited[offset_of(edited, d.range.start) : offset_of(edited, d.range.end)] for d in diagnostics)
    assert [span.split(",")[0].rstrip(")") for span in spans] == ["num_stages=3", "num_warps=4"], spans


def test_the_server_asks_for_whole_documents():
    from ascendlint.server import server

    assert server._text_document_sync_kind == types.TextDocumentSyncKind.Full
