"""Fixes that used to break kernels or leave debris, each pinned by the smallest case that showed it."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from ascendlint.checks.asc101_launch_num_warps import without_commented_keywords
from ascendlint.diagnostics import Applicability
from tests.helpers import fix, lint

# -- ASC101: a commented-out keyword goes with its comma, and takes no other comment text with it -----------------


@pytest.mark.parametrize(
    ("comment", "cleaned"),
    [
        ("# num_warps=4,  # tuned on A100", "# tuned on A100"),
        ("# tuned: num_warps=8  # keep", "# tuned:  # keep"),
        ("# BLOCK=64, num_warps=4", "# BLOCK=64"),
        ("# num_warps=4, BLOCK=64", "# BLOCK=64"),
        ("# BLOCK=64, num_stages=2, GROUP=8", "# BLOCK=64, GROUP=8"),
        ("# try num_warps=4 later", "# try later"),
        ("# num_warps=4 num_stages=2", ""),
        ("#num_warps=4,", ""),
    ],
)
def test_commented_out_keywords_are_removed_cleanly(comment, cleaned):
    assert without_commented_keywords(comment) == cleaned


def test_removing_a_commented_keyword_before_another_comment_leaves_no_empty_hash():
    code = """
    import triton

    def run(x):
        k[(1,)](
            x,
            # num_warps=4,  # old setting
            x,  # num_stages=3, tuned
        )
    """
    fixed = fix(code, "ASC101").text
    assert "#  #" not in fixed
    assert "        # old setting\n" in fixed
    assert "        x,  # tuned\n" in fixed
    assert lint(fixed, "ASC101") == []


# -- ASC301: `+ 0.0` only on tiles known to be floating point ------------------------------------------------------

_LOADED_TILE = """
import triton
import triton.language as tl

