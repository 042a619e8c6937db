"""ASC101 on dispatchers: a launch in a branch the NPU never takes is not reported, whatever spelling the device
test uses; a dict of launch keywords whose launch lies outside the linted tree is reported where the dict spells the
keyword, in NPU code."""

from __future__ import annotations

import libcst as cst
import pytest

from ascendlint.analysis.npu_reach import npu_value
from tests.helpers import fix, lint

HEADER = """\
import torch
import torch_npu
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    pass

"""


@pytest.mark.parametrize("test, value", [
    ("x.device.type in ('cuda', 'hip')", False), ("x.device.type not in ('cuda',)", True),
    ("x.device.type in ('npu', 'cuda')", True), ("'npu' in str(x.device)", True), ("'npu' not in str(x.device)", False),
    ("'cuda' in str(x.device)", False), ("device == 'npu:0'", True), ("device_type != 'npu'", False),
    ("torch.npu.is_available()", True), ("torch.cuda.is_available()", False), ("is_torch_npu_available()", True),
    ("is_npu_available()", True), ("HAS_NPU", True), ("not is_npu_device(x)", False),
    ("current_platform.is_rocm()", False), ("current_platform.is_cuda_alike()", False),
    ("x.device.type in ('cpu', 'cuda')", None), ("x.device.type == 'cpu'", None), ("x.dtype == 'npu'", None),
])
def test_device_tests_read_on_the_npu(test, value):
    assert npu_value(cst.parse_expression(test)) is value


@pytest.mark.parametrize("guard", [
    "    if x.device.type not in ('npu',):\n        return scale[(1,)](x, 1, BLOCK=64, num_warps=8)\n",
    "    if 'npu' not in str(x.device):\n        return scale[(1,)](x, 1, BLOCK=64, num_warps=8)\n",
    "    if x.device.type in ('cuda', 'hip'):\n        scale[(1,)](x, 1, BLOCK=64, num_warps=8)\n",
    "    if torch.npu.is_available():\n        return torch_npu.npu_scale(x)\n"
    "    scale[(1,)](x, 1, BLOCK=64, num_warps=8)\n",
    "    if is_torch_npu_available():\n        return torch_npu.npu_scale(x)\n"
    "    scale[(1,)](x, 1, BLOCK=64, num_warps=8)\n",
])
def test_the_gpu_path_of_a_dispatcher_is_not_reported(guard):
    assert lint(HEADER + "def run(x):\n" + guard, "ASC101") == []


def test_the_npu_path_of_the_same_dispatcher_is_still_reported():
    source = HEADER + (
        "def run(x):\n    if x.device.type in ('cuda', 'hip'):\n        return scale[(1,)](x, 1, BLOCK=64)\n"
        "    scale[(1,)](x, 1, BLOCK=64, num_stages=2)\n"
    )
    assert [d.message.split("`")[1] for d in lint(source, "ASC101")] == ["num_stages"]


OUTSIDE = HEADER + """\
from kernel_runtime import launch

def run(x):
    constexpr_kwargs = {"BLOCK": 1024, "num_warps": 4, "num_stages": 2}
    return launch(scale, (1,), (x, 1), constexpr_kwargs)
"""


def test_a_launch_keyword_dict_whose_launch_is_outside_the_tree_is_reported_where_it_spells_the_keyword():
    found = lint(OUTSIDE, "ASC101")
    assert sorted(d.message.split("`")[1] for d in found) == ["num_stages", "num_warps"]
    row = OUTSIDE.splitlines().index('    constexpr_kwargs = {"BLOCK": 1024, "num_warps": 4, "num_stages": 2}') + 1
    assert {d.location.row for d in found} == {row}


def test_the_dict_fix_removes_the_entries():
    assert '{"BLOCK": 1024}' in fix(OUTSIDE, "ASC101").text


def test_dict_call_spelling_is_reported_too():
    source = HEADER + "def run(x):\n    opts = dict(BLOCK=64, num_warps=4)\n    return launch(scale, opts)\n"
    assert [d.code for d in lint(source, "ASC101")] == ["ASC101"]


def test_a_dict_passed_to_a_launch_in_the_tree_is_reported_once():
    source = HEADER + "def run(x):\n    opts = {'BLOCK': 64, 'num_warps': 4}\n    scale[(1,)](x, 1, **opts)\n"
    assert len(lint(source, "ASC101")) == 1


def test_a_dict_for_a_launch_the_npu_never_reaches_is_not_reported():
    source = HEADER + (
        "def run(x):\n    opts = {'BLOCK': 64, 'num_warps': 4}\n    if x.is_cuda:\n"
        "        scale[(1,)](x, 1, **opts)\n    else:\n        torch_npu.npu_scale(x)\n"
    )
    assert lint(source, "ASC101") == []


def test_a_dict_in_the_gpu_branch_of_a_dispatcher_is_not_reported():
    source = HEADER + (
        "def run(x):\n    if x.device.type == 'cuda':\n        return launch(scale, {'BLOCK': 64, 'num_warps': 8})\n"
        "    return torch_npu.npu_scale(x)\n"
    )
    assert lint(source, "ASC101") == []


def test_a_dict_whose_entry_the_launch_reads_is_left_to_the_launch_keyword():
    source = HEADER + (
        "def run(x):\n    cfg = {'BLOCK': 64, 'num_warps': 4}\n"
        "    scale[(1,)](x, 1, BLOCK=cfg['BLOCK'], num_warps=cfg['num_warps'])\n"
    )
    assert len(lint(source, "ASC101")) == 1


def test_a_cuda_only_module_reports_no_dict():
    source = (
        "import torch\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n\n"
        "def run(x):\n    assert x.is_cuda\n    return launch(k, {'BLOCK': 64, 'num_warps': 4})\n"
    )
    assert lint(source, "ASC101") == []
