"""Compile the single-device reference kernels with triton-ascend's real launcher and compiler, without an NPU.

A child process calls each module's host launcher ``run(...)`` on CPU tensors with a host-only driver
that reports an Ascend 910B1 target. triton-ascend's own binder specialises the arguments (None
pointers, ints equal to 1, ``do_not_specialize``), checks the keywords and the grid, then the patched
compile step lowers the kernel through the frontend to TTIR and through ``triton-adapter-opt`` to
Linalg; only the binary stage, which needs CANN, is skipped and nothing is executed.

The child is needed because ``@triton.jit`` must see TRITON_INTERPRET unset, and interpreted launches
elsewhere in the test session leave ``triton.language`` patched for the interpreter. Run as a script
(``python test_offline_compile.py OUT.json``) it writes ``{launch: {"compiles": [...], "stdout": ...,
"error": ...}}``.
"""

import contextlib
import functools
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascendlint.compiler import missing
from ascendlint.compiler.bisheng import compile_linalg
from ascendlint.compiler.jobs import LAUNCH_OPTIONS, compiler_flags
from tests.fixes.offline_frontend import HostOnlyDriver, lower_to_ttir

REPO_ROOT = Path(__file__).resolve().parents[2]
TARGET_ARCH = "Ascend910B1"
CONV_WIDTH = 4
CPU_CORES = 4  # reference_kernels._cores.CPU_EMULATED_CORES, the grid `run` picks on a CPU tensor


def _launches() -> dict:
    """launch name -> a zero-argument call of one module's ``run``; child process only."""
    import torch

    from reference_kernels import (
        causal_conv1d,
        chunked_linear_attention,
        matmul_epilogue,
    )

    def attention(dtype, cu_seqlens=None):
        tokens = 70 if cu_seqlens is not None else 40
        batch = 1 if cu_seqlens is not None else 2
        q, k = (torch.randn(batch, tokens, 2, 32, dtype=dtype) for _ in range(2))
        v = torch.randn(batch, tokens, 2, 64, dtype=dtype)
        offsets = None if cu_seqlens is None else torch.tensor(cu_seqlens)
        return lambda: chunked_linear_attention.run(q, k, v, cu_seqlens=offsets, chunk_size=32)

    x32, x16 = torch.randn(2, 200, 96), torch.randn(1, 130, 256, dtype=torch.float16)
    return {
        "conv_fp32_bias_silu": lambda: causal_conv1d.run(
            x32, torch.randn(96, CONV_WIDTH), torch.randn(96), activation="silu"
        ),
        "conv_fp16_without_bias": lambda: causal_conv1d.run(x16, torch.randn(256, CONV_WIDTH, dtype=torch.float16)),
        "conv_single_channel": lambda: causal_conv1d.run(torch.randn(1, 70, 1), torch.randn(1, CONV_WIDTH)),
        "matmul_fp32_bias_silu": lambda: matmul_epilogue.run(
            torch.randn(100, 300), torch.randn(300, 130), torch.randn(130), activation="silu"
        ),
        "matmul_fp16_relu": lambda: matmul_epilogue.run(
            torch.randn(64, 256, dtype=torch.float16), torch.randn(256, 256, dtype=torch.float16), activation="relu"
        ),
        "matmul_single_column": lambda: matmul_epilogue.run(torch.randn(40, 64), torch.randn(64, 1)),
        "attention_fixed_fp16": attention(torch.float16),
        "attention_varlen_fp32": attention(torch.float32, cu_seqlens=[0, 5, 37, 70]),
    }


class _LoweredKernel:
    """What the launcher expects back from compile; launching it records the grid and does nothing."""

    function = None
    packed_metadata = None

    def __init__(self, record: dict):
        self.record = record

    def launch_metadata(self, *args):
        return None

    def _init_handles(self):
        pass

    def run(self, grid_0, grid_1, grid_2, *rest):
        self.record["grid"] = [grid_0, grid_1, grid_2]


def _lower_to_linalg(src, target, options, records: list) -> _LoweredKernel:
    """Stand-in for triton's compile: the TTIR and Linalg stages only, recorded for the tests."""
    ttir, stages, metadata = lower_to_ttir(src, target, options)
    record = {
        "kernel": src.fn.__name__,
        "signature": dict(src.signature),
        "constants": {name: repr(value) for name, value in src.constants.items()},
        "ttir": str(ttir),
        "linalg": str(stages["ttadapter"](ttir, metadata)),
    }
    if not missing():  # the NPU compiler itself, with the options the launcher passes
        stated = {name: (options or {}).get(name) for name in LAUNCH_OPTIONS}
        flags = compiler_flags(target.arch, {k: v for k, v in stated.items() if v is not None})
        record["bisheng"] = compile_linalg(record["linalg"], flags, target.arch, timeout=120).as_json()
    records.append(record)
    return _LoweredKernel(record)


