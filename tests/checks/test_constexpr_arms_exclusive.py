"""Arms of a compile-time `if` are exclusive for every rule that reasons about what comes after: only one arm is in
any compiled kernel, so a use in one arm never follows a use in the other, not even on the next iteration of a loop
around the `if` (ASC301, ASC306, ASC410)."""

from __future__ import annotations

import pytest

from tests.helpers import lint

DOT_IN_ONE_ARM = """
import triton
import triton.language as tl

@triton.jit
def scores(q, k, o, n, NK, BT: tl.constexpr, WIDE: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    b_q = tl.load(q + offs)
    acc = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(0, NK):
        b_k = tl.load(k + i_k * BT * BT + offs)
        if {test}:
            acc += tl.dot(b_q.to(tl.float32), b_k.to(tl.float32))
        else:
            acc += tl.dot(b_q, b_k)
    tl.store(o + offs, acc)
"""


def codes(text: str) -> list[str]:
    return sorted(d.code for d in lint(text, "ASC301", "ASC306"))


@pytest.mark.parametrize("test", ["WIDE", "not WIDE", "BT > 32", "WIDE and BT >= 16"])
def test_a_read_in_the_other_compile_time_arm_does_not_follow_the_dot(test):
    # what is left is the dot's own operand read again on the next iteration: ASC306's loop-carried shape
    assert codes(DOT_IN_ONE_ARM.format(test=test)) == ["ASC306"]


def test_a_runtime_test_can_take_the_other_arm_on_the_next_iteration():
    assert "ASC301" in codes(DOT_IN_ONE_ARM.format(test="n > i_k"))


def test_a_read_after_the_compile_time_if_still_follows_the_dot():
    text = DOT_IN_ONE_ARM.format(test="WIDE").replace("tl.store(o + offs, acc)", "tl.store(o + offs, acc + b_q)")
    assert "ASC301" in codes(text)


def test_arithmetic_in_the_other_arm_leaves_only_the_loop_carried_shape():
    text = """
import triton
import triton.language as tl

@triton.jit
def scores(q, k, o, NK, BT: tl.constexpr, SCALE_FIRST: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    b_q = tl.load(q + offs)
    acc = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(0, NK):
        b_k = tl.load(k + i_k * BT * BT + offs)
        if SCALE_FIRST:
            acc += b_q * 0.5
        else:
            acc += tl.dot(b_q, b_k)
    tl.store(o + offs, acc)
"""
    assert codes(text) == ["ASC306"]


CONSUMER = """
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

@triton.jit
def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr,
             DROP: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for rnd in range(n_rounds):
        slot = signal_ptr + (rnd % RING) * 8
        token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
        tile_ptr = dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token)
        if {test}:
            dl.notify(slot, rank, signal=0, sig_op="set")
        else:
            tl.store(out_ptr + rnd * BLOCK + offs, tl.load(tile_ptr + offs))
            libshmem_device.fence()
            dl.notify(slot, rank, signal=0, sig_op="set")
"""


def test_asc410_a_credit_returned_in_one_compile_time_arm_is_not_before_the_other_arms_reads():
    assert [d.code for d in lint(CONSUMER.format(test="DROP"), "ASC410")] == []


def test_asc410_still_reports_when_the_test_is_decided_at_run_time():
    assert [d.code for d in lint(CONSUMER.format(test="rnd < 2"), "ASC410")] == ["ASC410"]
