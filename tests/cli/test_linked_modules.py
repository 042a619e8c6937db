"""A module that launches a kernel imported from another linted module is linted, although its text never spells
`triton` (found from the tree's import scan, not by widening the byte prefilter), and what a kernel does in its
own module (waiting on other programs) is known where another module launches it."""

from __future__ import annotations

import json

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""

OPS = """
from .kernels import add_kernel


def add(x, y, out):
    n = out.numel()
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024, num_warps=4, num_stages=3)
"""

WAITING = """
import triton
import triton.language as tl
from triton_dist.language.extra import libshmem_device


@triton.jit
def exchange(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    libshmem_device.barrier_all()
"""

LAUNCH_WAITING = """
from .comm import exchange


def run(x):
    exchange[((x.numel() + 1023) // 1024,)](x, x.numel(), BLOCK=1024)
"""


def _findings(cli, root, *args):
    result = cli("check", ".", "--format", "json", "--no-cache", *args, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["filename"].replace("\\", "/"), d["code"], d["location"]["row"]) for d in json.loads(result.stdout))


def test_a_module_launching_an_imported_kernel_is_linted(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/kernels.py", KERNELS)
    write("pkg/ops.py", OPS)
    assert _findings(cli, tmp_path) == [("pkg/ops.py", "ASC101", 6), ("pkg/ops.py", "ASC101", 6)]


def test_a_linked_module_is_fixed_too(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/kernels.py", KERNELS)
    ops = write("pkg/ops.py", OPS)
    result = cli("check", ".", "--fix", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "num_warps" not in ops.read_text() and "num_stages" not in ops.read_text()


def test_unrelated_modules_without_triton_stay_unparsed(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/kernels.py", KERNELS)
    write("pkg/other.py", "import os\n\nthis is not python(\n")  # would be ASC001 if it were parsed
    write("pkg/kernels_doc.py", "from os import path\n\nkernels = (\n")  # names the module but imports other
    assert _findings(cli, tmp_path) == []


def test_a_module_named_alone_is_still_skipped(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/kernels.py", KERNELS)
    write("pkg/ops.py", OPS)
    result = cli("check", "pkg/ops.py", "--format", "json", "--no-cache", cwd=tmp_path)
    assert json.loads(result.stdout) == []  # the kernel's module is not part of this run: no link is known


def test_asc408_when_the_waiting_kernel_lives_in_another_module(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/comm.py", WAITING)
    write("pkg/host.py", LAUNCH_WAITING)
    assert _findings(cli, tmp_path, "--select", "ASC408") == [("pkg/host.py", "ASC408", 5)]
    write("pkg/host.py", LAUNCH_WAITING.replace("((x.numel() + 1023) // 1024,)", "(get_aicore_num(),)"))
    assert _findings(cli, tmp_path, "--select", "ASC408") == []


def test_asc408_across_modules_from_the_cache(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/comm.py", WAITING)
    write("pkg/host.py", LAUNCH_WAITING.replace("from .comm", "import triton\nfrom .comm").replace(
        "    exchange", "    exchange"))
    for _ in range(2):  # cold, then warm: the summary keeps whether the kernel waits
        result = cli("check", ".", "--format", "json", "--select", "ASC408", cwd=tmp_path)
        assert [d["code"] for d in json.loads(result.stdout)] == ["ASC408"]
