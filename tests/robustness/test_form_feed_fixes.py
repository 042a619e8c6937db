"""Fixes in files with line-start form feeds, with and without lone carriage returns: each applies where it
would without them, keeps every byte outside its edit, parses, is idempotent and leaves its rule clean.

Two shapes were refused before (measured with ``scripts/line_break_fixes.py``): a fix inserting a line above a
line that starts with a form feed indented it by nothing (the form feed is not indentation; the result did not
parse), and a fix whose range holds a form feed starting a continuation line, in a file parsed without its
line-start form feeds (a block whose first line starts with one), did not hold the text the rule saw."""

from __future__ import annotations

import pytest

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.catalog.registry import rule_by_code_or_name

# A form feed starting a block's first line: libcst refuses it, so the file is parsed without the form feeds that
# start lines, and every such form feed in the file is one the tree has not.
HEAD = "import triton\nimport triton.language as tl\n\n\ndef clamp(x):\n    if x:\n\f        return x\n\n\n"

RELOAD = HEAD + (
    "@triton.jit\n"
    "def kernel(q, k, o, NK, BT: tl.constexpr):\n"
    "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
    "    b_q = tl.load(q + offs)\n"
    "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
    "    for i_k in range(0, NK):\n"
    "        b_k = tl.load(k + i_k * BT * BT + offs)\n"
    "\f        acc += tl.dot(b_q, b_k)\n"
    "    tl.store(o + offs, acc)\n"
)


def RELOADED(text: str) -> str:  # the inserted line ends as the file's first line does
    return text.replace("\f        acc += tl.dot(b_q, b_k)",
                        "        # reloaded: tl.dot may overwrite its left operand on Ascend (ASC306)\n"
                        "        b_q_c = tl.load(q + offs, volatile=True)\n\f        acc += tl.dot(b_q_c, b_k)")


LAUNCH = HEAD + (
    "def run(k, x, y):\n"
    "    k[(1,)](\n"
    "        x,\n"
    "        num_warps=4,\n"
    "\f        BLOCK=64,\n"
    "    )\n"
)


def LAUNCHED(text: str) -> str:  # the keyword's line goes whole; the next line keeps its form feed
    return text.replace("        num_warps=4,\n", "").replace("        num_warps=4,\r", "")


OFFSET = HEAD + (
    "@triton.jit\n"
    "def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):\n"
    "    i_n, i_h = tl.program_id(0), tl.program_id(1)\n"
    "    o_k = tl.arange(0, BK)\n"
    "    bos = tl.load(cu_seqlens + i_n + o_k)\n"
    "    b_q = tl.load(q + (bos[:,\n"
    "\f                    None] * H + i_h) * K + o_k[None, :])\n"
    "    tl.store(o + o_k[:, None] * BK + o_k[None, :], b_q)\n"
)

CASES = {
    # name -> (text, rule, a function giving the fixed text, or None)
    "reload-above-a-form-feed-line": (RELOAD, "ASC306", RELOADED),
    "keyword-deleted-over-a-form-feed": (LAUNCH, "ASC101", LAUNCHED),
    "offset-widened-over-a-form-feed": (OFFSET, "ASC202", None),  # checked below
}


def _lone_crs(text: str) -> str:
    """Every other line ending a lone CR (never one that would pair with the next line's LF)."""
    lines = text.split("\n")
    return "".join(line + ("\r" if i % 2 else "\n") for i, line in enumerate(lines[:-1])) + lines[-1]


def _plain(text: str) -> str:
    return text.replace("\f", "").replace("\r\n", "\n").replace("\r", "\n")


def _fix(text: str, code: str):
    rules = [rule_by_code_or_name(code)]
    lint = lambda t: engine.lint_text(t, "k.py", rules)  # noqa: E731
    return fixes.fix_text(text, lint, unsafe=True), lint