@triton.jit
def kernel(q, k, o, BT: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    b_q = tl.load(q + offs)
    b_k = tl.load(k + offs)
    b_s = tl.dot(b_q, b_k)
    tl.store(o + offs, b_s + b_q)
"""


def test_a_loaded_tile_of_unknown_type_gets_no_safe_float_copy():
    """`b_q + 0.0` on an int8 tile is fp32: the dot then fails (`Both operands must be same dtype`)."""
    (finding,) = lint(_LOADED_TILE, "ASC301")
    assert finding.fix.applicability is Applicability.UNSAFE
    assert fix(_LOADED_TILE, "ASC301", unsafe=False).text == textwrap.dedent(_LOADED_TILE)
    fixed = fix(_LOADED_TILE, "ASC301", unsafe=True).text
    assert "+ 0.0" not in fixed and "+ 0\n" not in fixed
    assert "    b_q_c = tl.load(q + offs, volatile=True)\n    b_s = tl.dot(b_q_c, b_k)\n" in fixed


@pytest.mark.parametrize(
    "float_evidence",
    [
        "b_q = tl.load(q + offs).to(tl.bfloat16)",
        "b_q = tl.load(q + offs) * 0.125",
        "b_q = tl.exp(tl.load(q + offs))",
        "b_q = tl.load(q + offs) / 8",
        "b_q = tl.cast(tl.load(q + offs), tl.float16)",
    ],
)
def test_a_tile_known_to_be_float_gets_the_safe_copy(float_evidence):
    code = _LOADED_TILE.replace("b_q = tl.load(q + offs)", float_evidence)
    (finding,) = lint(code, "ASC301")
    assert finding.fix.applicability is Applicability.SAFE
    assert "    b_q_c = b_q + 0.0\n    b_s = tl.dot(b_q_c, b_k)\n" in fix(code, "ASC301", unsafe=False).text


def test_a_float_partner_operand_or_accumulator_proves_the_left_operand_float():
    partner = _LOADED_TILE.replace("b_k = tl.load(k + offs)", "b_k = tl.load(k + offs).to(tl.float16)")
    accumulator = _LOADED_TILE.replace(
        "b_s = tl.dot(b_q, b_k)", "b_s = tl.dot(b_q, b_k, tl.zeros([BT, BT], dtype=tl.float32))"
    )
    for code in (partner, accumulator):
        (finding,) = lint(code, "ASC301")
        assert finding.fix.applicability is Applicability.SAFE


def test_a_tile_that_cannot_be_reloaded_gets_no_fix():
    moved = _LOADED_TILE.replace("    b_s = tl.dot(b_q, b_k)", "    offs = offs + 1\n    b_s = tl.dot(b_q, b_k)")
    helper = """
    import triton
    import triton.language as tl

    @triton.jit
    def attend(b_q, b_k):
        b_s = tl.dot(b_q, b_k)
        return b_s + b_q
    """
    for code in (moved, helper):
        (finding,) = lint(code, "ASC301")
        assert finding.fix is None


# -- ASC403: the device fence, never the host package's name -------------------------------------------------------

_HOST_SHMEM = """
import shmem as ash
import triton
import triton.language as tl
import triton_dist.language as dl

@triton.jit
def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
    dl.notify(signal_ptr, peer)
"""


def test_fence_is_the_device_module_even_when_the_host_shmem_package_is_imported():
    fixed = fix(_HOST_SHMEM, "ASC403", unsafe=False).text
    assert "ash.fence" not in fixed
    assert "import triton_dist.language as dl\nfrom triton_dist.language.extra import libshmem_device\n" in fixed
    assert "    libshmem_device.fence()\n    dl.notify(signal_ptr, peer)\n" in fixed
    assert lint(fixed, "ASC403") == []


def test_the_fix_is_display_only_when_the_import_it_needs_would_shadow_a_name():
    code = _HOST_SHMEM.replace("import shmem as ash", "import shmem as libshmem_device")
    (finding,) = lint(code, "ASC403")
    assert finding.fix is None
    assert "`libshmem_device.fence()`" in finding.message


def _facts(code: str) -> ModuleFacts:
    module = cst.parse_module(textwrap.dedent(code))
    return ModuleFacts(module, NodeIndex(module))


def test_module_alias_ignores_a_module_that_only_shares_the_short_name():
    host = _facts("import shmem as ash\nimport triton_dist.language as dl\n")
    assert host.module_alias("shmem") is None
    assert host.local_alias("shmem", "libshmem_device") != "ash"
    device = _facts("import shmem as ash\nfrom triton_dist.language.extra import libshmem_device as shm\n")
    assert device.module_alias("shmem") == device.local_alias("shmem", "x") == "shm"
    assert _facts("import triton.language as tl\n").local_alias("tl", "x") == "tl"


def test_the_reload_does_not_repeat_runtime_offset_arithmetic():
    """Seen on a real kernel: repeating `q + i * stride + offs` repeated its int32 product (a second ASC202)."""
    code = _LOADED_TILE.replace("(q, k, o, BT: tl.constexpr)", "(q, k, o, stride, BT: tl.constexpr)")
    code = code.replace("b_q = tl.load(q + offs)", "b_q = tl.load(q + tl.program_id(0) * stride + offs)")
    (finding,) = lint(code, "ASC301")
    assert finding.fix is None
    plain = _LOADED_TILE.replace("b_q = tl.load(q + offs)", "b_q = tl.load(q + offs, mask=offs < BT * BT, other=0)")
    assert "volatile=True" in fix(plain, "ASC301").text


# -- ASC403: a fence the kernel can name, and a fix that converges ---------------------------------------------------

_FUNCTION_LOCAL_IMPORT = """
import triton
import triton.language as tl
import triton_dist.language as dl

def device_module():
    from triton_dist.language.extra import libshmem_device
    return libshmem_device

@triton.jit
def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
    dl.notify(signal_ptr, peer)
"""


def test_a_function_local_import_is_not_what_the_fence_is_spelled_with():
    fixed = fix(_FUNCTION_LOCAL_IMPORT, "ASC403", unsafe=False).text
    assert "import triton_dist.language as dl\nfrom triton_dist.language.extra import libshmem_device\n" in fixed
    assert "    libshmem_device.fence()\n    dl.notify(signal_ptr, peer)\n" in fixed
    assert lint(fixed, "ASC403") == []
    compile(fixed, "fixed.py", "exec")


def test_a_function_local_alias_is_not_used_either():
    code = _FUNCTION_LOCAL_IMPORT.replace("import libshmem_device\n    return libshmem_device",
                                          "import libshmem_device as shm\n    return shm")
    fixed = fix(code, "ASC403", unsafe=False).text
    assert "shm.fence()" not in fixed and "    libshmem_device.fence()\n" in fixed
    assert "\nfrom triton_dist.language.extra import libshmem_device\n" in fixed


@pytest.mark.parametrize("rebinding", [
    "libshmem_device = None\n",
    "def libshmem_device():\n    pass\n",
    "for libshmem_device in range(2):\n    pass\n",
])
def test_no_fence_through_a_name_rebound_to_something_else(rebinding):
    code = _FUNCTION_LOCAL_IMPORT.replace("def device_module():", rebinding + "\ndef device_module():")
    (finding,) = lint(code, "ASC403")
    assert finding.fix is None


def test_no_fence_through_a_top_level_import_whose_name_is_rebound_in_the_kernel():
    code = _FUNCTION_LOCAL_IMPORT.replace("import triton_dist.language as dl\n",
                                          "import triton_dist.language as dl\n"
                                          "from triton_dist.language.extra import libshmem_device\n")
    code = code.replace("    offs = tl.arange(0, BLOCK)\n", "    offs = tl.arange(0, BLOCK)\n    libshmem_device = offs\n")
    (finding,) = lint(code, "ASC403")
    assert finding.fix is None


_NOTIFY_IN_A_STORE = """
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device

@triton.jit
def publish(buf_ptr, signal_ptr, x_ptr, flag_ptr, peer, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
    tl.store(flag_ptr, dl.notify(signal_ptr, peer))
"""


def test_a_notify_inside_a_stores_arguments_is_fixed_once():
    first = fix(_NOTIFY_IN_A_STORE, "ASC403", unsafe=False).text
    assert first.count("libshmem_device.fence()") == 1
    assert fix(first, "ASC403", unsafe=False).text == first, "a second --fix changes nothing"
    assert lint(first, "ASC403") == []


def test_a_store_inside_the_notifys_arguments_gets_no_fix():
    code = _NOTIFY_IN_A_STORE.replace("    tl.store(flag_ptr, dl.notify(signal_ptr, peer))\n",
                                      "    dl.notify(signal_ptr, tl.store(flag_ptr, peer))\n")
    (finding,) = lint(code, "ASC403")
    assert finding.fix is None


# -- ASC301/ASC306: the reload of a load written over several lines (a loop-carried single lhs: ASC306's case) ------

_RELOADED = """
import triton
import triton.language as tl


@triton.jit
def kernel(q, k, o, NK, BT: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    LOAD
    for i in range(NK):
        b_k = tl.load(k + i * BT * BT + offs)
        b_s = tl.dot(b_q, b_k)
        tl.store(o + i * BT * BT + offs, b_s)
"""


@pytest.mark.parametrize("load, reload", [
    ("b_q = tl.load(q + \\\n                  offs)", "b_q_c = tl.load(q + offs, volatile=True)"),
    ("b_q = tl.load(q + offs,  # the query tile\n                  mask=offs < BT * BT)",
     "b_q_c = tl.load(q + offs, mask=offs < BT * BT, volatile=True)"),
    ("b_q = tl.load(q + offs)  # the query tile", "b_q_c = tl.load(q + offs, volatile=True)"),
], ids=["backslash", "comment-inside", "comment-after"])
def test_the_reload_of_a_load_with_comments_or_continuations_is_kept(load, reload):
    code = _RELOADED.replace("LOAD", load)
    fixed = fix(code, "ASC306", unsafe=True).text
    assert f"        {reload}\n        b_s = tl.dot(b_q_c, b_k)\n" in fixed, fixed
    assert lint(fixed, "ASC306") == [] and lint(fixed, "ASC301") == []
