"""The single-device reference kernels against their torch references.

On CPU every launch goes through ``emulate.launch`` with ``hazards=True``: each program runs in its
own thread and every ``tl.dot`` clobbers its lhs afterwards, as Ascend may, so a kernel that passes
here neither depends on program order nor reads a dot's lhs again. The ``npu`` tests run the same
cases on torch_npu in a child process, where ``@triton.jit`` compiles for the device.
"""

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the reference kernels need torch (the 'kernels' extra)")
if importlib.util.find_spec("triton") is None:
    pytest.skip("triton-ascend is not installed (the 'kernels' extra)", allow_module_level=True)

from ascendlint import emulate

emulate.install_stand_ins()  # before any kernel module: @triton.jit must see interpreter mode

from reference_kernels import causal_conv1d, chunked_linear_attention, matmul_epilogue

pytestmark = pytest.mark.kernels

REPO_ROOT = Path(__file__).resolve().parents[2]
LAUNCH_TIMEOUT = 60.0
KERNEL_ATTRIBUTE = {
    causal_conv1d: "_causal_conv1d_kernel",
    matmul_epilogue: "_matmul_epilogue_kernel",
    chunked_linear_attention: "_chunked_linear_attention_kernel",
}
TOLERANCE = {torch.float32: 1e-4, torch.float16: 1e-2}
NPU_TOLERANCE = {torch.float32: 1e-3, torch.float16: 1e-2}


