"""Notebook findings in the formats that point into files (sarif, rdjson): the place in the stored ``.ipynb`` (a
JSON file), and the cell named, through the real command on a real notebook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbformat

from ascendlint.diagnostics import Location
from ascendlint.output.notebook_raw import RawNotebook
from tests.conftest import REPO

CELLS = ["# Notes", "import triton", 'def run(k, x):\n    k[(1,)]("é\\"", x, num_warps=4)']
DATA = Path(__file__).parent / "data"


def _notebook(path: Path) -> str:
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    book.cells = [nbformat.v4.new_markdown_cell(CELLS[0]), *(nbformat.v4.new_code_cell(c) for c in CELLS[1:])]
    nbformat.write(book, str(path))
    return path.read_text(encoding="utf-8")


def _check(tmp_path: Path, fmt: str) -> dict:
    result = subprocess.run([sys.executable, "-m", "ascendlint", "check", "nb.ipynb", "--format", fmt, "--no-cache"],
                            cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def _raw_at(raw: str, line: int, column: int) -> str:
    return raw.splitlines()[line - 1][column - 1:]


def test_sarif_region_is_in_the_stored_notebook_and_names_the_cell(tmp_path):
    raw = _notebook(tmp_path / "nb.ipynb")
    log = _check(tmp_path, "sarif")
    (result,) = log["runs"][0]["results"]
    location = result["locations"][0]
    region = location["physicalLocation"]["region"]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "nb.ipynb"
    assert _raw_at(raw, region["startLine"], region["startColumn"]).startswith("num_warps=4")
    assert region["snippet"]["text"] == "num_warps=4"
    assert location["properties"]["notebookCell"] == 3
    assert location["properties"]["cellRegion"]["startLine"] == 2
    assert location["logicalLocations"] == [{"name": "cell 3", "kind": "module"}]
    assert "(cell 3, line 2, column " in result["message"]["text"]
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(log, schema)


def test_rdjson_range_is_in_the_stored_notebook_and_names_the_cell(tmp_path):
    raw = _notebook(tmp_path / "nb.ipynb")
    (entry,) = _check(tmp_path, "rdjson")["diagnostics"]
    start = entry["location"]["range"]["start"]
    line = raw.splitlines()[start["line"] - 1]
    byte_column = start["column"] - 1  # reviewdog counts UTF-8 bytes
    assert line.encode("utf-8")[byte_column:].decode("utf-8").startswith("num_warps=4")
    assert entry["location"]["path"] == "nb.ipynb" and "(cell 3, line 2, column " in entry["message"]


def test_escapes_and_single_string_sources_map_to_the_same_character():
    raw = json.dumps({"cells": [{"cell_type": "code", "source": 'a = "\\u00e9\\"😀"\nb = 1\n'},
                                {"cell_type": "code", "source": ["x = '\\\\'\n", "y = 2"]}]}, indent=1)
    book = RawNotebook(raw)
    one = book.location(1, Location(2, 1))  # `b`, after escapes, in a one-string source
    assert raw.splitlines()[one.row - 1][one.column - 1:].startswith("b = 1")
    two = book.location(2, Location(2, 5))  # `2`, in the second element of a list source
    assert raw.splitlines()[two.row - 1][two.column - 1:].startswith('2"')
    assert book.location(3, Location(1, 1)) is None and RawNotebook("not json").location(1, Location(1, 1)) is None


def _check_text(tmp_path: Path, fmt: str) -> str:
    result = subprocess.run([sys.executable, "-m", "ascendlint", "check", "nb.ipynb", "--format", fmt, "--no-cache"],
                            cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_github_annotation_is_in_the_stored_notebook_and_names_the_cell(tmp_path):
    raw = _notebook(tmp_path / "nb.ipynb")
    (line,) = _check_text(tmp_path, "github").splitlines()
    properties = dict(part.split("=", 1) for part in line.split(" ", 1)[1].split("::", 1)[0].split(","))
    assert properties["file"] == "nb.ipynb" and "cell 3" in properties["title"]
    assert _raw_at(raw, int(properties["line"]), int(properties["col"])).startswith("num_warps=4")


def test_gitlab_position_is_in_the_stored_notebook_and_names_the_cell(tmp_path):
    raw = _notebook(tmp_path / "nb.ipynb")
    (issue,) = json.loads(_check_text(tmp_path, "gitlab"))
    begin = issue["location"]["positions"]["begin"]
    assert issue["location"]["path"] == "nb.ipynb" and issue["description"].startswith("cell 3: ")
    assert _raw_at(raw, begin["line"], begin["column"]).startswith("num_warps=4")
