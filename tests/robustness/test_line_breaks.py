"""Line breaks Python counts (``\\n``, ``\\r\\n``, a lone ``\\r``) and characters it does not (form feed, U+2028):
the noqa scan, its fix, notebook cells and the rest of the engine must agree on rows and offsets."""

from __future__ import annotations

import json

import nbformat

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.fixes import noqa
from ascendlint.catalog.registry import all_rules, rule_by_code_or_name
from ascendlint.text.text_positions import line_starts

LONE_CR = (
    "import triton\n"
    "x = 1\r\n"
    "NOTE = 2\r"
    "BLOCK = 128  # noqa: ASC101\n"
    "WIDTH = 32  # noqa: ASC102\n"
    "SIZE = 3201  # keep  # noqa: ASC101, ASC102\r"
    "z = 4\n"
)


def _fix(text: str, codes=("ASC003",)) -> str:
    rules = [rule_by_code_or_name(code) for code in codes]
    return fixes.fix_text(text, lambda t: engine.lint_text(t, "k.py", rules)).text


def test_tokens_follow_pythons_rows_after_a_lone_cr():
    from ascendlint.text.text_positions import generate_tokens

    starts = line_starts(LONE_CR)
    comments = [(t.start, t.string) for t in generate_tokens(LONE_CR) if t.type == 61]  # COMMENT
    for (row, column), comment in comments:
        offset = starts[row - 1] + column
        assert LONE_CR[offset : offset + len(comment)] == comment


def test_noqa_scan_after_a_lone_cr_finds_each_comment_where_it_is():
    facts = noqa.scan(LONE_CR)
    for start, end, comment in facts.comments.values():
        assert LONE_CR[start:end] == comment


def test_asc003_fix_after_a_lone_cr_removes_only_the_comments():
    fixed = _fix(LONE_CR)
    assert fixed == (
        "import triton\n"
        "x = 1\r\n"
        "NOTE = 2\r"
        "BLOCK = 128\n"
        "WIDTH = 32\n"
        "SIZE = 3201  # keep\r"
        "z = 4\n"
    )


def test_asc003_removes_a_whole_comment_line_ended_by_a_lone_cr():
    text = "import triton\ra = 1\r# noqa: ASC101\rb = 2\r"
    assert _fix(text) == "import triton\ra = 1\rb = 2\r"


def test_asc003_leaves_no_stray_separator_behind():
    text = "import triton\nk = 1  # noqa: ASC101,\nj = 2  # noqa: ASC101 , ASC102;\n"
    assert _fix(text) == "import triton\nk = 1\nj = 2\n"


def test_skip_file_after_a_lone_cr_is_a_real_comment():
    assert noqa.skips_file("import triton\r# ascendlint: skip-file\rx = 1\r")
    assert not noqa.skips_file('import triton\rNOTE = """\r# ascendlint: skip-file\r"""\r')


def test_every_rule_and_fix_keeps_the_code_around_a_lone_cr():
    text = LONE_CR.replace("z = 4\n", "def run(k, x):\n    k[(1,)](x, num_warps=4)  # noqa: ASC301\r")
    rules = list(all_rules())
    fixed = fixes.fix_text(text, lambda t: engine.lint_text(t, "k.py", rules)).text
    for line in ("BLOCK = 128", "WIDTH = 32", "SIZE = 3201", "NOTE = 2\r", "    k[(1,)](x)"):
        assert line in fixed, (line, fixed)


def _notebook_file(tmp_path, cells: list[str], name: str = "k.ipynb"):
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "k", "language": "python", "display_name": "K"}
    book.cells = [nbformat.v4.new_code_cell(cell) for cell in cells]
    path = tmp_path / name
    nbformat.write(book, str(path))
    return path


def test_notebook_cell_with_a_lone_cr_reports_and_fixes_in_place(cli, tmp_path):
    cell = "import triton\rdef run(k, x):\r    k[(1,)](x, num_warps=4)\r"
    path = _notebook_file(tmp_path, ["x = 1\r", cell])
    result = cli("check", path.name, "--select", "ASC101", "--format", "json", "--no-cache", cwd=tmp_path)
    (item,) = json.loads(result.stdout)
    assert item["cell"] == 2 and item["location"] == {"row": 3, "column": 16}, item
    fixed = cli("check", path.name, "--select", "ASC101", "--fix", "--no-cache", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    book = nbformat.read(str(path), as_version=4)
    assert book.cells[1].source == cell.replace(", num_warps=4", "")
    assert book.cells[0].source == "x = 1\r"


NESTED_FORM_FEEDS = {
    "if-body": "import triton\n\ndef run(k, x):\n    if x:\n\x0c        y = 1\n    k[(1,)](x, num_warps=4)\n",
    "method-body": "import triton\n\nclass A:\n    def run(self, k, x):\n\x0c        y = 1\n        k[(1,)](x, num_warps=4)\n",
    "after-blank-feed": "import triton\n\ndef run(k, x):\n    for i in x:\n        \x0c\n\x0c\x0c        y = 1\n"
                        "    k[(1,)](x, num_warps=4)\n",
    "lone-cr": "import triton\r\rdef run(k, x):\r    if x:\r\x0c        y = 1\r    k[(1,)](x, num_warps=4)\r",
}


def test_a_form_feed_starting_a_nested_blocks_first_line_keeps_the_file_linted():
    rules = [rule_by_code_or_name("ASC001"), rule_by_code_or_name("ASC101")]
    for name, text in NESTED_FORM_FEEDS.items():
        compile(text, name, "exec")  # Python accepts every one of them
        found = engine.lint_text(text, "k.py", rules)
        assert [d.code for d in found] == ["ASC101"], (name, [d.message for d in found])
        fixed = fixes.fix_text(text, lambda t: engine.lint_text(t, "k.py", rules))
        assert fixed.text == text.replace(", num_warps=4", ""), name


def test_a_fix_lands_in_place_after_a_line_start_form_feed_in_a_file_of_lone_crs():
    """libcst repeats a block's first-line form feed and drops the file's final lone CR; offsets still map exactly."""
    text = (
        "import triton\rimport triton.language as tl\r\r@triton.jit\r"
        "def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):\r"
        "\x0c    i_n, i_h = tl.program_id(0), tl.program_id(1)\r"
        "    bos = tl.load(cu_seqlens + i_n).to(tl.int32)\r"
        "    o_t = tl.arange(0, BT)\r"
        "    b_x = tl.load(x + (bos + o_t) * H * K + i_h * K)\r"
        "    tl.store(o + i_n * BT + o_t, b_x)\r"
    )
    rules = [rule_by_code_or_name("ASC203")]
    (finding,) = engine.lint_text(text, "k.py", rules)
    assert finding.fix is not None, finding.extra
    outcome = fixes.fix_text(text, lambda t: engine.lint_text(t, "k.py", rules), unsafe=False)
    assert outcome.text == text.replace("+ i_n).to(tl.int32)", "+ i_n).to(tl.int64)")
