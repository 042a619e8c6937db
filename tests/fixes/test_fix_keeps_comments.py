"""Removing an argument keeps the code around it as written: comments stay on their lines, the call's trailing
comma stays, and a line left empty goes, as ruff's argument removal does."""

from __future__ import annotations

import pytest

from tests.helpers import fix

HEAD = "import triton\n\ndef run(k, x):\n"

CASES = {
    "comment-after-a-removed-middle-keyword-stays-on-its-line": (
        "    k[(1,)](\n        x,\n        num_warps=4,  # four warps\n        BLOCK=128,\n    )\n",
        "    k[(1,)](\n        x,\n        # four warps\n        BLOCK=128,\n    )\n",
    ),
    "comment-after-the-removed-last-keyword-stays-on-its-line": (
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        num_warps=4,  # four warps\n    )\n",
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        # four warps\n    )\n",
    ),
    "own-line-comment-above-the-removed-last-keyword-is-kept": (
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        # GPUs want four warps\n        num_warps=4,\n    )\n",
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        # GPUs want four warps\n    )\n",
    ),
    "own-line-comment-kept-without-a-trailing-comma": (
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        # GPUs want four warps\n        num_warps=4\n    )\n",
        "    k[(1,)](\n        x,\n        BLOCK=128\n        # GPUs want four warps\n    )\n",
    ),
    "trailing-comma-after-the-last-kept-argument-stays": (
        "    k[(1,)](\n        x,\n        BLOCK=128,\n        num_warps=4,\n    )\n",
        "    k[(1,)](\n        x,\n        BLOCK=128,\n    )\n",
    ),
    "one-line-trailing-comma-stays": (
        "    k[(1,)](x, BLOCK=128, num_warps=4,)\n",
        "    k[(1,)](x, BLOCK=128,)\n",
    ),
    "one-line-calls-as-before": (
        "    k[(1,)](x, num_warps=4, BLOCK=128)\n    k[(1,)](x, BLOCK=128, num_warps=4)\n    k[(1,)](num_warps=4)\n",
        "    k[(1,)](x, BLOCK=128)\n    k[(1,)](x, BLOCK=128)\n    k[(1,)]()\n",
    ),
    "two-removed-keywords-keep-both-comments": (
        "    k[(1,)](\n        x,\n        num_warps=4,  # warps\n        num_stages=2,  # stages\n    )\n",
        "    k[(1,)](\n        x,\n        # warps\n        # stages\n    )\n",
    ),
}


@pytest.mark.parametrize("before, after", CASES.values(), ids=CASES.keys())
def test_removing_a_keyword_keeps_comments_and_trailing_commas(before, after):
    assert fix(HEAD + before, "ASC101").text == HEAD + after


def test_crlf_lines_keep_their_endings():
    before = (HEAD + CASES["trailing-comma-after-the-last-kept-argument-stays"][0]).replace("\n", "\r\n")
    after = (HEAD + CASES["trailing-comma-after-the-last-kept-argument-stays"][1]).replace("\n", "\r\n")
    assert fix(before, "ASC101").text == after
