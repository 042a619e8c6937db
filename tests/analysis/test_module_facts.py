"""Module facts: the import forms that make a function a kernel, and which kernels are only jit helpers."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex

KERNEL = """
@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
"""


def facts_of(code: str) -> ModuleFacts:
    module = cst.parse_module(textwrap.dedent(code).lstrip("\n"))
    return ModuleFacts(module, NodeIndex(module))


@pytest.mark.parametrize(
    "imports",
    [
        "import triton\nimport triton.language as tl\n",
        "from vllm.triton_utils import tl, triton\n",
        "from .triton_utils import tl, triton\n",
        "import triton\nfrom ..ops.triton_utils import tl\n",
    ],
)
def test_kernels_are_found_through_projects_that_reexport_triton_and_its_language(imports):
    facts = facts_of(imports + KERNEL)
    assert set(facts.kernels) == {"kernel"}
    assert facts.kernels["kernel"].constexpr == {"BLOCK"}
    assert facts.local_alias("tl", "tl") == "tl"


def test_a_reexported_name_from_triton_itself_keeps_its_real_module():
    facts = facts_of("from triton import language as tl\nfrom triton import jit\n")
    assert facts.aliases["tl"] == "triton.language"
    assert facts.aliases["jit"] == "triton.jit"


def test_other_relative_imports_bind_no_qualified_name():
    facts = facts_of("from .utils import prepare_chunk_indices\n")
    assert "prepare_chunk_indices" not in facts.aliases
    assert "prepare_chunk_indices" in facts.imported_names


def test_helpers_are_kernels_called_from_another_kernel_and_never_launched_here():
    facts = facts_of(
        """
        import triton
        import triton.language as tl

        @triton.jit
        def gate(x):
            return x.to(tl.float32)

        @triton.jit
        def scale(x):
            return x * 2

        @triton.jit
        def kernel(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, scale(gate(tl.load(x_ptr + offs))))

        def run(x):
            kernel[(1,)](x, BLOCK=16)
            scale[(1,)](x)
        """
    )
    assert facts.helpers == {"gate"}
