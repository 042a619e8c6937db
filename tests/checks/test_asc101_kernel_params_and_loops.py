"""ASC101 beyond the launch keywords it was written for (issue 27 item 5, RULES.md ASC101):

- a kernel that declares its own `num_warps` parameter takes `num_warps=8` at the launch as an argument: no
  finding, and above all no fix that would leave a required argument missing (in the module, or imported from
  another linted module);
- AMD/NVIDIA backend modules are not Ascend code: nothing reported, nothing fixed;
- `num_stages=` on `tl.range` is reported and removed; the probe below shows why: triton-ascend 3.2.0 writes the
  loop attribute into TTIR and its lowering drops it (the Linalg with and without it is the same).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.helpers import fix, lint

OWN_PARAM = """
import torch
import triton
import triton.language as tl

@triton.jit
def bincount(x_ptr, out_ptr, n, num_warps: tl.constexpr):
    lanes = tl.program_id(0) * num_warps * 32 + tl.arange(0, num_warps * 32)
    tl.atomic_add(out_ptr + tl.load(x_ptr + lanes, mask=lanes < n), 1, mask=lanes < n)

def run(x, out, num_warps=8):
    bincount[(16,)](x, out, x.numel(), num_warps=num_warps)
    bincount[(16,)](x, out, x.numel(), num_warps=num_warps, num_stages=2)
"""


def test_a_kernel_parameter_named_num_warps_is_an_argument_not_a_launch_option():
    found = lint(OWN_PARAM, "ASC101")
    assert [(d.location.row, d.message.split("`")[1]) for d in found] == [(13, "num_stages")]
    fixed = fix(OWN_PARAM, "ASC101").text
    assert "bincount[(16,)](x, out, x.numel(), num_warps=num_warps)\n" in fixed
    assert fixed.count("num_warps=num_warps") == 2  # the required argument stays in both launches


def test_an_imported_kernel_that_declares_num_warps_keeps_it(cli, write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/kernels.py", OWN_PARAM.split("def run")[0])
    write("pkg/host.py", """
        import triton
        from .kernels import bincount

        def run(x, out):
            bincount[(16,)](x, out, x.numel(), num_warps=8)
        """)
    result = cli("check", "pkg", "--no-cache", "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout) == [], result.stderr


AMD_MODULE = """
import torch
import triton
import triton.language as tl
from triton_dist.language.extra.hip.language_extra import tid

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run(x):
    scale[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256, num_warps=8, num_stages=2)
"""


def test_gpu_backend_modules_are_neither_reported_nor_fixed():
    assert lint(AMD_MODULE) == []
    assert fix(AMD_MODULE).text == textwrap.dedent(AMD_MODULE)
    nvidia = AMD_MODULE.replace("from triton_dist.language.extra.hip.language_extra import tid",
                                "from triton.language.extra.cuda import libdevice")
    assert lint(nvidia) == [] and fix(nvidia).text == textwrap.dedent(nvidia)
    npu = AMD_MODULE.replace("from triton_dist.language.extra.hip.language_extra import tid", "import torch_npu")
    assert [d.code for d in lint(npu, "ASC101")] == ["ASC101", "ASC101"]


LOOP = """
import triton
import triton.language as tl

@triton.jit
def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in tl.range(0, n, BLOCK{stages}):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr + tl.arange(0, BLOCK), acc)
"""


def test_num_stages_on_tl_range_is_reported_and_removed():
    staged = LOOP.replace("{stages}", ", num_stages=3")
    (finding,) = lint(staged, "ASC101")
    assert "tl.range" in finding.message and finding.location.row == 8
    assert fix(staged, "ASC101").text == textwrap.dedent(LOOP.replace("{stages}", ""))
    plain_range = staged.replace("tl.range(", "range(")
    assert lint(plain_range, "ASC101") == []  # Python's range takes no such keyword: not a Triton loop option


_PROBE = r'''
import importlib.util, json, re, sys
sys.path.insert(0, sys.argv[1])
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from tests.fixes.offline_frontend import lower_to_ttir

spec = importlib.util.spec_from_file_location("probe_kernels", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
target = GPUTarget("npu", "Ascend910B1", 0)
out = {}
for name in ("staged", "plain"):
    src = ASTSource(fn=getattr(module, name), signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32",
                    "BLOCK": "constexpr"}, constants={"BLOCK": 128})
    ttir, stages, metadata = lower_to_ttir(src, target)
    linalg = str(stages["ttadapter"](ttir, metadata))
    out[name] = {"ttir_stages": "tt.num_stages" in str(ttir),
                 "linalg": re.sub(r"loc\([^)]*\)|#loc\d*( = .*)?", "", linalg).replace("@staged", "@k")
                 .replace("@plain", "@k")}
print(json.dumps(out))
'''


def test_probe_triton_ascend_drops_the_loop_attribute(tmp_path):
    pytest.importorskip("triton")
    pytest.importorskip("torch")
    kernels = tmp_path / "probe_kernels.py"
    staged = textwrap.dedent(LOOP).replace("{stages}", ", num_stages=3")
    plain = textwrap.dedent(LOOP).replace("{stages}", "").replace("def row_sum", "def plain")
    kernels.write_text(staged.replace("def row_sum", "def staged") + "\n" + plain.split("\n", 3)[3], encoding="utf-8")
    script = tmp_path / "probe.py"
    script.write_text(_PROBE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "cache")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    run = subprocess.run([sys.executable, str(script), repo, str(kernels)], capture_output=True, text=True, env=env,
                         timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["staged"]["ttir_stages"] and not out["plain"]["ttir_stages"]  # the frontend records it ...
    assert "num_stages" not in out["staged"]["linalg"]
    assert out["staged"]["linalg"] == out["plain"]["linalg"]  # ... and the lowering leaves no trace of it