def _load_bad_kernels():
    spec = importlib.util.spec_from_file_location("bad_kernels", Path(__file__).with_name("bad_kernels.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bad_kernels = _load_bad_kernels()


class EmulatedKernel:
    """Takes a kernel's place in its module so the host launcher's ``kernel[grid](...)`` runs emulated."""

    def __init__(self, kernel, *, hazards: bool):
        self.kernel = kernel
        self.hazards = hazards

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            emulate.launch(self.kernel, grid, *args, hazards=self.hazards, timeout=LAUNCH_TIMEOUT, **kwargs)

        return launch


@pytest.fixture
def emulated(monkeypatch):
    """``route(module, kernel=None, hazards=True)``: send the module's launches through the emulator."""

    def route(module, *, kernel=None, hazards: bool = True):
        attribute = KERNEL_ATTRIBUTE[module]
        replacement = EmulatedKernel(kernel or getattr(module, attribute), hazards=hazards)
        monkeypatch.setattr(module, attribute, replacement)

    return route


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)


@dataclass(frozen=True)
class Case:
    """One call of a reference module: ``make()`` returns the (args, kwargs) of ``run``/``reference``."""

    module: object
    make: Callable[[], tuple[tuple, dict]]
    dtype: torch.dtype = torch.float32


def conv_case(batch, seq_len, dim, width, *, bias, activation=None, dtype=torch.float32, n_cores=None):
    def make():
        x = torch.randn(batch, seq_len, dim, dtype=dtype)
        weight = torch.randn(dim, width, dtype=dtype)
        b = torch.randn(dim, dtype=dtype) if bias else None
        return (x, weight, b), {"activation": activation, "n_cores": n_cores}

    return Case(causal_conv1d, make, dtype)


def matmul_case(m, n, k, *, bias, activation=None, dtype=torch.float32, n_cores=None):
    def make():
        a = torch.randn(m, k, dtype=dtype)
        b = torch.randn(k, n, dtype=dtype)
        c = torch.randn(n, dtype=dtype) if bias else None
        return (a, b, c), {"activation": activation, "n_cores": n_cores}

    return Case(matmul_epilogue, make, dtype)


def attention_case(
    batch,
    seq_len,
    heads,
    dim_k,
    dim_v,
    *,
    cu_seqlens=None,
    offsets_dtype=torch.int64,
    chunk_size=16,
    dtype=torch.float32,
    n_cores=None,
):
    def make():
        q = torch.randn(batch, seq_len, heads, dim_k, dtype=dtype)
        k = torch.randn(batch, seq_len, heads, dim_k, dtype=dtype)
        v = torch.randn(batch, seq_len, heads, dim_v, dtype=dtype)
        offsets = None if cu_seqlens is None else torch.tensor(cu_seqlens, dtype=offsets_dtype)
        return (q, k, v), {"cu_seqlens": offsets, "chunk_size": chunk_size, "n_cores": n_cores}

    return Case(chunked_linear_attention, make, dtype)


CONV_CASES = [
    pytest.param(conv_case(2, 37, 48, 4, bias=True, activation="silu"), id="ragged-single-tile"),
    pytest.param(conv_case(1, 64, 130, 3, bias=False), id="one-full-tile-ragged-channels"),
    pytest.param(conv_case(2, 200, 64, 4, bias=True), id="interior-and-ragged-tail"),
    pytest.param(conv_case(1, 192, 16, 1, bias=False, activation="silu", n_cores=1), id="width-1-one-core"),
    pytest.param(conv_case(3, 1, 8, 4, bias=True, n_cores=16), id="one-step-more-cores-than-tasks"),
    pytest.param(conv_case(2, 129, 96, 4, bias=True, dtype=torch.float16), id="fp16"),
]

MATMUL_CASES = [
    pytest.param(matmul_case(64, 128, 128, bias=True, activation="silu"), id="aligned-silu"),
    pytest.param(matmul_case(100, 70, 50, bias=False, activation="relu"), id="ragged-relu"),
    pytest.param(matmul_case(130, 200, 300, bias=True, n_cores=3), id="multi-k-step-three-cores"),
    pytest.param(matmul_case(1, 1, 1, bias=True, activation="relu"), id="scalar"),
    pytest.param(matmul_case(17, 257, 33, bias=False, dtype=torch.float16), id="fp16"),
]

ATTENTION_CASES = [
    pytest.param(attention_case(2, 37, 2, 32, 16), id="fixed-ragged-chunks"),
    pytest.param(attention_case(1, 64, 1, 64, 64, chunk_size=64), id="fixed-one-chunk"),
    pytest.param(attention_case(2, 100, 3, 16, 16, chunk_size=32, n_cores=5), id="fixed-five-cores"),
    pytest.param(attention_case(1, 70, 2, 24, 40, cu_seqlens=[0, 5, 37, 70]), id="varlen-int64-offsets"),
    pytest.param(
        attention_case(1, 53, 2, 16, 16, cu_seqlens=[0, 0, 20, 20, 53], offsets_dtype=torch.int32),
        id="varlen-int32-offsets-empty-sequences",
    ),
    pytest.param(attention_case(2, 40, 2, 32, 32, dtype=torch.float16), id="fixed-fp16"),
]

ALL_CASES = CONV_CASES + MATMUL_CASES + ATTENTION_CASES


def assert_matches_reference(case: Case, out: torch.Tensor, args: tuple, kwargs: dict, tolerances: dict) -> None:
    reference_kwargs = {key: value for key, value in kwargs.items() if key not in ("n_cores", "chunk_size")}
    expected = case.module.reference(*args, **reference_kwargs)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    tol = tolerances[case.dtype]
    torch.testing.assert_close(out.float(), expected.float(), atol=tol, rtol=tol)


@pytest.mark.parametrize("case", ALL_CASES)
def test_kernel_matches_torch_with_concurrent_programs_and_dot_hazards(emulated, case):
    emulated(case.module, hazards=True)
    args, kwargs = case.make()
    out = case.module.run(*args, **kwargs)
    assert_matches_reference(case, out, args, kwargs, TOLERANCE)


@pytest.mark.parametrize("case", [CONV_CASES[2], MATMUL_CASES[2], ATTENTION_CASES[3]])
def test_host_launcher_runs_unpatched_on_the_interpreter(case):
    args, kwargs = case.make()
    out = case.module.run(*args, **kwargs)
    assert_matches_reference(case, out, args, kwargs, TOLERANCE)


@pytest.mark.parametrize("seq_len", [1, 63, 64, 65, 128, 200, 256])
def test_conv_tile_plan_covers_every_time_tile_exactly_once(seq_len):
    tile = causal_conv1d.TIME_TILE
    tiles = [first + j * step for first, step, n in causal_conv1d._tile_plan(seq_len, tile) for j in range(n)]
    assert sorted(tiles) == list(range(-(-seq_len // tile)))


@pytest.mark.parametrize("seq_len", [1, 64, 65, 200])
def test_conv_interior_tiles_keep_their_causal_window_inside_the_sequence(seq_len):
    tile, width = causal_conv1d.TIME_TILE, causal_conv1d.TIME_TILE + 1
    first, step, n_tiles = causal_conv1d._tile_plan(seq_len, tile)[0]
    for i_t in (first + j * step for j in range(n_tiles)):
        assert i_t * tile - (width - 1) >= 0 and (i_t + 1) * tile <= seq_len


def test_conv_rejects_a_kernel_wider_than_the_time_tile_allows():
    x = torch.zeros(1, 8, 4)
    with pytest.raises(ValueError, match="taps"):
        causal_conv1d.run(x, torch.zeros(4, causal_conv1d.TIME_TILE + 2))


def test_matmul_rejects_mismatched_inner_dimensions():
    with pytest.raises(ValueError, match="inner dimensions"):
        matmul_epilogue.run(torch.zeros(4, 3), torch.zeros(5, 2))


def test_attention_varlen_of_equal_lengths_matches_the_fixed_length_batch(emulated):
    emulated(chunked_linear_attention, hazards=True)
    batch, seq_len, heads, dim = 3, 24, 2, 16
    q, k, v = (torch.randn(batch, seq_len, heads, dim) for _ in range(3))
    fixed = chunked_linear_attention.run(q, k, v, chunk_size=16)
    offsets = torch.arange(0, (batch + 1) * seq_len, seq_len)
    packed = [t.reshape(1, batch * seq_len, heads, dim) for t in (q, k, v)]
    varlen = chunked_linear_attention.run(*packed, cu_seqlens=offsets, chunk_size=16)
    torch.testing.assert_close(varlen.reshape(batch, seq_len, heads, dim), fixed, atol=1e-5, rtol=1e-5)


HAZARD_CASE = attention_case(1, 70, 2, 24, 40, cu_seqlens=[0, 5, 37, 70])


def test_reused_dot_lhs_turns_into_nan_under_hazard_emulation(emulated):
    emulated(chunked_linear_attention, kernel=bad_kernels.chunked_linear_attention_reusing_lhs_kernel, hazards=True)
    args, kwargs = HAZARD_CASE.make()
    out = chunked_linear_attention.run(*args, **kwargs)
    assert torch.isnan(out).any()


def test_reused_dot_lhs_is_only_wrong_because_of_the_hazard(emulated):
    emulated(chunked_linear_attention, kernel=bad_kernels.chunked_linear_attention_reusing_lhs_kernel, hazards=False)
    args, kwargs = HAZARD_CASE.make()
    out = chunked_linear_attention.run(*args, **kwargs)
    assert_matches_reference(HAZARD_CASE, out, args, kwargs, TOLERANCE)


def test_copied_dot_lhs_stays_correct_under_hazard_emulation(emulated):
    emulated(chunked_linear_attention, hazards=True)
    args, kwargs = HAZARD_CASE.make()
    out = chunked_linear_attention.run(*args, **kwargs)
    assert not torch.isnan(out).any()
    assert_matches_reference(HAZARD_CASE, out, args, kwargs, TOLERANCE)


# --- on a real Ascend NPU -------------------------------------------------------------------------

NPU_RUN = """
import sys, importlib, torch, torch_npu
module = importlib.import_module(sys.argv[1])
args, kwargs = torch.load(sys.argv[2])
on_npu = lambda t: t.to("npu") if isinstance(t, torch.Tensor) else t
out = module.run(*map(on_npu, args), **{key: on_npu(value) for key, value in kwargs.items()})
torch.npu.synchronize()
torch.save(out.cpu(), sys.argv[3])
"""
NPU_PROBE = "import torch, torch_npu; print(torch.npu.is_available() and torch.npu.device_count())"


def _npu_environment() -> dict:
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    # torch_npu is imported explicitly; autoloading it from `import torch` breaks hosts without CANN.
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def npu_environment() -> dict:
    if importlib.util.find_spec("torch_npu") is None:
        pytest.skip("no NPU: torch_npu is not installed")
    env = _npu_environment()
    probe = subprocess.run(
        [sys.executable, "-c", NPU_PROBE], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    if probe.returncode != 0:
        last_line = (probe.stderr.strip().splitlines() or ["unknown error"])[-1]
        pytest.skip(f"no NPU: torch_npu does not import ({last_line})")
    if probe.stdout.strip() in ("", "0", "False"):
        pytest.skip("no NPU: torch_npu imports but reports no available device")
    return env


@pytest.mark.npu
@pytest.mark.parametrize("case", ALL_CASES)
def test_kernel_matches_torch_on_npu(npu_environment, tmp_path, case):
    args, kwargs = case.make()
    if kwargs.get("n_cores") is not None:
        kwargs = {**kwargs, "n_cores": None}  # CPU core counts mean nothing on the device
    torch.save((args, kwargs), tmp_path / "inputs.pt")
    proc = subprocess.run(
        [sys.executable, "-c", NPU_RUN, case.module.__name__, str(tmp_path / "inputs.pt"), str(tmp_path / "out.pt")],
        cwd=REPO_ROOT,
        env=npu_environment,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = torch.load(tmp_path / "out.pt")
    assert_matches_reference(case, out, args, kwargs, NPU_TOLERANCE)
