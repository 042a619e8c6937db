"""Four host-code forms the size rules (ASC105 and its sweep ASC110, the int32 offset rules ASC202 and ASC207) and
the launch-value readers see through the shared analysis: a launch below an unconditional ``return``/``raise`` is not
a launch (nor is one below an ``if`` whose every branch exits), and a kernel launched only there is never run, so no
rule reports inside it; a shape predicate the caller runs first bounds the sizes its body bounds (``return x.shape[0] <= 4096 and
...``, ``if ...: return False`` then ``return True``, a size passed by name), whether the launch or the public caller
of a private launcher tests it; a tile picked by a loop over a literal list takes one of those literals (the largest
for launch values, the smallest for grid counts); a size the host asserts small (``assert head_dim <= 256``,
``assert n_heads in (8, 16, 32)``) is that small in the magnitude model."""

from __future__ import annotations

import libcst as cst
import pytest

from ascendlint.analysis.host_arguments import host_argument_bits
from ascendlint.analysis.launch_arguments import literal_arguments
from ascendlint.analysis.literal_helpers import helper_literals
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from tests.helpers import lint

ROWS = """\
import torch
import triton
import triton.language as tl

@triton.jit
def row_halve(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    v = tl.load(x_ptr + row * n_cols + offs, mask=mask)
    tl.store(y_ptr + row * n_cols + offs, v * 0.5, mask=mask)

"""

LAUNCH = "    row_halve[(n_rows,)](x, y, n_cols, BLOCK=1024)\n"


def codes(source: str, *rules: str) -> list[str]:
    return [d.code for d in lint(source, *rules)]


# 1. unreachable launches -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("exit_line", ["    return x * 0.5\n", "    raise NotImplementedError('kernel path')\n"])
def test_a_launch_below_an_unconditional_exit_is_not_a_launch(exit_line):
    host = "def halve(x):\n    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n" + exit_line + LAUNCH
    assert codes(ROWS + host, "ASC105", "ASC110") == []


def test_no_rule_reports_the_keywords_of_an_unreachable_launch():
    host = ("def halve(x):\n    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n    return x * 0.5\n"
            + LAUNCH.replace("BLOCK=1024", "BLOCK=1024, num_warps=4"))
    assert codes(ROWS.replace("import torch\n", "import torch\nimport torch_npu\n") + host) == []


def test_the_same_launch_without_the_exit_is_reported():
    host = "def halve(x):\n    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n" + LAUNCH
    assert codes(ROWS + host, "ASC105", "ASC110") == ["ASC105"]


def test_an_exit_inside_a_branch_keeps_the_launch():
    host = ("def halve(x, debug=False):\n    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n"
            "    if debug:\n        return x * 0.5\n" + LAUNCH)
    assert codes(ROWS + host, "ASC105", "ASC110") == ["ASC105"]


VARLEN = """\
import torch
import triton
import triton.language as tl

@triton.jit
def varlen_scale(x, y, cu_seqlens, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    i_t, i_n, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
    offs = i_t * BT + tl.arange(0, BT)
    p = x + (bos * H + i_h) * K + offs
    tl.store(y + (bos * H + i_h) * K + offs, tl.load(p) * 2.0)

"""

VARLEN_LAUNCH = "    varlen_scale[(NT, N, H)](x, y, cu_seqlens, H=H, K=K, BT=64)\n    return y\n"
VARLEN_HOST = ("def scale(x, cu_seqlens, gated=None):\n    B, T, H, K = x.shape\n    NT, N = triton.cdiv(T, 64), "
               "len(cu_seqlens) - 1\n    y = torch.empty_like(x)\n")


