"""Jupyter notebooks: code cells are linted as one text, positions are cell-relative in every format, and --fix
writes the fixed cells back with the file's formatting kept."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import nbformat
import pytest

from ascendlint.linter import notebook

IMPORTS = "%matplotlib inline\nimport triton\nimport triton.language as tl\n!nvidia-smi"
KERNEL_CELL = (
    "@triton.jit\n"
    "def kernel(x_ptr, n, B: tl.constexpr):\n"
    "    offs = tl.program_id(0) * B + tl.arange(0, 64)\n"
    "    tl.store(x_ptr + offs, 0.0, mask=offs < n)"
)
LAUNCH_CELL = "def run(x, n):\n    %time y = 1\n    files = !ls\n    kernel[(1,)](x, n, B=64, num_warps=4)\n"


def _notebook(cells: list[tuple[str, str]], language: str = "python") -> nbformat.NotebookNode:
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "k", "language": language, "display_name": "K"}
    makers = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}
    book.cells = [makers[kind](text) for kind, text in cells]
    return book


@pytest.fixture
def book_path(tmp_path):
    book = _notebook([("markdown", "# Kernels"), ("code", IMPORTS), ("code", KERNEL_CELL),
                      ("code", "%%bash\necho num_warps=4 triton"), ("code", LAUNCH_CELL)])
    book.cells[2].outputs = [nbformat.v4.new_output("stream", text="héllo\n")]
    book.cells[2].execution_count = 7
    path = tmp_path / "kernels.ipynb"
    nbformat.write(book, str(path))
    return path


def test_positions_are_cell_relative_in_text_output(cli, book_path, tmp_path):
    result = cli("check", book_path.name, "--select", "ASC101", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "kernels.ipynb:cell 5:4:30: ASC101 [*]" in result.stdout
    assert "4 |     kernel[(1,)](x, n, B=64, num_warps=4)" in result.stdout, "the frame shows the cell's own lines"
    assert "3 |     files = !ls" in result.stdout, "magic lines are shown as written"
    concise = cli("check", book_path.name, "--select", "ASC101", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert concise.stdout.splitlines()[0].startswith("kernels.ipynb:cell 5:4:30: ASC101")


def test_positions_are_cell_relative_in_machine_formats(cli, book_path, tmp_path):
    def run(name: str) -> str:
        return cli("check", book_path.name, "--select", "ASC101", "--format", name, "--no-cache", cwd=tmp_path).stdout

    (item,) = json.loads(run("json"))
    assert item["cell"] == 5 and item["location"] == {"row": 4, "column": 30}
    assert item["fix"]["edits"][0]["location"] == {"row": 4, "column": 28}, "fix edits are cell-relative too"
    raw = book_path.read_text(encoding="utf-8").splitlines()
    (issue,) = json.loads(run("gitlab"))  # GitLab and GitHub place it in the stored .ipynb, as SARIF does
    begin = issue["location"]["positions"]["begin"]
    assert raw[begin["line"] - 1][begin["column"] - 1:].startswith("num_warps=4")
    assert issue["description"].startswith("cell 5: ASC101")
    github = run("github")
    line, column = (int(re.search(rf"{key}=(\d+)", github).group(1)) for key in ("line", "col"))
    assert raw[line - 1][column - 1:].startswith("num_warps=4") and "(cell 5)" in github
    case = ET.fromstring(run("junit")).find("testsuite/testcase")
    assert case.get("name").endswith("at cell 5:4:30")
    assert "  cell 5:4:30 ASC101" in run("grouped")
    (result,) = json.loads(run("sarif"))["runs"][0]["results"]
    location = result["locations"][0]  # SARIF points into the stored .ipynb (tests/output/test_notebook_positions.py)
    assert location["properties"]["notebookCell"] == 5
    assert location["properties"]["cellRegion"]["startLine"] == 4 and location["properties"]["cellRegion"]["startColumn"] == 30
    region = location["physicalLocation"]["region"]
    raw_line = book_path.read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert raw_line[region["startColumn"] - 1:].startswith("num_warps=4")


def test_fix_writes_the_cell_back_and_keeps_everything_else(cli, book_path, tmp_path):
    before = book_path.read_text(encoding="utf-8")
    result = cli("check", book_path.name, "--select", "ASC101", "--fix", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    after = book_path.read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [('    "    kernel[(1,)](x, n, B=64, num_warps=4)\\n"', '    "    kernel[(1,)](x, n, B=64)\\n"')]
    assert len(before.splitlines()) == len(after.splitlines()) and after.endswith("\n")
    fixed = nbformat.read(str(book_path), as_version=4)
    assert fixed.cells[4].source == LAUNCH_CELL.replace(", num_warps=4", "")
    assert fixed.cells[2].outputs[0]["text"] == "héllo\n" and fixed.cells[2].execution_count == 7
    assert cli("check", book_path.name, "--select", "ASC101", cwd=tmp_path).returncode == 0


def test_fix_keeps_indent_key_order_and_a_missing_trailing_newline(cli, tmp_path):
    book = {"metadata": {"kernelspec": {"language": "python", "name": "p", "display_name": "P"}},
            "nbformat_minor": 5, "nbformat": 4,
            "cells": [{"source": ["import triton\n", "def run(k, x):\n", "    k[(1,)](x, num_warps=4)"],
                       "outputs": [], "metadata": {}, "id": "c1", "execution_count": None, "cell_type": "code"}]}
    path = tmp_path / "custom.ipynb"
    path.write_text(json.dumps(book, indent=2), encoding="utf-8")
    result = cli("check", "custom.ipynb", "--select", "ASC101", "--fix", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    book["cells"][0]["source"][-1] = "    k[(1,)](x)"
    assert path.read_text(encoding="utf-8") == json.dumps(book, indent=2)


def test_diff_shows_the_cell_and_writes_nothing(cli, book_path, tmp_path):
    before = book_path.read_bytes()
    result = cli("check", book_path.name, "--select", "ASC101", "--diff", cwd=tmp_path)
    assert result.returncode == 1
    assert "--- kernels.ipynb:cell 5" in result.stdout
    assert "+    kernel[(1,)](x, n, B=64)" in result.stdout
    assert book_path.read_bytes() == before


def test_notebook_that_cannot_be_reformatted_exactly_is_not_written(cli, tmp_path):
    book = nbformat.writes(_notebook([("code", "import triton\nk[(1,)](x, num_warps=4)\n")]))
    odd = json.dumps(json.loads(book), indent=3, sort_keys=True).replace('": ', '":  ', 1)
    path = tmp_path / "odd.ipynb"
    path.write_text(odd, encoding="utf-8")
    result = cli("check", "odd.ipynb", "--select", "ASC101", "--fix", cwd=tmp_path)
    assert result.returncode == 2 and "formatting cannot be reproduced" in result.stderr
    assert path.read_text(encoding="utf-8") == odd


def test_noqa_in_a_cell_suppresses(cli, tmp_path):
    book = _notebook([("code", "import triton\nk[(1,)](x, num_warps=4)  # noqa: ASC101\n")])
    nbformat.write(book, str(tmp_path / "n.ipynb"))
    assert cli("check", "n.ipynb", "--select", "ASC101", cwd=tmp_path).returncode == 0


def test_other_kernels_and_broken_notebooks(cli, tmp_path):
    nbformat.write(_notebook([("code", "import triton\nk[(1,)](x, num_warps=4)\n")], language="julia"),
                   str(tmp_path / "julia.ipynb"))
    (tmp_path / "broken.ipynb").write_text('{"cells": [triton', encoding="utf-8")
    (tmp_path / "k.py").write_text("import triton\nk[(1,)](x, num_warps=4)\n", encoding="utf-8")
    result = cli("check", ".", "--select", "ASC001,ASC101", "--format", "concise", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("broken.ipynb:1:1: ASC001") and "notebook" in line for line in lines)
    assert any(line.startswith("k.py:2:") for line in lines), "the run goes on after a broken notebook"
    assert not any(line.startswith("julia.ipynb") for line in lines)


def test_notebook_on_standard_input(cli, book_path):
    result = cli("check", "--stdin-filename", "x.ipynb", "--select", "ASC101", "--format", "concise",
                 stdin=book_path.read_text(encoding="utf-8"))
    assert result.stdout.startswith("x.ipynb:cell 5:4:30: ASC101")


# -- the mapping itself -------------------------------------------------------------------------------------------

def test_magics_become_placeholders_and_come_back(book_path):
    book = notebook.read(book_path.read_bytes())
    assert [cell.number for cell in book.cells] == [2, 3, 5], "markdown and %%bash cells are not Python"
    assert "%" not in book.text and "!" not in book.text
    compile(book.text, "<virtual>", "exec")  # the virtual text is plain Python
    again = book.with_text(book.text)
    assert again.cell_texts() == book.cell_texts()
    assert again.to_bytes() == book_path.read_bytes()


def test_a_fix_that_crosses_cells_or_drops_a_magic_is_refused(book_path):
    book = notebook.read(book_path.read_bytes())
    with pytest.raises(notebook.NotebookError, match="across notebook cells"):
        book.with_text(book.text.replace(notebook.BOUNDARY + "\n", "", 1))
    placeholder = next(line for line in book.text.splitlines() if "notebook magic" in line)
    with pytest.raises(notebook.NotebookError, match="magic"):
        book.with_text(book.text.replace(placeholder + "\n", ""))