@pytest.mark.parametrize("crs", [False, True], ids=["lf", "lone-cr"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fix_applies_in_place(name, crs):
    text, code, expected = CASES[name]
    if crs:
        text = _lone_crs(text)
    outcome, lint = _fix(text, code)
    assert outcome.rejected == [], [d.extra for d in outcome.rejected]
    assert [d.code for d in outcome.fixed] == [code]
    plain_fixed, _ = _fix(_plain(text), code)
    assert _plain(outcome.text) == plain_fixed.text  # lands where it lands without form feeds and lone CRs
    assert fixes.parses(outcome.text)
    assert [d.code for d in lint(outcome.text)] == []
    assert _fix(outcome.text, code)[0].text == outcome.text
    if expected is not None:
        assert outcome.text == expected(text)


def test_form_feeds_outside_an_edit_stay_and_one_inside_goes_with_its_text():
    """The deleted keyword's line goes whole, and the form feed that starts the next line stays; the cast
    replaces the index with the tree's code of it, which has none. Every other form feed (the nested block's)
    stays where it was."""
    for text, code, lost in ((LAUNCH, "ASC101", 0), (OFFSET, "ASC202", 1)):
        outcome, _ = _fix(text, code)
        assert outcome.text.count("\f") == text.count("\f") - lost
        assert outcome.text.startswith(HEAD)
    offset, _ = _fix(OFFSET, "ASC202")
    assert "(tl.cast(bos[:,\n" in offset.text and "None], tl.int64) * H + i_h) * K" in offset.text


def test_an_insertion_above_a_line_indented_after_a_form_feed_takes_the_blanks_after_it():
    from ascendlint import edits
    from ascendlint.text.locator import Locator
    from ascendlint.files.source import parse_module

    text = "def f():\n    x = 1\n  \f    y = 2\n"
    locator = Locator(parse_module(text), text)
    assert edits.indentation_of_line(locator, 3) == "    "
    assert edits.indentation_of_line(locator, 2) == "    "


def test_a_finding_about_an_item_of_an_unpacked_call_is_placed_at_the_launch_argument():
    """The host analysis binds ``grid, block = f(n)`` to items it builds (``f(n)[1]``), which are not in the
    file; a finding about one was placed by a node the locator cannot find, and the rule crashed (ASC002)."""
    text = (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\n"
        "def scale_rows(x_ptr, n_rows, BLOCK_SIZE: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_rows) * 2, mask=offs < n_rows)\n\n\n"
        "def grid_and_block(batch_size):\n"
        "    return 40, triton.cdiv(batch_size, 40)\n\n\n"
        "def run(x):\n"
        "    batch_size = x.shape[0]\n"
        "    grid, block_size = grid_and_block(batch_size)\n"
        "    scale_rows[(grid,)](x, batch_size, BLOCK_SIZE=block_size)\n"
    )
    # fp32 rows: with the compiler installed, an fp16 row fits up to the sweep's limit and is not reported
    options = {"ASC304": {"pointer-dtype": "fp32"}}
    (found,) = engine.lint_text(text, "k.py", [rule_by_code_or_name("ASC304"), rule_by_code_or_name("ASC002")],
                                options)
    assert found.code == "ASC304", found.message
    assert (found.location.row, found.location.column) == (18, 51)  # `block_size` at the launch


def test_blanks_between_form_feeds_in_a_block_s_first_indentation_keep_every_fix_in_place():
    """libcst repeats a block's first indentation (``"\\f \\f    "``, blanks and form feeds) on every line it prints,
    so the printed tree differs from the text in blanks too, not in form feeds only: positions still map exactly."""
    text = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x, y, n, BLOCK: tl.constexpr):\n"
        "\f \f    offs = tl.arange(0, BLOCK)\n"
        '\f    v = tl.load(x + offs, mask=offs < n, eviction_policy="evict_last")\n'
        "\f    tl.store(y + offs, v, mask=offs < n)\n"
    )
    outcome, lint = _fix(text, "ASC106")
    assert outcome.rejected == [], [d.extra for d in outcome.rejected]
    assert [d.code for d in outcome.fixed] == ["ASC106"]
    assert outcome.text == text.replace(', eviction_policy="evict_last"', "")
    assert [d.code for d in lint(outcome.text)] == []
