"""ASC102 on jit helpers: a helper's parameter is what its callers pass (Triton specialises a helper on every
non-tensor argument and passes tensors as tensors), so a parameter annotated ``tl.constexpr`` that every call passes
a tensor is a tensor, and ``.to()`` on it compiles."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HELPER = """\
import triton
import triton.language as tl

@triton.jit
def blend(v, weight: tl.constexpr):
    return v * weight.to(tl.float32)

@triton.jit
def kernel(x_ptr, w_ptr, n, BLOCK: tl.constexpr, W: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
{calls}"""

CALLS = {
    "a loaded tensor": ("    tl.store(x_ptr + offs, blend(x, tl.load(w_ptr)), mask=offs < n)\n", []),
    "a runtime scalar by keyword": ("    tl.store(x_ptr + offs, blend(x, weight=n), mask=offs < n)\n", []),
    "a constexpr": ("    tl.store(x_ptr + offs, blend(x, W), mask=offs < n)\n", ["ASC102"]),
    "a literal in one call, a tensor in the other": (
        "    y = blend(x, tl.load(w_ptr))\n    tl.store(x_ptr + offs, blend(y, 2), mask=offs < n)\n", ["ASC102"]),
}


@pytest.mark.parametrize("calls, codes", CALLS.values(), ids=CALLS.keys())
def test_an_annotated_helper_parameter_is_what_the_calls_pass(calls, codes):
    assert [d.code for d in lint(HELPER.replace("{calls}", calls), "ASC102")] == codes


def test_an_annotated_helper_without_calls_in_the_module_keeps_its_annotation():
    source = HELPER.split("@triton.jit\ndef kernel")[0]
    assert [d.code for d in lint(source, "ASC102")] == ["ASC102"]
