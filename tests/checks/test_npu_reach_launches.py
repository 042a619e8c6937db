"""Launches the host code never reaches on an NPU are not Ascend launches: ASC105, ASC110 and ASC101's launch
keywords stay quiet there (a module-level rebinding of the launcher on NPU, a branch false on NPU or an exit taken
on NPU before the launch, a guard on CUDA tensors), and still report a launch the NPU reaches or may reach."""

from __future__ import annotations

import pytest

from ascendlint.analysis.npu_reach import npu_value
from tests.helpers import lint

import libcst as cst

HEADER = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    pass

@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pass

"""

# one launch per rule: a whole-tensor grid (ASC105), GEMM tiles (ASC110), a launch keyword (ASC101)
LAUNCHES = """
    n = x.numel()
    scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
    M, K = mat1.shape
    _, N = mat2.shape
    matmul[lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)](x, x, x, M, N)
    scale[(1,)](x, 1, BLOCK=64, num_warps=4)
"""


def _body(indent: str) -> str:
    return "".join(indent + line[4:] + "\n" if line else "\n" for line in LAUNCHES.strip("\n").split("\n"))


NOT_REACHED = {
    "module-level rebinding of the launcher on NPU": (
        "def launcher(x, mat1, mat2):\n" + _body("    ")
        + "\nif current_platform.is_npu():\n    from .npu_ops import native_scale\n    launcher = native_scale\n"
    ),
    "module-level import of the NPU launcher under the launcher's name": (
        "def launcher(x, mat1, mat2):\n" + _body("    ")
        + "\nif IS_NPU:\n    from .npu_ops import npu_scale as launcher\n"
    ),
    "a branch false on NPU": "_is_npu = is_npu()\n\ndef run(x, mat1, mat2):\n    if not _is_npu:\n" + _body("        "),
    "the else of an NPU test": (
        "def run(x, mat1, mat2):\n    if is_npu():\n        return torch_npu.npu_scale(x)\n    else:\n" + _body("        ")
    ),
    "an early exit taken on NPU": (
        "def run(x, mat1, mat2):\n    if x.device.type == \"npu\":\n        return torch_npu.npu_scale(x)\n" + _body("    ")
    ),
    "a one-line exit through a module name assigned from the test": (
        "ON_ASCEND = current_platform.is_npu()\n\ndef run(x, mat1, mat2):\n    if ON_ASCEND: return torch_npu.npu_scale(x)\n"
        + _body("    ")
    ),
    "a guard on CUDA tensors": (
        "def run(x, mat1, mat2, y):\n    if x.is_cuda and y.is_cuda and x.dim() == 2:\n" + _body("        ")
        + "    else:\n        return torch.mul(x, 2)\n"
    ),
    "a raise unless the tensor is on CUDA": (
        "def run(x, mat1, mat2):\n    if not x.is_cuda:\n        raise RuntimeError(\"CUDA only\")\n" + _body("    ")
    ),
    "an assert that the tensor is on CUDA": "def run(x, mat1, mat2):\n    assert x.is_cuda\n" + _body("    "),
    "an exit through a host name assigned from a CUDA test": (
        "def run(x, mat1, mat2, force_fallback=False):\n    use_triton = not force_fallback and x.is_cuda\n"
        "    if not use_triton:\n        return torch.mul(x, 2)\n" + _body("    ")
    ),
    "an exit through a module function that answers a CUDA test": (
        "def can_use_triton(x, y):\n    if not triton_available():\n        return False\n"
        "    return bool(x.is_cuda and y.dtype == x.dtype)\n\n"
        "def run(x, mat1, mat2):\n    if not can_use_triton(x, mat1):\n        return torch.mul(x, 2)\n" + _body("    ")
    ),
    "a host name assigned from bool() of a CUDA test": (
        "def run(x, mat1, mat2):\n    supported = bool(x.dim() == 2 and x.is_cuda)\n    if supported:\n"
        + _body("        ") + "    else:\n        return torch.mul(x, 2)\n"
    ),
}

REACHED = {
    "a module function with one return that may be True on NPU": (
        "def can_use_triton(x):\n    if x.is_cuda:\n        return True\n    return x.dim() == 2\n\n"
        "def run(x, mat1, mat2):\n    if not can_use_triton(x):\n        return torch.mul(x, 2)\n" + _body("    ")
    ),
    "a launch under an NPU test": "_is_npu = is_npu()\n\ndef run(x, mat1, mat2):\n    if _is_npu:\n" + _body("        "),
    "a launch under an unknown test": (
        "def run(x, mat1, mat2, use_native):\n    if use_native:\n        return torch_npu.npu_scale(x)\n" + _body("    ")
    ),
    "a launch under an unknown test combined with an NPU one": (
        "def run(x, mat1, mat2, small):\n    if not is_npu() or small:\n" + _body("        ")
    ),
    "an is_cuda test in a function that does not launch": (
        "def to_host(x):\n    if not x.is_cuda:\n        raise RuntimeError(\"CUDA only\")\n    return x.cpu()\n\n"
        "def run(x, mat1, mat2):\n" + _body("    ")
    ),
    "a host name assigned from a CUDA test and rebound": (
        "def run(x, mat1, mat2, always):\n    use_triton = x.is_cuda\n    if always:\n        use_triton = True\n"
        "    if not use_triton:\n        return torch.mul(x, 2)\n" + _body("    ")
    ),
    "a parameter named like a module-level NPU test": (
        "ON_ASCEND = is_npu()\n\ndef run(x, mat1, mat2, ON_ASCEND=False):\n    if ON_ASCEND:\n"
        "        return torch_npu.npu_scale(x)\n" + _body("    ")
    ),
    "a registered launcher rebound on NPU": (
        "@torch.library.custom_op(\"demo::launcher\", mutates_args=())\ndef launcher(x, mat1, mat2):\n"
        + _body("    ") + "\nif is_npu():\n    launcher = native_scale\n"
    ),
    "the launcher rebound under an unknown test": (
        "def launcher(x, mat1, mat2):\n" + _body("    ") + "\nif use_native:\n    launcher = native_scale\n"
    ),
    "the launcher rebound on CUDA": (
        "def launcher(x, mat1, mat2):\n" + _body("    ") + "\nif torch.cuda.is_available() and not is_npu():\n"
        "    launcher = cuda_scale\n"
    ),
}


def _codes(source: str) -> list[str]:
    return sorted(d.code for d in lint(HEADER + source, "ASC101", "ASC105", "ASC110"))


@pytest.mark.parametrize("source", NOT_REACHED.values(), ids=NOT_REACHED.keys())
def test_launch_not_reached_on_npu_is_not_reported(source):
    assert _codes(source) == []


@pytest.mark.parametrize("source", REACHED.values(), ids=REACHED.keys())
def test_launch_reached_or_maybe_reached_on_npu_is_reported(source):
    assert _codes(source) == ["ASC101", "ASC105", "ASC110"]


def test_autotune_config_keywords_stay_reported_in_an_unreached_launcher():
    source = (
        "configs = [triton.Config({\"BLOCK\": 128}, num_warps=8)]\n\n"
        "def run(x, mat1, mat2):\n    if not is_npu():\n        scale[(1,)](x, 1, BLOCK=64, num_warps=4)\n"
    )
    found = lint(HEADER + source, "ASC101")
    assert [d.location.row for d in found] == [HEADER.count("\n") + 1]


@pytest.mark.parametrize(
    "test, value",
    [
        ("is_npu()", True), ("_is_npu", True), ("IS_NPU", True), ("current_platform.is_npu()", True),
        ("x.is_npu", True), ("x.device.type == 'npu'", True), ("x.device.type != 'npu'", False),
        ("x.is_cuda", False), ("x.device.type == 'cuda'", False), ("'cuda' == x.device.type", False),
        ("not x.is_cuda", True), ("x.is_cuda and flag", False), ("x.is_cuda or flag", None),
        ("is_npu() or flag", True), ("is_npu() and flag", None), ("flag", None), ("x.device.type == 'cpu'", None),
    ],
)
def test_platform_tests_are_three_valued_on_npu(test, value):
    assert npu_value(cst.parse_expression(test)) is value
