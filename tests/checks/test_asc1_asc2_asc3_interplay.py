"""What the rule examples cannot express for ASC103/104/202/203/204/301: where findings are anchored, how the
integer-width rules share a product, and which fixes are applied without `--unsafe-fixes`."""

from __future__ import annotations

import pytest

from tests.helpers import fix, lint

WIDTH_KERNEL = """
import triton
import triton.language as tl

@triton.jit
def kernel(x, cu, T, H, K: tl.constexpr, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu + i_n).to(tl.int32)
    widened = (i_n * T * K).to(tl.int64)
    tl.store(x + widened + tl.arange(0, BT), 0.0)
    tl.store(x + (bos * H + i_h) * K + tl.arange(0, BT), 1.0)
"""


def _found(code: str, *codes: str) -> list[tuple[str, int, int]]:
    """(code, row, column) of each finding; rows count the snippet's leading blank line."""
    return [(d.code, d.location.row, d.location.column) for d in lint(code, *codes) if d.code in codes]


def test_a_product_widened_after_the_multiply_is_asc201_only_and_a_narrowed_load_is_asc202_and_asc203():
    found = _found(WIDTH_KERNEL, "ASC201", "ASC202", "ASC203")
    assert found == [("ASC203", 8, 11), ("ASC201", 9, 15), ("ASC202", 11, 14)]


def test_the_unsafe_int32_offset_fix_waits_for_unsafe_fixes_while_the_safe_load_fix_applies():
    safe = fix(WIDTH_KERNEL, "ASC202", "ASC203", unsafe=False).text
    assert "tl.load(cu + i_n).to(tl.int64)" in safe
    assert "tl.cast(" not in safe
    unsafe = fix(WIDTH_KERNEL.replace(".to(tl.int32)", ""), "ASC202", unsafe=True).text
    assert "tl.store(x + (tl.cast(bos, tl.int64) * H + i_h) * K" in unsafe


@pytest.mark.parametrize(
    "code, rule, anchor",
    [
        pytest.param(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, y, T, BT: tl.constexpr):
                i = tl.program_id(0).to(tl.int64)
                p = tl.make_block_ptr(x, (T,), (1,), (i * BT,), (BT,), (0,))
                tl.store(y, tl.sum(tl.load(p, boundary_check=(0,))))
            """,
            "ASC103",
            (8, 43),
            id="ASC103-on-the-offsets-element",
        ),
        pytest.param(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, T, h0=None, BT: tl.constexpr = 16):
                b = tl.load(x + tl.arange(0, BT))
                if h0 is not None or T > 0:
                    b += tl.load(h0 + tl.arange(0, BT))
                tl.store(x + tl.arange(0, BT), b)

            def launch(x, h0=None):
                kernel[(1,)](x, x.shape[0], h0)
            """,
            "ASC104",
            (8, 5),
            id="ASC104-on-the-if-with-the-runtime-term",
        ),
        pytest.param(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, T, BT: tl.constexpr):
                i = tl.program_id(0)
                tl.store(x + i * T + tl.arange(0, BT), 0.0)
            """,
            "ASC202",
            (8, 14),
            id="ASC202-on-the-pointer-expression",
        ),
        pytest.param(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, n, m, BT: tl.constexpr):
                for t in range(tl.program_id(0), n, m):
                    tl.store(q + tl.arange(0, BT), 0.0)
                    q += BT
            """,
            "ASC204",
            (9, 9),
            id="ASC204-on-the-in-place-update",
        ),
        pytest.param(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(a, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_a = tl.load(a + offs)
                b_c = tl.dot(b_a, b_a)
                tl.store(o + offs, b_c + b_a)
            """,
            "ASC301",
            (9, 11),
            id="ASC301-on-the-dot-not-the-later-read",
        ),
    ],
)
def test_findings_are_anchored_where_the_catalog_says(code, rule, anchor):
    assert [(row, column) for _, row, column in _found(code, rule)] == [anchor]


def test_asc306_fix_reloads_inside_the_loop_for_loop_carried_reuse_and_picks_a_free_name():
    code = """
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(a, b, o, n, BT: tl.constexpr):
        offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
        b_a = tl.load(a + offs).to(tl.float16)
        b_a_c = tl.load(b + offs)
        acc = tl.zeros([BT, BT], dtype=tl.float32)
        for i in range(0, n):
            if i > 0:
                acc += tl.dot(b_a, b_a_c)
        tl.store(o + offs, acc)
    """
    fixed = fix(code, "ASC306").text
    assert (
        "        if i > 0:\n            # reloaded: tl.dot may overwrite its left operand on Ascend (ASC306)\n"
        "            b_a_c2 = tl.load(a + offs, volatile=True).to(tl.float16)\n"
        "            acc += tl.dot(b_a_c2, b_a_c)\n"
    ) in fixed
    assert _found(fixed, "ASC306") == []


def test_asc104_reports_one_finding_per_if_however_many_dereferences_it_holds():
    code = """
    import triton
    import triton.language as tl

    @triton.heuristics({"USE_H0": lambda args: args["h0"] is not None})
    @triton.jit
    def kernel(x, h0, T, USE_H0: tl.constexpr, BT: tl.constexpr):
        offs = tl.arange(0, BT)
        b = tl.load(x + offs)
        if USE_H0 and T > 0:
            b += tl.load(h0 + offs)
            tl.store(h0 + offs, b)
        tl.store(x + offs, b)

    def launch(x, h0=None):
        kernel[(1,)](x, h0, x.shape[0], BT=16)
    """
    assert _found(code, "ASC104") == [("ASC104", 10, 5)]


def test_asc104_reports_a_kernel_no_launch_shows_only_when_asked():
    code = """
import triton
import triton.language as tl

@triton.jit
def kernel(x, h0=None, BT: tl.constexpr = 16):
    offs = tl.arange(0, BT)
    tl.store(x + offs, tl.load(x + offs) + tl.load(h0 + offs))
"""
    assert _found(code, "ASC104") == []
    asked = lint(code, "ASC104", options={"ASC104": {"report-unlaunched": True}})
    assert [(d.code, d.location.row) for d in asked] == [("ASC104", 8)]


def test_rules_leave_host_code_alone():
    code = """
    import torch
    import triton

    def host(q, cu, n):
        bos = cu[n].to(torch.int32)
        for task in range(n, 10, 2):
            q += bos * 4
        return torch.matmul(q, q) + q
    """
    assert _found(code, "ASC103", "ASC104", "ASC202", "ASC203", "ASC204", "ASC301") == []
