"""CUDA-only modules (RULES.md, "What counts as kernel code"): recognised from GPU-only evidence with no NPU evidence
anywhere in the module, decided once per module by the engine; Ascend rules report nothing there, tool rules
still run, and one setting turns it off."""

from __future__ import annotations

import json
import textwrap

import pytest

from ascendlint.linter import engine
from ascendlint.analysis.platform import classify
from ascendlint.catalog.registry import all_rules

KERNEL = """
import torch
import triton
import triton.language as tl

@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

def run(n):
    x = {make}
    add_one[(triton.cdiv(n, 128),)](x, n, BLOCK=128, num_warps=4)
"""


def module(make: str = "torch.empty(n)", extra: str = "") -> str:
    return textwrap.dedent(KERNEL).replace("{make}", make) + textwrap.dedent(extra)


GPU_ONLY = {
    "cuda device keyword": module('torch.empty(n, device="cuda")'),
    "numbered cuda device": module('torch.empty(n, device="cuda:4")'),
    "f-string cuda device": module('torch.empty(n, device=f"cuda:{n % 8}")'),
    "torch.device": module('torch.empty(n, device=torch.device("cuda"))'),
    ".cuda()": module("torch.empty(n).cuda()"),
    "torch.cuda": module("torch.empty(n)", "\ndef sync():\n    torch.cuda.synchronize()\n"),
    "is_cuda assert": module("torch.empty(n)", "\ndef check(x):\n    assert x.is_cuda\n"),
    "libdevice from the CUDA path": module("torch.empty(n)", "\nfrom triton.language.extra.cuda import libdevice\n"),
    "tl.extra.cuda": module("torch.empty(n)", "\n@triton.jit\ndef f(x):\n    return tl.extra.cuda.libdevice.exp(x)\n"),
    "inline PTX": module("torch.empty(n)", '''
        @triton.jit
        def to_half(x):
            return tl.inline_asm_elementwise("cvt.rn.f16.f32 $0, $1;", "=h,r", [x], dtype=tl.float16,
                                             is_pure=True, pack=1)
        '''),
    "inline PTX through a name": module("torch.empty(n)", '''
        ASM = "mov.b32 $0, $1;"

        @triton.jit
        def ident(x):
            return tl.inline_asm_elementwise(ASM, "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
        '''),
    "AMD: torch.version.hip": module("torch.empty(n)", "\nHIP = torch.version.hip is not None\n"),
    "AMD: triton_dist hip extra": module("torch.empty(n)",
                                         "\nfrom triton_dist.language.extra.hip.language_extra import tid\n"),
    "AMD: is_hip()": module("torch.empty(n)", "\nfrom .utils import is_hip\nUSE = is_hip()\n"),
}

NPU_TOO = {
    "torch_npu import": module('torch.empty(n, device="cuda")', "\nimport torch_npu\n"),
    "npu device": module('torch.empty(n, device="cuda")', '\ndef other(n):\n    return torch.empty(n, device="npu:0")\n'),
    ".npu()": module("torch.empty(n).cuda()", "\ndef other(x):\n    return x.npu()\n"),
    "torch.npu": module("torch.empty(n).cuda()", "\ndef sync():\n    torch.npu.synchronize()\n"),
    "is_npu": module("torch.empty(n).cuda()", "\ndef check(x):\n    return x.is_npu\n"),
    "cann extension": module('torch.empty(n, device="cuda")', "\nimport triton.language.extra.cann.extension as ext\n"),
    "ascend extra": module('torch.empty(n, device="cuda")', "\nfrom triton.language.extra.ascend import libdevice\n"),
    "triton_dist Ascend module": module(
        'torch.empty(n, device="cuda")', "\nfrom triton_dist.language.extra.ascend import libaclshmem_device\n"),
    "vector core count": module('torch.empty(n, device="cuda")', '''
        def cores():
            return triton.runtime.driver.active.utils.get_device_properties(0)["num_vectorcore"]
        '''),
    "core count helper": module('torch.empty(n, device="cuda")', "\nfrom .utils import get_vectorcore_num\n"),
}


@pytest.mark.parametrize("name", GPU_ONLY)
def test_gpu_only_evidence_makes_a_module_cuda_only(name):
    found = classify(GPU_ONLY[name], "pkg/kernels.py")
    assert found.cuda_only and found.gpu, name
    assert "no NPU evidence" in found.reason()


@pytest.mark.parametrize("name", NPU_TOO)
def test_any_npu_evidence_makes_it_ascend_code(name):
    found = classify(NPU_TOO[name], "pkg/kernels.py")
    assert found.gpu and found.npu and not found.cuda_only, name


