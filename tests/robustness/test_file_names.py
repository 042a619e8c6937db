"""File names with bytes that are not UTF-8 or with control characters, in every format (issue 17, item 5).

One representation everywhere: the name with each undecodable byte or control character escaped as Python writes
it in a string (``\\xff``, ``\\x1b``), except SARIF, whose URIs percent-encode the name's original bytes.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascendlint import output
from ascendlint.diagnostics import Diagnostic, Location, Severity
from tests.robustness.conftest import KERNEL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names are bytes")

ODD_NAMES = {
    "not-utf8": b"bad\xff\xfename.py",
    "escape-sequence": b"ctl\x1b[31mred\x07.py",
    "newline-and-tab": b"two\nlines\tname.py",
    "line-separator": "sep\u2028name.py".encode(),
}
SHOWN = {
    "not-utf8": "bad\\xff\\xfename.py",
    "escape-sequence": "ctl\\x1b[31mred\\x07.py",
    "newline-and-tab": "two\\x0alines\\x09name.py",
    "line-separator": "sep\\u2028name.py",
}
FORMATS = output.names()


def _check_document(name: str, data: bytes) -> str:
    """The document must be UTF-8 and, for structured formats, parse; returns it as text."""
    text = data.decode("utf-8")  # strict: invalid UTF-8 fails here
    if name in ("json", "rdjson", "sarif", "gitlab"):
        json.loads(text)
    elif name == "json-lines":
        for line in text.splitlines():
            json.loads(line)
    elif name == "junit":
        ET.fromstring(data)
    return text


@pytest.fixture
def odd_folder(tmp_path):
    folder = tmp_path / "names"
    folder.mkdir()
    for raw in ODD_NAMES.values():
        with open(os.path.join(os.fsencode(folder), raw), "w") as handle:
            handle.write(KERNEL)
    return folder


@pytest.fixture
def in_folder(odd_folder, run_in_process, monkeypatch):
    monkeypatch.chdir(odd_folder)
    return run_in_process


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_written_with_output_file_is_valid(in_folder, tmp_path, name):
    report = tmp_path / f"report.{name}"
    result = in_folder("check", ".", "--no-cache", "--format", name, "-o", str(report))
    assert result.exit_code == 1, result.stderr
    assert result.stderr == ""
    text = _check_document(name, report.read_bytes())
    if name == "sarif":
        uris = {unquote_to_bytes(uri) for uri in _sarif_uris(json.loads(text))}
        assert set(ODD_NAMES.values()) <= uris  # the exact bytes of every name
    else:
        found = _strings(text, name)
        for shown in SHOWN.values():
            assert any(shown in value for value in found), (name, shown)


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_on_standard_output_is_valid(in_folder, name):
    result = in_folder("check", ".", "--no-cache", "--format", name)
    assert result.exit_code == 1, result.stderr
    _check_document(name, result.stdout_bytes)


def test_standard_output_of_the_real_command_is_valid(odd_folder):
    import subprocess

    from tests.conftest import REPO

    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run([sys.executable, "-m", "ascendlint", "check", ".", "--no-cache", "--format", "full"],
                            cwd=odd_folder, capture_output=True, env=env, timeout=120)
    assert result.returncode == 1, result.stderr
    assert SHOWN["not-utf8"] in _check_document("full", result.stdout)


def test_text_formats_show_one_line_per_finding(cli, odd_folder):
    result = cli("check", ".", "--no-cache", "--format", "concise", "--quiet", cwd=odd_folder)
    lines = result.stdout.splitlines()
    assert sorted(lines) == sorted(f"{shown}:5:21: ASC101 [*] `num_warps` has no effect on Ascend's default (SIMD) "
                                   "path" for shown in SHOWN.values())


def test_fix_works_on_odd_names_and_errors_name_them_escaped(cli, odd_folder):
    result = cli("check", ".", "--no-cache", "--fix", cwd=odd_folder)
    assert result.returncode == 0, result.stderr
    for raw in ODD_NAMES.values():
        with open(os.path.join(os.fsencode(odd_folder), raw)) as handle:
            assert "num_warps" not in handle.read()


def test_errors_about_odd_names_are_one_escaped_line(cli, odd_folder):
    os.symlink(b"missing", os.path.join(os.fsencode(odd_folder), b"gone\xff\n.py"))
    result = cli("check", ".", "--no-cache", "--format", "concise", cwd=odd_folder)
    assert "warning: skipped gone\\xff\\x0a.py: broken symbolic link (its target does not exist)\n" in result.stderr


def _strings(text: str, name: str) -> list[str]:
    """The text, or every string of a JSON or XML document (whose escapes would hide the name otherwise)."""
    if name == "junit":
        return [value for element in ET.fromstring(text.encode()).iter()
                for value in (*element.attrib.values(), element.text or "")]
    if name not in ("json", "json-lines", "rdjson", "gitlab"):
        return [text]
    documents = [json.loads(line) for line in text.splitlines()] if name == "json-lines" else [json.loads(text)]
    found, todo = [], documents
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return found


def _sarif_uris(log: dict) -> list[str]:
    return [location["physicalLocation"]["artifactLocation"]["uri"]
            for run in log["runs"] for found in run["results"] for location in found["locations"]]


# -- fuzzing: any name a POSIX file system can hold ----------------------------------------------------------------

_NAME_BYTES = st.binary(min_size=1, max_size=24).filter(lambda raw: b"/" not in raw and b"\0" not in raw)


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(raw=_NAME_BYTES, message_noise=st.text(max_size=8))
def test_any_file_name_gives_valid_documents_in_every_format(raw, message_noise):
    filename = os.fsdecode(raw + b".py")
    finding = Diagnostic("ASC101", "launch-num-warps", Severity.WARNING, "message " + message_noise, filename,
                         Location(1, 1), Location(1, 2))
    report = output.RunReport(diagnostics=[finding], sources={filename: "import triton\n"})
    for name in FORMATS:
        text = output.get(name)(report)
        _check_document(name, text.encode("utf-8"))  # encodes: no lone surrogate left
        if name == "sarif":
            (uri,) = _sarif_uris(json.loads(text))
            assert unquote_to_bytes(uri).endswith(raw + b".py") or unquote_to_bytes(uri) == os.fsencode(
                Path(os.path.abspath(filename)).as_posix())
        elif name != "github":  # github percent-encodes its own way (workflow command escaping)
            assert any(output.shown(filename) in value for value in _strings(text, name)), name
    assert finding.filename == filename  # the caller's findings are not changed


def test_a_name_spelled_with_a_backslash_escape_prints_apart_from_the_byte(cli, tmp_path):
    import os as _os

    kernel = b"import triton\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"
    literal = tmp_path / "bad\\xff.py"
    literal.write_bytes(kernel)
    byte_name = _os.path.join(_os.fsencode(tmp_path), b"bad\xff.py")
    with open(byte_name, "wb") as handle:
        handle.write(kernel)
    result = cli("check", "--no-cache", "--format", "concise", ".", cwd=tmp_path)
    names = sorted(line.split(":")[0] for line in result.stdout.splitlines() if "ASC101" in line)
    assert names == ["bad\\\\xff.py", "bad\\xff.py"], names