@pytest.mark.parametrize("exit_lines", [
    "    raise NotImplementedError('not supported yet')\n",
    "    if gated is None:\n        return x\n    else:\n        raise ValueError('gated')\n",
    "    if gated is None:\n        return x\n    elif gated:\n        return x * 2\n    else:\n        raise ValueError\n",
])
def test_a_kernel_launched_only_below_an_exit_is_never_run(exit_lines):
    assert codes(VARLEN + VARLEN_HOST + exit_lines + VARLEN_LAUNCH, "ASC202", "ASC203") == []


@pytest.mark.parametrize("exit_lines", [
    "",
    "    if gated is not None:\n        raise NotImplementedError('gated')\n",
    "    if gated is None:\n        return x\n    elif gated:\n        raise ValueError\n",
])
def test_a_kernel_with_a_reachable_launch_is_still_checked(exit_lines):
    assert sorted(codes(VARLEN + VARLEN_HOST + exit_lines + VARLEN_LAUNCH, "ASC202", "ASC203")) == [
        "ASC202", "ASC203"]


def test_a_kernel_with_one_reachable_launch_among_unreachable_ones_is_still_checked():
    host = (VARLEN_HOST + VARLEN_LAUNCH + "\n\ndef scale_twice(x, cu_seqlens, gated=None):\n"
            + VARLEN_HOST.split("\n", 1)[1] + "    raise NotImplementedError\n" + VARLEN_LAUNCH)
    assert sorted(codes(VARLEN + host, "ASC202", "ASC203")) == ["ASC202", "ASC203"]


# 2. caller predicates bound sizes ---------------------------------------------------------------------------------

PREDICATES = {
    "bound and another check": "def can_run_fast(t):\n    return t.shape[0] <= 4096 and t.is_contiguous()\n\n",
    "early false then true": (
        "def can_run_fast(t):\n    if t.shape[0] > 4096:\n        return False\n"
        "    if not t.is_contiguous():\n        return False\n    return True\n\n"),
    "sizes passed as names": "def can_run_fast(rows):\n    return rows <= 4096\n\n",
}

CALLERS = {
    "negated early return": (
        "def halve(x):\n    n_rows, n_cols = x.shape\n    if not can_run_fast({arg}):\n        return x * 0.5\n"
        "    y = torch.empty_like(x)\n" + LAUNCH),
    "public caller of a private launcher": (
        "def _launch(x):\n    n_rows, n_cols = x.shape\n    y = torch.empty_like(x)\n" + LAUNCH + "    return y\n\n"
        "def halve(x):\n    n_rows = x.shape[0]\n    if can_run_fast({arg}):\n        return _launch(x)\n"
        "    return x * 0.5\n"),
}


@pytest.mark.parametrize("predicate", PREDICATES.values(), ids=PREDICATES.keys())
@pytest.mark.parametrize("caller", CALLERS.values(), ids=CALLERS.keys())
def test_a_predicate_the_caller_runs_first_bounds_the_grid(predicate, caller):
    arg = "n_rows" if "rows <=" in predicate else "x"
    assert codes(ROWS + predicate + caller.format(arg=arg), "ASC105", "ASC110") == []


@pytest.mark.parametrize("predicate", [
    "def can_run_fast(t):\n    return t.shape[0] <= 1048576 and t.is_contiguous()\n\n",
    "def can_run_fast(t):\n    if t.shape[1] > 4096:\n        return False\n    return True\n\n",
])
def test_a_predicate_that_does_not_bound_the_rows_leaves_the_finding(predicate):
    caller = CALLERS["negated early return"].format(arg="x")
    assert codes(ROWS + predicate + caller, "ASC105", "ASC110") == ["ASC105"]


# 3. tiles picked by a loop over literals --------------------------------------------------------------------------

SCALE = """\
import torch
import triton
import triton.language as tl

@triton.jit
def rows_scale(x, y, C, ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    offs = rows[:, None] * C + cols[None, :]
    tl.store(y + offs, tl.load(x + offs, mask=cols[None, :] < C) * 2, mask=cols[None, :] < C)

def scale(x):
    n, C = x.shape
    y = torch.empty_like(x)
{pick}
    rows_scale[(triton.cdiv(n, 4),)](x, y, C, ROWS=4, BLOCK_C=BLOCK_C)
    return y
"""


