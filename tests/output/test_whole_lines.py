"""A fix's edits merged into one replacement of whole lines: same result, line-aligned range."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ascendlint.diagnostics import Edit
from ascendlint.fixes import apply_edits
from ascendlint.output.whole_lines import whole_line_edit

TEXT = "a = 1\nb = a\nc = b\n"


def test_an_inserted_line_and_a_rename_below_become_one_replacement_of_both_lines():
    edits = [Edit(6, 6, "x = a\n"), Edit(10, 11, "x")]  # insert above line 2, rename `a` on line 2
    assert whole_line_edit(TEXT, edits) == Edit(6, 11, "x = a\nb = x")


def test_a_deleted_line_takes_its_neighbour_so_the_suggestion_is_not_empty():
    assert whole_line_edit(TEXT, [Edit(6, 12, "")]) == Edit(0, 11, "a = 1")
    assert whole_line_edit(TEXT, [Edit(0, 6, "")]) == Edit(0, 11, "b = a")


def test_an_edit_that_joins_two_lines_covers_both():
    assert whole_line_edit(TEXT, [Edit(5, 6, " ")]) == Edit(0, 11, "a = 1 b = a")


def test_line_breaks_are_kept_outside_the_range_crlf_and_no_final_newline_included():
    crlf = TEXT.replace("\n", "\r\n")
    assert whole_line_edit(crlf, [Edit(11, 12, "x")]) == Edit(7, 12, "b = x")
    assert whole_line_edit("a = 1", [Edit(4, 5, "2")]) == Edit(0, 5, "a = 2")


@st.composite
def text_and_edits(draw):
    lines = draw(st.lists(st.sampled_from(["", "x", "yy = 1", "  z"]), min_size=1, max_size=6))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    text = ending.join(lines) + draw(st.sampled_from(["", ending]))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), min_size=2, max_size=6)))
    edits = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        if text[start - 1 : start + 1] == "\r\n" or text[end - 1 : end + 1] == "\r\n":
            continue  # an edit never splits a line break
        edits.append(Edit(start, end, draw(st.sampled_from(["", "q", "w\n", "\n"]))))
    return text, edits or [Edit(0, 0, "v\n")]


@given(text_and_edits())
def test_the_merged_edit_gives_the_same_text_and_covers_whole_lines(case):
    text, edits = case
    merged = whole_line_edit(text, edits)
    assert apply_edits(text, [merged]) == apply_edits(text, edits)
    assert merged.start == 0 or text[merged.start - 1] in "\r\n"
    assert merged.end == len(text) or text[merged.end] in "\r\n"
