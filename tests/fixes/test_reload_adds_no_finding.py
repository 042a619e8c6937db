"""ASC301's and ASC306's fixes (the copy before the dot, and the unsafe reload of the tile) create no finding of
any rule, also where the reloaded tile is one whose width the autotune configs vary, which ASC503 reports: the
reload is the same tile loaded again, reported once (at the first load), not a second narrow tile."""

from __future__ import annotations

import pytest

from ascendlint.linter import engine
from ascendlint import fixes
from ascendlint.catalog.registry import all_rules

from .test_no_new_findings import line_origins, new_at_shifted_lines

CONFIGS = '@triton.autotune(configs=[triton.Config({"BT": 16}), triton.Config({"BT": 32})], key=["NK"])\n'
HEAD = "import triton\nimport triton.language as tl\n\n" + CONFIGS + "@triton.jit\n"

# name -> (kernel, the rule whose fix applies, whether that fix is the reload)
KERNELS = {
    "asc301-reload-pointer-tile": (
        "def kernel(q, k, o, NK, BT: tl.constexpr):\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    b_q = tl.load(q + offs)\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + i_k * BT * BT + offs)\n"
        "        acc += tl.dot(b_q, b_k) + b_q\n"
        "    tl.store(o + offs, acc)\n",
        "ASC301", True),
    "asc306-reload-pointer-tile": (
        "def kernel(q, k, o, NK, BT: tl.constexpr):\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    b_q = tl.load(q + offs)\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + i_k * BT * BT + offs)\n"
        "        acc += tl.dot(b_q, b_k)\n"
        "    tl.store(o + offs, acc)\n",
        "ASC306", True),
    "asc306-reload-with-a-cast-and-a-mask": (
        "def kernel(q, k, o, NK, BT: tl.constexpr):\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    b_q = tl.load(q + offs, mask=offs < BT * BT, other=0).to(tl.float16)\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + i_k * BT * BT + offs).to(tl.float16)\n"
        "        acc += tl.dot(b_q, b_k)\n"
        "    tl.store(o + offs, acc)\n",
        "ASC306", True),
    "asc306-reload-of-a-load-written-over-lines": (
        "def kernel(q, k, o, NK, BT: tl.constexpr):\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    b_q = tl.load(\n"
        "        (q + offs),  # the query block\n"
        "    )\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + i_k * BT * BT + offs)\n"
        "        acc += tl.dot(b_q, b_k)\n"
        "    tl.store(o + offs, acc)\n",
        "ASC306", True),
    "asc306-reload-of-a-block-pointer-tile": (
        "def kernel(q, k, o, T, NK, BT: tl.constexpr):\n"
        "    p_q = tl.make_block_ptr(q, (T, T), (T, 1), (0, 0), (BT, BT), (1, 0))\n"
        "    b_q = tl.load(p_q, boundary_check=(0, 1))\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + i_k * BT * BT + offs)\n"
        "        acc += tl.dot(b_q, b_k)\n"
        "    tl.store(o + offs, acc)\n",
        "ASC306", True),
    "asc301-copy-of-a-float-tile": (
        "def kernel(q, k, o, BT: tl.constexpr):\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    b_q = tl.load(q + offs).to(tl.float32)\n"
        "    b_k = tl.load(k + offs).to(tl.float32)\n"
        "    b_s = tl.dot(b_q, b_k)\n"
        "    tl.store(o + offs, b_s + b_q)\n",
        "ASC301", False),
}

RULES = list(all_rules())
FIXING = [r for r in RULES if r.code in ("ASC301", "ASC306")]


def _lint(text: str, rules=RULES):
    return engine.lint_text(text, "kernel.py", rules)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_the_fixes_create_no_finding_under_configs_that_vary_the_width(name, unsafe):
    body, code, is_reload = KERNELS[name]
    text = HEAD + body
    before = _lint(text)
    assert "ASC503" in {d.code for d in before}, "the kernel's tile must be one ASC503 reports"
    outcome = fixes.fix_text(text, _lint_fixing, unsafe=unsafe)
    if is_reload and not unsafe:
        assert outcome.text == text  # the reload is unsafe: not applied with safe fixes only
        return
    assert [d.code for d in outcome.fixed] == [code]
    assert ("volatile=True" in outcome.text) is is_reload
    after = _lint(outcome.text)
    assert code not in {d.code for d in after}
    assert new_at_shifted_lines(text, before, outcome.text, after) == []


def _lint_fixing(text: str):
    return _lint(text, FIXING)


def test_a_narrow_tile_loaded_anew_elsewhere_is_still_reported():
    """Only the same tile is reported once: a load of another tensor with the same offsets is its own tile."""
    body = KERNELS["asc306-reload-pointer-tile"][0].replace(
        "    tl.store(o + offs, acc)\n", "    tl.store(o + offs, acc + tl.load(k + offs))\n")
    tiles = [d for d in _lint(HEAD + body) if d.code == "ASC503"]
    assert len(tiles) == 4  # q's and k's loads in and after the loop, the store


def test_the_shifted_comparison_sees_a_finding_on_an_inserted_line():
    """Guards the guard: a finding on a line a fix inserted is new even when the same message exists elsewhere."""
    before = "a = 1\nb = 2\n"
    after = "a = 1\nx = 0\nb = 2\n"
    assert line_origins(before, after) == {1: 1, 2: None, 3: 2}

    class Found:
        def __init__(self, row):
            self.code, self.message, self.location = "ASC503", "narrow", type("L", (), {"row": row})()

    assert new_at_shifted_lines(before, [Found(1)], after, [Found(1)]) == []
    assert new_at_shifted_lines(before, [Found(1)], after, [Found(1), Found(2)]) == [("ASC503", "narrow", None)]
    assert new_at_shifted_lines(before, [Found(2)], after, [Found(3)]) == []


def test_a_reload_is_not_one_more_offset_of_the_same_index():
    """ASC202 counts the other offsets an unwidened index reaches; the reload repeats one, which is not another."""
    text = (
        "import triton\nimport triton.language as tl\n\n\n"
        "@triton.jit\n"
        "def kernel(q, k, o, cu_seqlens, NK, K, BT: tl.constexpr):\n"
        "    i_n = tl.program_id(0)\n"
        "    bos = tl.load(cu_seqlens + i_n)\n"
        "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n"
        "    q_offs = bos * K + offs\n"
        "    b_q = tl.load(q + q_offs)\n"
        "    acc = tl.zeros([BT, BT], dtype=tl.float32)\n"
        "    for i_k in range(0, NK):\n"
        "        b_k = tl.load(k + bos * K + i_k * BT + offs)\n"
        "        acc += tl.dot(b_q, b_k)\n"
        "    tl.store(o + bos * K + offs, acc)\n"
    )
    before = _lint(text)
    (offset,) = [d for d in before if d.code == "ASC202"]
    assert offset.message.endswith("2 more offsets use the same index")
    outcome = fixes.fix_text(text, _lint_fixing, unsafe=True)
    assert "tl.load(q + q_offs, volatile=True)" in outcome.text
    assert new_at_shifted_lines(text, before, outcome.text, _lint(outcome.text)) == []
