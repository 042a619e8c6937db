"""Switches that used to silence rules without a word: a module treated as CUDA-only (said on standard error
without --verbose), and ruff's file-level exemption `# ascendlint: noqa[: CODES]` (honoured, not ignored)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import lint

CUDA_KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


def run(n):
    x = torch.empty(n, device="cuda")
    add_kernel[(n // 1024,)](x, n, BLOCK=1024, num_warps=4)
"""
LAUNCH = "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n    y = x.to(tl.int64)\n"


def test_a_cuda_only_module_is_named_on_stderr_without_verbose(cli, write, tmp_path):
    write("k.py", CUDA_KERNEL)
    result = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0
    assert "warning: k.py treated as CUDA-only" in result.stderr and '`"cuda"` (line 13)' in result.stderr
    assert "--lint-cuda-only" in result.stderr
    quiet = cli("check", "k.py", "--no-cache", "--quiet", cwd=tmp_path)
    assert quiet.stderr == ""
    linted = cli("check", "k.py", "--no-cache", "--lint-cuda-only", cwd=tmp_path)
    assert linted.returncode == 1 and "CUDA-only" not in linted.stderr


def test_no_word_when_no_module_is_cuda_only(cli, write, tmp_path):
    write("k.py", CUDA_KERNEL.replace('device="cuda"', 'device="npu"'))
    result = cli("check", "k.py", "--no-cache", cwd=tmp_path)
    assert result.returncode == 1 and "CUDA-only" not in result.stderr


@pytest.mark.parametrize("directive, left", [
    ("# ascendlint: noqa: ASC101", []),
    ("# ascendlint: noqa:ASC1", []),
    ("# ascendlint: noqa", []),
    ("# ASCENDLINT: NOQA: ASC101", []),
    ("# ascendlint: noqa: ASC2", ["ASC101"]),
])
def test_a_file_level_exemption_is_honoured_as_in_ruff(directive, left):
    code = f"{directive}\n{LAUNCH}"
    assert [d.code for d in lint(code, "ASC101")] == left


def test_a_file_level_exemption_inside_a_string_or_after_code_is_not_one():
    in_string = f'"""\n# ascendlint: noqa: ASC101\n"""\n{LAUNCH}'
    after_code = LAUNCH.replace("num_warps=4)", "num_warps=4)  # ascendlint: noqa: ASC2")
    assert [d.code for d in lint(in_string, "ASC101")] == ["ASC101"]
    assert [d.code for d in lint(after_code, "ASC101")] == ["ASC101"]


def test_ignore_noqa_overrides_a_file_level_exemption(cli, write, tmp_path):
    write("k.py", f"# ascendlint: noqa: ASC101\n{LAUNCH}")
    assert json.loads(cli("check", "k.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout) == []
    ignored = cli("check", "k.py", "--format", "json", "--no-cache", "--ignore-noqa", cwd=tmp_path)
    assert [d["code"] for d in json.loads(ignored.stdout)] == ["ASC101"]
