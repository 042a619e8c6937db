"""What the compile requests assume about a kernel's arguments, from the linted text alone.

Each case is a kind of kernel the corpus holds whose verdict our own assumption decided: a pointer read only through
a local name, a pointer whose values index another tensor, a block size capped by a module constant or a host helper,
a jit helper that returns a value, a runtime-sized tile refused by the frontend only at sizes the sweep assumed.
"""

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from ascendlint.compiler import configs, missing, outcomes
from ascendlint.compiler import verdict as v

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"
needs_compiler = pytest.mark.skipif(missing() is not None, reason=f"no compiler: {missing()}")


def _facts(body: str) -> ModuleFacts:
    module = cst.parse_module(HEADER + textwrap.dedent(body))
    return ModuleFacts(module, NodeIndex(module))


def _params(request) -> dict[str, dict]:
    return {p["name"]: p for p in request.job.params}


ALIASED = """
@triton.jit
def scale(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x_ptrs = x + offs
    y_ptrs = y + offs
    tl.store(y_ptrs, tl.load(x_ptrs, mask=offs < n) * 2, mask=offs < n)


def run(x, y):
    scale[(4,)](x, y, x.numel(), BLOCK=1024)
"""


def test_a_pointer_read_through_a_local_name_is_a_pointer():
    (request,) = configs.requests(_facts(ALIASED), "Ascend910B1", "fp16")
    params = _params(request)
    assert (params["x"]["kind"], params["y"]["kind"], params["n"]["kind"]) == ("pointer", "pointer", "int")


GATHERED = """
@triton.jit
def pick(out, logits, tokens, slots_src, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_start = logits + row * stride
    token = tl.load(tokens + row)
    chosen = tl.load(row_start + token)
    bucket = tl.load(tokens + row + 1) // 32
    tl.store(out + row, chosen + bucket)
    slot = tl.load(slots_src + row)
    kept = tl.where(slot > 0, slot, 0)
    count_at = out + kept * stride
    tl.store(count_at, 1.0)


def run(out, logits, tokens):
    pick[(8,)](out, logits, tokens, tokens, logits.stride(0), BLOCK=16)
"""


def test_a_pointer_whose_values_index_another_tensor_holds_integers():
    (request,) = configs.requests(_facts(GATHERED), "Ascend910B1", "fp16")
    params = _params(request)
    assert params["tokens"]["dtype"] == "i32"
    assert params["slots_src"]["dtype"] == "i32"  # its value offsets an address bound to a name first
    assert params["logits"]["dtype"] == "fp16" and request.assumed["logits"] == "fp16"


CAPPED = """
MAX_BLOCK = 1024


def _block_for(n):
    return min(triton.next_power_of_2(n), MAX_BLOCK)


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run(x, y):
    n = x.numel()
    copy[(1,)](x, y, n, BLOCK=min(triton.next_power_of_2(n), MAX_BLOCK))
    block = _block_for(n)
    copy[(1,)](x, y, n, BLOCK=block)
"""


def test_a_block_capped_by_a_module_constant_or_a_host_helper_is_compiled_at_the_cap():
    found = configs.requests(_facts(CAPPED), "Ascend910B1", "fp16")
    assert [(r.runtime, r.values.get("BLOCK")) for r in found] == [(None, 1024), (None, 1024)]


HELPER = """
@triton.jit
def softplus(x, beta):
    return tl.log(1 + tl.exp(x * beta)) / beta
"""


def test_a_jit_function_that_returns_a_value_and_is_never_launched_is_not_compiled_alone():
    assert configs.requests(_facts(HELPER), "Ascend910B1", "fp16") == []


@needs_compiler
def test_the_aliased_pointer_kernel_compiles():
    (outcome,) = outcomes.outcomes(_facts(ALIASED), ("Ascend910B1",), "fp16", 65536)
    assert outcome.verdict.status == v.FITS, outcome.verdict.message


WIDE = """
@triton.jit
def rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, 64)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < 64) & (c < n)
    tl.store(y_ptr + r * n + c, tl.load(x_ptr + r * n + c, mask=mask), mask=mask)


def run(x, y):
    n = x.shape[1]
    rows[(1,)](x, y, n, BLOCK=triton.next_power_of_2(n))
"""


@needs_compiler
def test_a_runtime_tile_the_frontend_refuses_only_at_large_sizes_is_searched_down_to_where_it_starts():
    # at the sweep's limit the 64 x 65536 tile passes the frontend's 2**20 elements: refused there, compiled below
    (outcome,) = outcomes.outcomes(_facts(WIDE), ("Ascend910B1",), "fp16", 65536)
    assert outcome.request.runtime == "BLOCK"
    assert outcome.verdict.status in (v.OVERFLOW, v.ERROR)
    assert outcome.overflow_from is not None and 16 < outcome.overflow_from < 65536
