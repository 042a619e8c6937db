"""The ``rdjson`` format: reviewdog diagnostics whose suggestions are exactly ascendlint's fixes."""

from __future__ import annotations

import json

from ascendlint import docs_links
from ascendlint.output import get
from tests.output.conftest import KERNEL, SELECT


def _apply_suggestions(text: str, suggestions: list[dict]) -> str:
    """Apply reviewdog suggestions the way reviewdog reads them: 1-based lines, UTF-8 byte columns, exclusive end."""
    data = text.encode("utf-8")
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]

    def offset(position: dict) -> int:
        return starts[position["line"] - 1] + position["column"] - 1

    edits = sorted(((offset(s["range"]["start"]), offset(s["range"]["end"]), s["text"]) for s in suggestions),
                   reverse=True)
    for start, end, replacement in edits:
        data = data[:start] + replacement.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def test_diagnostics_carry_source_code_severity_and_a_byte_column_range(report):
    result = json.loads(get("rdjson")(report))
    assert result["source"]["name"] == "ascendlint"
    by_code = {d["code"]["value"]: d for d in result["diagnostics"]}
    assert {code: d["severity"] for code, d in by_code.items()} == {
        "ASC001": "ERROR", "ASC003": "WARNING", "ASC101": "WARNING",
    }
    launch = by_code["ASC101"]
    assert launch["code"].get("url") == docs_links.rule_url("ASC101")  # no link while no repository is declared
    assert launch["location"]["path"] == "kernels/k.py"
    line = KERNEL.splitlines()[11].encode("utf-8")
    start, end = launch["location"]["range"]["start"], launch["location"]["range"]["end"]
    assert start["line"] == end["line"] == 12
    # The line holds multi-byte characters before the keyword: columns count bytes, as reviewdog expects.
    assert line[start["column"] - 1 : end["column"] - 1] == b"num_warps=4"
    assert start["column"] > KERNEL.splitlines()[11].index("num_warps") + 1


def test_a_finding_without_fix_has_no_suggestions(report):
    result = json.loads(get("rdjson")(report))
    syntax = next(d for d in result["diagnostics"] if d["code"]["value"] == "ASC001")
    assert "suggestions" not in syntax


def test_applying_the_suggestions_reproduces_the_fix_command(cli, write):
    path = write("k.py", KERNEL)
    result = json.loads(cli("check", "--no-cache", "--select", SELECT, str(path), "--format", "rdjson").stdout)
    suggestions = [s for d in result["diagnostics"] for s in d.get("suggestions", [])]
    assert len(suggestions) == 2
    suggested = _apply_suggestions(KERNEL, suggestions)
    assert cli("check", "--no-cache", "--select", SELECT, str(path), "--fix").returncode == 0
    assert suggested == path.read_text(encoding="utf-8") != KERNEL