def test_launch_values_take_the_largest_literal_a_loop_can_pick():
    pick = "    for BLOCK_C in (1024, 2048, 4096):\n        if C <= BLOCK_C:\n            break"
    module = cst.parse_module(SCALE.format(pick=pick))
    facts = ModuleFacts(module, NodeIndex(module))
    assert literal_arguments(facts, facts.launches[-1]) == {"ROWS": 4, "BLOCK_C": 4096}


@pytest.mark.parametrize("pairs, table", [
    ("((8, 1024), (4, 2048), (2, 4096))", ""),
    ("_TILES", "_TILES = [(8, 1024), (4, 2048), (2, 4096)]\n\n"),  # a literal list bound once at module level
])
def test_a_loop_over_literal_tile_pairs_gives_each_name_its_column(pairs, table):
    pick = f"    for ROWS_T, BLOCK_C in {pairs}:\n        if C <= BLOCK_C:\n            break"
    source = table + SCALE.format(pick=pick).replace("ROWS=4", "ROWS=ROWS_T")
    module = cst.parse_module(source)
    facts = ModuleFacts(module, NodeIndex(module))
    assert literal_arguments(facts, facts.launches[-1]) == {"ROWS": 8, "BLOCK_C": 4096}


@pytest.mark.parametrize("helper, expected", [
    ("def _pick(n):\n    for b in (256, 128, 64):\n        if n % b == 0:\n            return b\n    return 32\n",
     (32, 64, 128, 256)),
    ("def _pick(n):\n    for b in [512, 1024]:\n        if n <= b:\n            return b\n"
     "    raise ValueError(n)\n", (512, 1024)),
    ("def _pick(n):\n    for b in (256, 128):\n        if n % b == 0:\n            return n // b\n    return 1\n",
     None),
])
def test_a_helper_returning_the_variable_of_a_literal_loop_gives_those_literals(helper, expected):
    module = cst.parse_module(helper + "block = _pick(4096)\n")
    facts = ModuleFacts(module, NodeIndex(module))
    assert helper_literals(facts, module.body[-1].body[0].value) == expected


TILED = """\
import torch
import triton
import triton.language as tl

@triton.jit
def tile_sum(x, y, n, BM: tl.constexpr):
    offs = tl.program_id(0) * BM + tl.arange(0, BM)
    tl.store(y + tl.program_id(0), tl.sum(tl.load(x + offs, mask=offs < n), axis=0))

def tiled_sum(x):
    n = x.numel()
    y = x.new_empty(65536)
    for bm in {blocks}:
        if n % bm == 0:
            break
    tile_sum[(triton.cdiv(n, bm),)](x, y, n, BM=bm)
    return y
"""


@pytest.mark.parametrize("blocks, smallest", [("(32, 64, 128)", 32), ("[8, 64, 128]", 8)])
def test_a_grid_counts_tiles_of_the_smallest_literal_a_loop_can_pick(blocks, smallest):
    (finding,) = lint(TILED.format(blocks=blocks), "ASC105", "ASC110")
    assert finding.code == "ASC105" and f"(`bm` = {smallest})" in finding.message


# 4. asserted small sizes in the magnitude model -------------------------------------------------------------------

DECODE = """\
import torch
import triton
import triton.language as tl

@triton.jit
def decode_scale(q_ptr, o_ptr, n_heads, head_dim, BLOCK_D: tl.constexpr):
    i_b = tl.program_id(0)
    i_h = tl.program_id(1)
    offs = tl.arange(0, BLOCK_D)
    base = (i_b * n_heads + i_h) * head_dim
    tl.store(o_ptr + base + offs, tl.load(q_ptr + base + offs, mask=offs < head_dim) * 2, mask=offs < head_dim)

def decode(q):
    batch, n_heads, head_dim = q.shape
{asserts}    o = torch.empty_like(q)
    decode_scale[(batch, n_heads)](q, o, n_heads, head_dim, BLOCK_D=triton.next_power_of_2(head_dim))
    return o
"""