@pytest.mark.parametrize("folder", ["_ascend", "vllm_ascend", "backends/triton_ascend", "npu", "sgl-kernel-npu"])
def test_an_npu_folder_on_the_path_is_npu_evidence(folder):
    found = classify(GPU_ONLY["is_cuda assert"], f"src/{folder}/kernels.py")
    assert not found.cuda_only and found.npu and found.npu[0].line is None


@pytest.mark.parametrize("folder", ["kernels/nvidia", "kernels/amd", "cuda", "ops/rocm"])
def test_a_gpu_backend_folder_is_gpu_evidence(folder):
    found = classify(module(), f"pkg/{folder}/kernels.py")  # the module itself names no device
    assert found.cuda_only and found.gpu[0].line is None
    assert not classify(module(), f"pkg/{folder}/_ascend/kernels.py").cuda_only  # an NPU folder wins


def test_the_file_name_and_unrelated_folders_are_not_evidence():
    assert classify(GPU_ONLY["is_cuda assert"], "ascend_docs_npu.py").cuda_only  # a file name, not a folder
    assert classify(GPU_ONLY["is_cuda assert"], "benchmarks/gpu/kernels.py").cuda_only
    assert classify(GPU_ONLY["is_cuda assert"], "ascendant/kernels.py").cuda_only  # "ascend" must be a word


def test_comments_and_docstrings_are_not_evidence():
    text = module("torch.empty(n)", '''
        def note():
            """Runs on cuda; never selected on the npu (see torch_npu)."""
            return 0  # device="npu" would be wrong here, is_npu too
        ''')
    assert not classify(text, "k.py").gpu and not classify(text, "k.py").npu
    gpu = text + 'DEVICE = "cuda"\n'
    assert classify(gpu, "k.py").cuda_only  # the docstring's "npu" does not save it


def test_no_evidence_either_way_is_ascend_code():
    found = classify(module(), "k.py")
    assert not found.cuda_only and not found.gpu
    assert not classify(module("torch.empty(n)", '\nNAME = "ship relationship"\n'), "k.py").cuda_only


def test_inline_asm_that_is_not_gpu_assembly_is_not_evidence():
    text = module("torch.empty(n)", '''
        @triton.jit
        def f(x, asm_text: tl.constexpr):
            return tl.inline_asm_elementwise(asm_text, "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
        ''')
    assert not classify(text, "k.py").cuda_only


def test_a_module_that_does_not_parse_is_not_cuda_only():
    assert not classify('x = torch.empty(1, device="cuda")\ndef (:\n', "k.py").cuda_only


# -- the engine ---------------------------------------------------------------------------------------------------
RULES = list(all_rules())


def codes(text: str, **kwargs) -> list[str]:
    return [d.code for d in engine.lint_text(text, "bench/kernels.py", RULES, **kwargs)]


def test_ascend_rules_report_nothing_in_a_cuda_only_module():
    gpu = GPU_ONLY["numbered cuda device"]
    assert codes(module()) == ["ASC101"]  # the same module without the CUDA device is reported
    assert codes(gpu) == []
    assert codes(gpu, lint_cuda_only=True) == ["ASC101"]


def test_a_dispatcher_that_shows_both_is_linted_as_usual():
    assert codes(NPU_TOO["torch_npu import"]) == ["ASC101"]


def test_the_path_decides_with_tree_path():
    gpu = GPU_ONLY["is_cuda assert"]
    assert codes(gpu) == []
    assert codes(gpu, tree_path="ops/_ascend/kernels.py") == ["ASC101"]


def test_tool_rules_still_apply_in_a_cuda_only_module():
    broken = 'import torch\nx = torch.empty(1, device="cuda")\ndef (:\n    triton\n'
    assert codes(broken) == ["ASC001"]
    noqa_for_other_tools = GPU_ONLY["cuda device keyword"].replace("num_warps=4)", "num_warps=4)  # noqa: ASC101")
    assert codes(noqa_for_other_tools) == []  # a suppression of a rule that did not run is not stale
    tool_noqa = GPU_ONLY["cuda device keyword"] + "y = 1  # noqa: ASC001\n"
    assert codes(tool_noqa) == ["ASC003"]  # ASC001 ran and suppressed nothing