def _compile_all(out_path: str) -> None:
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction

    target = GPUTarget("npu", TARGET_ARCH, 0)
    driver.set_active(HostOnlyDriver(target))
    torch.manual_seed(0)
    results = {}
    for name, call in _launches().items():
        records: list = []
        for module_name in ("causal_conv1d", "matmul_epilogue", "chunked_linear_attention"):
            module = sys.modules[f"reference_kernels.{module_name}"]
            for kernel in vars(module).values():
                if isinstance(kernel, JITFunction):
                    kernel.cache.clear()
                    kernel.create_binder(make_backend(target))
                    kernel.compile = functools.partial(_lower_to_linalg, records=records)
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                call()
            error = None
        except Exception as exc:  # noqa: BLE001 - reported per launch by the tests, with the message
            error = f"{type(exc).__name__}: {exc}"
        results[name] = {"compiles": records, "stdout": stdout.getvalue(), "error": error}
    Path(out_path).write_text(json.dumps(results))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("triton-ascend or torch is not installed (the 'kernels' extra)")
    out_path = tmp_path_factory.mktemp("offline_compile") / "ir.json"
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(out_path.parent / "triton_cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, __file__, str(out_path)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out_path.read_text())


def compiles_of(compiled: dict, launch: str) -> list[dict]:
    result = compiled[launch]
    assert result["error"] is None, f"{launch} failed: {result['error']}"
    assert result["compiles"], f"{launch} compiled nothing"
    return result["compiles"]


def count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


LAUNCH_NAMES = [
    "conv_fp32_bias_silu",
    "conv_fp16_without_bias",
    "conv_single_channel",
    "matmul_fp32_bias_silu",
    "matmul_fp16_relu",
    "matmul_single_column",
    "attention_fixed_fp16",
    "attention_varlen_fp32",
]
pytestmark = pytest.mark.kernels


@pytest.mark.parametrize("launch", LAUNCH_NAMES)
def test_every_launch_lowers_to_linalg_with_no_triton_ops_left(compiled, launch):
    for record in compiles_of(compiled, launch):
        assert f"tt.func public @{record['kernel']}" in record["ttir"]
        assert f"func.func @{record['kernel']}" in record["linalg"]
        assert count(r"\btt\.(load|store|dot|make_tensor_ptr|addptr)\b", record["linalg"]) == 0


@pytest.mark.parametrize("launch", LAUNCH_NAMES)
def test_every_launch_reaches_the_npu_compilers_last_step(compiled, launch):
    """BiShengIR plans every buffer and stops only at CANN's external step: no overflow, no compile error."""
    if missing():
        pytest.skip(f"the NPU compiler is not installed: {missing()}")
    for record in compiles_of(compiled, launch):
        verdict = record["bisheng"]
        assert verdict["status"] == "fits", (record["kernel"], record["constants"], verdict)
        assert verdict["scopes"] and all(s["status"] == "success" for s in verdict["scopes"])


@pytest.mark.parametrize("launch", LAUNCH_NAMES)
def test_every_launch_is_a_core_grid_with_a_task_loop(compiled, launch):
    for record in compiles_of(compiled, launch):
        assert record["grid"] == [CPU_CORES, 1, 1]
        assert "tt.get_num_programs" in record["ttir"]
        assert re.search(r"scf\.for %\w+ = %\w+ to %\w+ step %\w+", record["ttir"]), "no task loop with a runtime step"


@pytest.mark.parametrize("launch", LAUNCH_NAMES)
def test_launcher_prints_no_warning_about_ignored_tuning_args(compiled, launch):
    compiles_of(compiled, launch)
    assert "DO NOT tune" not in compiled[launch]["stdout"]


@pytest.mark.parametrize("launch", LAUNCH_NAMES)
def test_runtime_extents_stay_runtime_arguments(compiled, launch):
    for record in compiles_of(compiled, launch):
        int_args = {name for name, kind in record["signature"].items() if kind == "i32"}
        assert {"n_tasks"} <= int_args
        assert not int_args & set(record["constants"]), "an int argument was specialised into a constant"


@pytest.mark.parametrize(
    ("launch", "n_tensors"),
    [("conv_fp32_bias_silu", 2), ("attention_fixed_fp16", 4), ("attention_varlen_fp32", 4)],
)
def test_per_task_base_pointers_take_an_int64_offset(compiled, launch, n_tensors):
    for record in compiles_of(compiled, launch):
        widened = re.findall(r"tt\.addptr %arg(\d+), %\w+ : !tt\.ptr<\w+>, i64", record["ttir"])
        assert len(set(widened)) == n_tensors


def test_conv_edge_rows_are_widened_before_the_row_stride(compiled):
    edge = compiles_of(compiled, "conv_fp32_bias_silu")[1]["ttir"]
    assert re.search(r"tt\.addptr %\w+, %\w+ : tensor<\d+x1x!tt\.ptr<f32>>, tensor<\d+x1xi64>", edge)


def test_conv_launches_interior_and_edge_tiles_as_two_constexpr_modes(compiled):
    modes = [record["constants"]["EDGE_MODE"] for record in compiles_of(compiled, "conv_fp32_bias_silu")]
    assert modes == ["False", "True"]


def test_conv_interior_mode_moves_x_and_y_by_block_pointer_only(compiled):
    interior = compiles_of(compiled, "conv_fp32_bias_silu")[0]["ttir"]
    # a block pointer per tap for x and for the weight row, one for the output tile
    assert count(r"tt\.make_tensor_ptr", interior) == 2 * CONV_WIDTH + 1
    assert count(r"tt\.load %\w+, %\w+", interior) == 1  # the bias, the only masked load left


def test_conv_edge_mode_moves_x_and_y_by_masked_access_only(compiled):
    edge = compiles_of(compiled, "conv_fp32_bias_silu")[1]["ttir"]
    assert count(r"tt\.make_tensor_ptr", edge) == CONV_WIDTH  # weight rows only
    assert count(r"tt\.load %\w+, %\w+", edge) == CONV_WIDTH + 1  # masked taps plus the bias
    assert re.search(r"tt\.store %\w+, %\w+, %\w+", edge), "the edge store should be masked"


def test_conv_without_bias_passes_a_constexpr_none_and_compiles_no_bias_load(compiled):
    for record in compiles_of(compiled, "conv_fp16_without_bias"):
        assert record["constants"]["bias"] == "None"
        assert count(r"tt\.load %\w+, %\w+", record["ttir"]) == (
            CONV_WIDTH if record["constants"]["EDGE_MODE"] == "True" else 0
        )


@pytest.mark.parametrize(
    ("launch", "epilogue_op"),
    [("matmul_fp32_bias_silu", r"math\.exp"), ("matmul_fp16_relu", r"arith\.max\w*f")],
)
def test_matmul_lowers_to_one_linalg_matmul_and_its_epilogue(compiled, launch, epilogue_op):
    (record,) = compiles_of(compiled, launch)
    assert count(r"linalg\.matmul", record["linalg"]) == 1
    assert re.search(epilogue_op, record["linalg"])


@pytest.mark.parametrize("launch", ["matmul_fp32_bias_silu", "matmul_fp16_relu"])
def test_matmul_inner_tiles_span_512_bytes(compiled, launch):
    (record,) = compiles_of(compiled, launch)
    element_bytes = 2 if "fp16" in record["signature"]["a"] else 4
    assert int(record["constants"]["BK"]) * element_bytes == 512
    assert int(record["constants"]["BN"]) * element_bytes == 512


@pytest.mark.parametrize("launch", ["attention_fixed_fp16", "attention_varlen_fp32"])
def test_attention_copy_of_the_reused_lhs_feeds_a_linalg_matmul(compiled, launch):
    (record,) = compiles_of(compiled, launch)
    linalg = record["linalg"]
    assert count(r"linalg\.matmul", linalg) == 4
    copies = set(re.findall(r"(%\w+) = arith\.addf", linalg))
    lhs_operands = set(re.findall(r"linalg\.matmul[^\n]*ins\((%\w+),", linalg))
    assert copies & lhs_operands, "no matmul takes the `+ 0.0` copy as its lhs"


def test_attention_varlen_loads_offsets_as_int64_and_narrows_only_the_length(compiled):
    (record,) = compiles_of(compiled, "attention_varlen_fp32")
    assert record["signature"]["cu_seqlens"] == "*i64"
    assert count(r"tt\.load %\w+ : !tt\.ptr<i64>", record["ttir"]) == 2
    assert count(r"arith\.trunci %\w+ : i64 to i32", record["ttir"]) == 1


if __name__ == "__main__":
    _compile_all(sys.argv[1])