@pytest.mark.parametrize("asserts, head_dim_bits, n_heads_bits", [
    ("", 15, 7),  # by their names: a per-token size, a head count
    ("    assert head_dim <= 256\n", 9, 7),
    ("    assert head_dim <= 256 and n_heads in (8, 16, 32)\n", 9, 6),
    ("    if head_dim > 512:\n        raise ValueError(head_dim)\n", 10, 7),
    ("    assert head_dim <= 1 << 20\n", 15, 7),  # a bound looser than the name's reading changes nothing
])
def test_an_asserted_size_bounds_its_factor_in_the_magnitude_model(asserts, head_dim_bits, n_heads_bits):
    module = cst.parse_module(DECODE.format(asserts=asserts))
    facts = ModuleFacts(module, NodeIndex(module))
    kernel = facts.kernels["decode_scale"]
    assert host_argument_bits(facts, kernel, "head_dim")[0] == head_dim_bits
    assert host_argument_bits(facts, kernel, "n_heads")[0] == n_heads_bits


PICKS = """\
import torch
import triton
import triton.language as tl

@triton.jit
def gather_picks(ids_ptr, out_ptr, n_picked, BLOCK: tl.constexpr):
    i_t = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(ids_ptr + i_t * n_picked + offs, mask=offs < n_picked)
    tl.store(out_ptr + i_t * n_picked + offs, v + 1, mask=offs < n_picked)

def picks(ids):
    n_tokens, n_picked = ids.shape
{asserts}    out = torch.empty_like(ids)
    gather_picks[(n_tokens,)](ids, out, n_picked, BLOCK=triton.next_power_of_2(n_picked))
    return out
"""


@pytest.mark.parametrize("asserts, expected", [
    ("", ["ASC207"]),  # a token row times a size the name says nothing of
    ("    assert n_picked <= 16\n", []),  # at most 2**20 rows of 16: below 2**31
    ("    assert n_picked <= 1 << 20\n", ["ASC207"]),  # a bound this loose says nothing
])
def test_the_int32_rules_read_an_asserted_factor(asserts, expected):
    assert codes(PICKS.format(asserts=asserts), "ASC202", "ASC207") == expected


STATES = """\
import torch
import triton
import triton.language as tl

@triton.jit
def chunk_state(h_ptr, o_ptr, T, H, K, V, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr):
    i_t = tl.program_id(0)
    i_bh = tl.program_id(1)
    i_b = i_bh // H
    i_h = i_bh % H
    NT = tl.cdiv(T, BT)
    base = ((i_b * NT + i_t) * H + i_h) * K * V
    offs = tl.arange(0, BK)[:, None] * V + tl.arange(0, BV)[None, :]
    tl.store(o_ptr + base + offs, tl.load(h_ptr + base + offs) * 2)

def states(k, v):
    B, T, H, K = k.shape
    V = v.shape[-1]
{asserts}    NT = triton.cdiv(T, 64)
    h = k.new_empty(B, NT, H, K, V)
    o = torch.empty_like(h)
    chunk_state[(NT, B * H)](h, o, T, H, K, V, BT=64, BK=triton.next_power_of_2(K), BV=triton.next_power_of_2(V))
    return o
"""


@pytest.mark.parametrize("asserts", ["", "    assert K <= 256\n", "    assert K <= 256 and V <= 256\n"])
def test_an_asserted_head_dim_is_still_a_per_token_size_of_a_large_tensor(asserts):
    # every chunk state of every head: 2**20 tokens / 64 x 32 heads x 256 x 256 still passes 2**31
    assert codes(STATES.format(asserts=asserts), "ASC202") == ["ASC202"]