# -- the command line ---------------------------------------------------------------------------------------------
def test_show_files_and_verbose_say_which_files_and_why(cli, write, tmp_path):
    write("bench/gpu.py", GPU_ONLY["numbered cuda device"])
    write("ops/npu.py", module())
    write("ops/dispatch.py", NPU_TOO["torch_npu import"])
    listed = cli("check", ".", "--show-files", cwd=tmp_path)
    assert listed.returncode == 0
    lines = dict((line.split("  ", 1) + [""])[:2] for line in listed.stdout.splitlines())
    assert set(lines) == {"bench/gpu.py", "ops/npu.py", "ops/dispatch.py"}
    assert 'the device `"cuda:4"`' in lines["bench/gpu.py"] and "Ascend rules skipped" in lines["bench/gpu.py"]
    assert lines["ops/npu.py"] == "" and lines["ops/dispatch.py"] == ""

    run = cli("check", ".", "--no-cache", "--format", "json", "-v", cwd=tmp_path)
    found = {d["filename"] for d in json.loads(run.stdout)}
    assert found == {"ops/npu.py", "ops/dispatch.py"}
    notes = [line for line in run.stderr.splitlines() if line.startswith("note: ")]
    assert notes[0].startswith("note: bench/gpu.py: CUDA-only module") and "(line 11)" in notes[0]
    assert notes[-1] == "note: 1 of 3 files treated as CUDA-only"
    quiet = cli("check", ".", "--no-cache", "--format", "json", cwd=tmp_path)
    assert "note:" not in quiet.stderr


def test_one_setting_turns_it_off(cli, write, tmp_path):
    write("bench/gpu.py", GPU_ONLY["numbered cuda device"])
    assert cli("check", ".", "--no-cache", cwd=tmp_path).returncode == 0
    flag = cli("check", ".", "--no-cache", "--lint-cuda-only", "--format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(flag.stdout)] == ["ASC101"]
    write("ascendlint.toml", "lint-cuda-only = true\n")
    configured = cli("check", ".", "--format", "json", cwd=tmp_path)  # the cache must not answer for the old setting
    assert [d["code"] for d in json.loads(configured.stdout)] == ["ASC101"]
    assert "  (" not in cli("check", ".", "--show-files", cwd=tmp_path).stdout
    assert "lint-cuda-only = true" in cli("check", ".", "--show-settings", cwd=tmp_path).stdout
    overridden = cli("check", ".", "--no-lint-cuda-only", "--format", "json", cwd=tmp_path)
    assert json.loads(overridden.stdout) == []
    write("ascendlint.toml", 'lint-cuda-only = "yes"\n')
    bad = cli("check", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "`lint-cuda-only` must be true or false" in bad.stderr


# -- a module that only CUDA-only modules import ------------------------------------------------------------------
HELPER = """
import triton
import triton.language as tl

@triton.jit
def backward(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run_backward(x, n):
    backward[(triton.cdiv(n, 128),)](x, n, BLOCK=128, num_warps=4)
"""
GPU_FORWARD = GPU_ONLY["is_cuda assert"] + "\nfrom .helper import run_backward\n"
NPU_FORWARD = NPU_TOO["torch_npu import"] + "\nfrom .helper import run_backward\n"


def _findings(cli, tmp_path, *extra):
    run = cli("check", ".", "--no-cache", "--format", "json", *extra, cwd=tmp_path)
    return sorted({d["filename"] for d in json.loads(run.stdout)}), run


def test_a_module_only_cuda_only_modules_import_is_cuda_only_too(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/helper.py", HELPER)
    write("pkg/gpu.py", GPU_FORWARD)
    files, run = _findings(cli, tmp_path, "-v")
    assert files == [], run.stderr
    assert "note: pkg/helper.py: CUDA-only module: imported only by CUDA-only modules (`pkg/gpu.py`)" in run.stderr
    listed = cli("check", ".", "--show-files", cwd=tmp_path).stdout
    assert "pkg/helper.py  (CUDA-only module: imported only by" in listed
    alone = cli("check", "pkg/helper.py", "--no-cache", "--format", "json", cwd=tmp_path)
    assert [d["code"] for d in json.loads(alone.stdout)] == ["ASC101"]  # linted alone, nothing says so
    assert _findings(cli, tmp_path, "--lint-cuda-only")[0] == ["pkg/gpu.py", "pkg/helper.py"]


def test_an_npu_importer_or_evidence_of_its_own_keeps_it_linted(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/helper.py", HELPER)
    write("pkg/gpu.py", GPU_FORWARD)
    write("pkg/npu.py", NPU_FORWARD)
    assert _findings(cli, tmp_path)[0] == ["pkg/helper.py", "pkg/npu.py"]
    (tmp_path / "pkg" / "npu.py").unlink()
    write("pkg/helper.py", HELPER + "\nimport torch_npu\n")
    assert _findings(cli, tmp_path)[0] == ["pkg/helper.py"]


def test_it_follows_a_chain_of_such_modules(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/base.py", HELPER)
    write("pkg/helper.py", HELPER.replace("def backward", "def backward2").replace("backward[", "backward2[")
          + "\nfrom .base import run_backward as run_base\n")
    write("pkg/gpu.py", GPU_FORWARD)
    assert _findings(cli, tmp_path)[0] == []
