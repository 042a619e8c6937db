"""ASC301 keeps the certain reuses of a dot's left operand in the default set; the loop-carried single-lhs shape
(the flash-attention query tile) is ASC306, opt-in (RULES.md ASC301: triton-ascend's fused-attention tutorial is
written that way and passes its NPU accuracy test)."""

from __future__ import annotations

import pytest

from ascendlint.workspace import selection
from ascendlint.catalog.registry import all_rules
from tests.helpers import lint

HEAD = """
import triton
import triton.language as tl

@triton.jit
def attend(q, k, v, o, NK, BT: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    b_q = tl.load(q + offs)
    acc = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(0, NK):
        b_k = tl.load(k + i_k * BT * BT + offs)
        b_v = tl.load(v + i_k * BT * BT + offs)
"""


def found(body: str, tail: str = "    tl.store(o + offs, acc)\n") -> list[str]:
    return sorted(d.code for d in lint(HEAD + body + tail, "ASC301", "ASC306"))


def test_the_flash_attention_query_tile_is_asc306_only():
    assert found("        b_s = tl.dot(b_q, b_k)\n        acc += tl.dot(b_s.to(b_v.dtype), b_v)\n") == ["ASC306"]


@pytest.mark.parametrize("body, tail", [
    # a second dot in the same iteration
    ("        acc += tl.dot(b_q, b_k)\n        acc += tl.dot(b_q, b_v)\n", None),
    # the tile read as a right operand
    ("        acc += tl.dot(b_q, b_k)\n        acc += tl.dot(b_v, b_q)\n", None),
    # arithmetic on the tile in the same iteration, before the dot (seen by the next iteration's read)
    ("        acc += b_q * 0.5\n        acc += tl.dot(b_q, b_k)\n", None),
    # stored after the loop
    ("        acc += tl.dot(b_q, b_k)\n", "    tl.store(o + offs, acc + b_q)\n"),
])
def test_the_certain_reuses_stay_asc301(body, tail):
    codes = found(body) if tail is None else found(body, tail)
    assert "ASC301" in codes and "ASC306" not in codes, codes


def test_reuse_within_one_statement_outside_any_loop_is_asc301():
    text = HEAD.split("    for i_k")[0] + "    b_k = tl.load(k + offs)\n    tl.store(o + offs, tl.dot(b_q, b_k) + b_q)\n"
    assert sorted(d.code for d in lint(text, "ASC301", "ASC306")) == ["ASC301"]


def test_asc306_is_opt_in_and_selected_by_its_code():
    rules = list(all_rules())
    default = {r.code for r in selection.resolve(rules, ["ASC"], [], [])}
    assert "ASC301" in default and "ASC306" not in default
    assert "ASC306" in {r.code for r in selection.resolve(rules, ["ASC"], ["ASC306"], [])}
    assert "ASC306" in {r.code for r in selection.resolve(rules, ["ASC3"], [], [])}


def test_the_message_names_a_read_other_than_the_dots_own_next_iteration():
    text = HEAD + "        acc += tl.dot(b_q, b_k)\n" + "    tl.store(o + offs, acc + b_q)\n"
    (finding,) = lint(text, "ASC301")
    assert finding.message.endswith("(line 14)"), finding.message  # the store after the loop, not line 12


SECOND_PASS = "    for i_k in range(NK, 2 * NK):\n        b_k = tl.load(k + i_k * BT * BT + offs)\n{use}"


def test_a_second_loop_passing_the_tile_as_left_operand_again_is_asc306_only():
    # the two-stage attention shape: an off-band pass and an on-band pass, each one dot per iteration
    tail = SECOND_PASS.format(use="        acc += tl.dot(b_q, b_k)\n") + "    tl.store(o + offs, acc)\n"
    assert found("        acc += tl.dot(b_q, b_k)\n", tail) == ["ASC306", "ASC306"]


@pytest.mark.parametrize("use", [
    "        acc += tl.dot(b_k, b_q)\n",  # the second pass reads the tile as a right operand
    "        acc += tl.dot(b_q, b_k) + b_q\n",  # ... or as arithmetic beside its dot
])
def test_a_second_loop_reading_the_tile_otherwise_keeps_asc301(use):
    tail = SECOND_PASS.format(use=use) + "    tl.store(o + offs, acc)\n"
    assert "ASC301" in found("        acc += tl.dot(b_q, b_k)\n", tail)


def test_a_dot_after_the_loop_in_straight_line_code_keeps_asc301():
    tail = "    b_k = tl.load(k + offs)\n    acc += tl.dot(b_q, b_k)\n    tl.store(o + offs, acc)\n"
    assert "ASC301" in found("        acc += tl.dot(b_q, b_k)\n", tail)


def test_the_message_names_the_certain_reuse_before_a_later_loops_left_operand():
    # b_q is passed again as a left operand in a second loop (line 16) and read as a right operand after it (line 17)
    tail = (SECOND_PASS.format(use="        acc += tl.dot(b_q, b_k)\n")
            + "    acc += tl.dot(b_k, b_q)\n    tl.store(o + offs, acc)\n")
    source = HEAD + "        acc += tl.dot(b_q, b_k)\n" + tail
    (first,) = [d for d in lint(source, "ASC301") if d.location.row == 13]
    assert first.message.endswith("(line 17)")
