"""The fused distributed reference kernels: results on the multi-rank CPU emulator, protocol bugs, lint.

Kernel tests run every rank's programs concurrently through ``ascendlint.emulate.World`` and compare
with a torch reference at world sizes 1 to 4 on grids of 2 to 7 programs, on shapes with tails in every
tiled dimension and more rounds than buffer generations (so slots are reused and credits must come back).
"""

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BAD_KERNELS_FILE = Path(__file__).with_name("bad_fused_kernels.py")
FUSED_MODULES = ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all")
# (world size, core grid): every size in 1, 2, 4; odd grids give producers and consumers unequal counts
WORLD_AND_CORES = ((1, 2), (1, 4), (2, 4), (2, 7), (3, 5), (4, 4), (4, 7))
HANG_TIMEOUT_SECONDS = 5.0
TOLERANCE = {"rtol": 1e-5, "atol": 1e-4}


@pytest.fixture(scope="module")
def emulate():
    """``ascendlint.emulate`` with its stand-ins installed: kernel modules may be imported afterwards."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture(scope="module")
def kernels(emulate):
    return {name: importlib.import_module(f"reference_kernels.{name}") for name in FUSED_MODULES}


@pytest.fixture(scope="module")
def bad_kernels(emulate):
    spec = importlib.util.spec_from_file_location("bad_fused_kernels", BAD_KERNELS_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class FusedCase:
    """One fused kernel wired for a world: workspace built, inputs drawn, ready to launch."""

    kernel: Callable
    n_cores: int
    args_for_rank: Callable[[int], tuple]
    outputs: list
    expected: list
    signals: list


def _allgather_gemm_case(mod, world, roles, kernel=None, rows_per_rank=40, k=24, n=20):
    import torch

    cfg = mod.AllGatherGemmConfig(block_m=16, block_n=16, block_k=16, copy_k=16, buffer_num=2)
    ws = mod.allgather_gemm_workspace(world, world.num_ranks, k, torch.float32, roles, cfg)
    a = [torch.randn(rows_per_rank, k) for _ in range(world.num_ranks)]
    b = torch.randn(k, n)
    c = [torch.full((world.num_ranks * rows_per_rank, n), float("nan")) for _ in range(world.num_ranks)]
    expected = [mod.allgather_gemm_reference(a, b)] * world.num_ranks
    return FusedCase(kernel or mod.allgather_gemm_kernel, roles.n_cores,
                     lambda r: mod.allgather_gemm_launch_args(r, a[r], b, c[r], ws), c, expected, ws.signals)


def _gemm_reducescatter_case(mod, world, roles, kernel=None, rows_per_rank=36, k=24, n=20):
    import torch

    cfg = mod.GemmReduceScatterConfig(block_m=16, block_n=16, block_k=16, buffer_num=2)
    ws = mod.gemm_reducescatter_workspace(world, world.num_ranks, roles, cfg)
    m = rows_per_rank * world.num_ranks
    a = [torch.randn(m, k) for _ in range(world.num_ranks)]
    b = [torch.randn(k, n) for _ in range(world.num_ranks)]
    out = [torch.full((rows_per_rank, n), float("nan")) for _ in range(world.num_ranks)]
    return FusedCase(kernel or mod.gemm_reducescatter_kernel, roles.n_cores,
                     lambda r: mod.gemm_reducescatter_launch_args(r, a[r], b[r], out[r], ws),
                     out, mod.gemm_reducescatter_reference(a, b), ws.signals)


def _gemm_allreduce_case(mod, world, roles, kernel=None, m=36, k=24, n=20):
    import torch

    cfg = mod.GemmAllReduceConfig(block_m=16, block_n=16, block_k=16, buffer_num=2)
    ws = mod.gemm_allreduce_workspace(world, world.num_ranks, roles, cfg)
    a = [torch.randn(m, k) for _ in range(world.num_ranks)]
    b = [torch.randn(k, n) for _ in range(world.num_ranks)]
    out = [torch.full((m, n), float("nan")) for _ in range(world.num_ranks)]
    expected = [mod.gemm_allreduce_reference(a, b)] * world.num_ranks
    return FusedCase(kernel or mod.gemm_allreduce_kernel, roles.n_cores,
                     lambda r: mod.gemm_allreduce_launch_args(r, a[r], b[r], out[r], ws), out, expected,
                     ws.signals)


def _reverse_all2all_case(mod, world, roles, kernel=None, seq_per_rank=20, heads_per_rank=2, head_dim=24):
    import torch

    cfg = mod.ReverseAll2AllConfig(block_s=8, block_d=16, buffer_num=2)
    p = world.num_ranks
    ws = mod.reverse_all2all_workspace(world, p, heads_per_rank, head_dim, torch.float32, roles, cfg)
    x = [torch.randn(seq_per_rank * p, heads_per_rank, head_dim) for _ in range(p)]
    y = [torch.full((seq_per_rank, p * heads_per_rank, head_dim), float("nan")) for _ in range(p)]
    return FusedCase(kernel or mod.reverse_all2all_kernel, roles.n_cores,
                     lambda r: mod.reverse_all2all_launch_args(r, x[r], y[r], ws), y,
                     mod.reverse_all2all_reference(x), ws.signals)


CASE_BUILDERS = {
    "allgather_gemm": _allgather_gemm_case,
    "gemm_reducescatter": _gemm_reducescatter_case,
    "gemm_allreduce": _gemm_allreduce_case,
    "reverse_all2all": _reverse_all2all_case,
}


def _roles(n_cores):
    from reference_kernels._dist_common import RoleSplit

    return RoleSplit.halves(n_cores)


def _launch(world, case, *, timeout=60.0):
    world.launch(case.kernel, (case.n_cores,), case.args_for_rank, hazards=True, timeout=timeout)


def _assert_matches_reference(case):
    import torch

    for rank, (got, want) in enumerate(zip(case.outputs, case.expected, strict=True)):
        torch.testing.assert_close(got, want.to(got.dtype), **TOLERANCE, msg=lambda m, rank=rank: f"rank {rank}: {m}")


def _assert_every_slot_returned(case):
    from reference_kernels._dist_common import check_signal_slots_returned

    for signals in case.signals:
        check_signal_slots_returned(signals)


@pytest.mark.kernels
@pytest.mark.parametrize(("world_size", "n_cores"), WORLD_AND_CORES)
@pytest.mark.parametrize("name", FUSED_MODULES)
def test_fused_kernel_matches_torch_and_returns_every_credit(emulate, kernels, name, world_size, n_cores):
    import torch

    torch.manual_seed(world_size * 100 + n_cores)
    world = emulate.World(world_size)
    case = CASE_BUILDERS[name](kernels[name], world, _roles(n_cores))
    _launch(world, case)
    _assert_matches_reference(case)
    _assert_every_slot_returned(case)


@pytest.mark.kernels
@pytest.mark.parametrize("name", FUSED_MODULES)
def test_workspace_serves_a_second_launch_without_rezeroing(emulate, kernels, name):
    import torch

    torch.manual_seed(7)
    world = emulate.World(2)
    case = CASE_BUILDERS[name](kernels[name], world, _roles(4))
    _launch(world, case)
    for out in case.outputs:
        out.fill_(float("nan"))
    _launch(world, case)
    _assert_matches_reference(case)


@pytest.mark.kernels
def test_missing_credit_return_is_invisible_while_no_ring_wraps(emulate, kernels, bad_kernels):
    # 2 producers x 2 generations hold all 4 tiles a rank sends (1 sequence block x 2 peers x 2 heads)
    world = emulate.World(2)
    case = _reverse_all2all_case(kernels["reverse_all2all"], world, _roles(4),
                                 kernel=bad_kernels.reverse_all2all_without_credit_kernel, seq_per_rank=8, head_dim=16)
    _launch(world, case, timeout=HANG_TIMEOUT_SECONDS)
    _assert_matches_reference(case)


@pytest.mark.kernels
def test_missing_credit_return_deadlocks_once_the_ring_wraps(emulate, kernels, bad_kernels):
    world = emulate.World(2)
    case = _reverse_all2all_case(kernels["reverse_all2all"], world, _roles(4),
                                 kernel=bad_kernels.reverse_all2all_without_credit_kernel)
    with pytest.raises(emulate.EmulatorHang) as hang:
        _launch(world, case, timeout=HANG_TIMEOUT_SECONDS)
    report = hang.value.report
    producer_wait = _line_of(BAD_KERNELS_FILE, "token = dl.wait(dl.symm_at(slot, dst_rank)", occurrence=0)
    assert f"bad_fused_kernels.py:{producer_wait} in reverse_all2all_without_credit_kernel" in report
    assert "to equal 0" in report
    # every slot still holds the id + 1 of the first tile it carried: nobody handed it back
    assert re.search(r"rank 0: \{0: \d+, 1: \d+", report), report
    assert re.search(r"rank 1: \{0: \d+, 1: \d+", report), report


@pytest.mark.kernels
def test_notify_loop_shorter_than_store_loop_leaves_rank_zero_waiting(emulate, kernels, bad_kernels):
    world = emulate.World(2)
    case = _gemm_allreduce_case(kernels["gemm_allreduce"], world, _roles(4),
                                kernel=bad_kernels.gemm_allreduce_short_notify_kernel)
    with pytest.raises(emulate.EmulatorHang) as hang:
        _launch(world, case, timeout=HANG_TIMEOUT_SECONDS)
    report = hang.value.report
    consumer_wait = _line_of(BAD_KERNELS_FILE, "token = dl.wait(slots, n_ranks", occurrence=0)
    stuck = [line for line in report.splitlines() if f"bad_fused_kernels.py:{consumer_wait} " in line]
    assert stuck, report
    assert all(line.strip().startswith("rank 0 ") for line in stuck), report
    assert "signal buffers" in report


@pytest.mark.kernels
@pytest.mark.parametrize("name", FUSED_MODULES)
def test_launch_arguments_reject_an_output_of_the_wrong_shape(emulate, kernels, name):
    world = emulate.World(2)
    case = CASE_BUILDERS[name](kernels[name], world, _roles(4))
    case.outputs[1].resize_(3, 3)
    with pytest.raises(ValueError, match="shapes do not match"):
        case.args_for_rank(1)


@pytest.mark.kernels
@pytest.mark.parametrize("n_cores", [0, 1])
def test_role_split_needs_a_producer_and_a_consumer(emulate, n_cores):
    from reference_kernels._dist_common import RoleSplit

    with pytest.raises(ValueError, match="at least 2 programs"):
        RoleSplit.halves(n_cores)


@pytest.mark.kernels
def test_workspace_refuses_a_grid_it_was_not_built_for(emulate):
    with pytest.raises(ValueError, match="built for a grid of 6 programs, not 8"):
        _roles(6).check_grid(8)


def _line_of(path: Path, fragment: str, occurrence: int) -> int:
    rows = [row for row, line in enumerate(path.read_text().splitlines(), start=1) if fragment in line]
    return rows[occurrence]


# --- real hardware: `torchrun --nproc-per-node P -m pytest -m npu ...`, one process per NPU ---------

NPU_HEAP_BYTES = 1 << 30


def _npu_rank_or_skip():
    """(rank, world size, device id) of this torchrun process with aclshmem up, or skip."""
    import os

    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        pytest.skip("needs one process per NPU (run under torchrun)")
    try:
        import shmem as ash
        import torch
        import torch_npu  # noqa: F401 - registers the npu device
    except Exception as exc:  # a broken CANN install raises more than ImportError
        pytest.skip(f"needs torch_npu and aclshmem: {exc}")
    if not torch.npu.is_available():
        pytest.skip("no Ascend NPU visible")
    import torch.distributed as dist

    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device_id = int(os.environ.get("LOCAL_RANK", rank))
    torch.npu.set_device(device_id)
    if not dist.is_initialized():
        dist.init_process_group("hccl", rank=rank, world_size=world_size)
        ash.aclshmem_init(rank, world_size, NPU_HEAP_BYTES)
    return rank, world_size, device_id


def _npu_roles(core_kind):
    """The role split of a grid over this NPU's cube or vector cores."""
    import torch

    from reference_kernels._cores import cube_core_count, vector_core_count
    from reference_kernels._dist_common import RoleSplit

    count = {"cube": cube_core_count, "vector": vector_core_count}[core_kind]
    return RoleSplit.halves(count(torch.device("npu", torch.npu.current_device())))


def _npu_allgather_gemm(mod, alloc, rank, p):
    import torch

    a = [torch.randn(1000, 512, dtype=torch.float16) for _ in range(p)]
    b = torch.randn(512, 768, dtype=torch.float16)
    ws = mod.allgather_gemm_workspace(alloc, p, 512, torch.float16, _npu_roles("cube"))
    alloc.barrier()
    return mod.allgather_gemm_on_npu(a[rank].npu(), b.npu(), ws, rank), mod.allgather_gemm_reference(a, b)


def _npu_gemm_reducescatter(mod, alloc, rank, p):
    import torch

    a = [torch.randn(1000 * p, 384, dtype=torch.float16) for _ in range(p)]
    b = [torch.randn(384, 768, dtype=torch.float16) for _ in range(p)]
    ws = mod.gemm_reducescatter_workspace(alloc, p, _npu_roles("cube"))
    alloc.barrier()
    got = mod.gemm_reducescatter_on_npu(a[rank].npu(), b[rank].npu(), ws, rank)
    return got, mod.gemm_reducescatter_reference(a, b)[rank]


def _npu_gemm_allreduce(mod, alloc, rank, p):
    import torch

    a = [torch.randn(1000, 384, dtype=torch.float16) for _ in range(p)]
    b = [torch.randn(384, 768, dtype=torch.float16) for _ in range(p)]
    ws = mod.gemm_allreduce_workspace(alloc, p, _npu_roles("cube"))
    alloc.barrier()
    return mod.gemm_allreduce_on_npu(a[rank].npu(), b[rank].npu(), ws, rank), mod.gemm_allreduce_reference(a, b)


def _npu_reverse_all2all(mod, alloc, rank, p):
    import torch

    x = [torch.randn(1000 * p, 4, 200, dtype=torch.float16) for _ in range(p)]
    ws = mod.reverse_all2all_workspace(alloc, p, 4, 200, torch.float16, _npu_roles("vector"))
    alloc.barrier()
    return mod.reverse_all2all_on_npu(x[rank].npu(), ws, rank), mod.reverse_all2all_reference(x)[rank]


NPU_RUNS = {
    "allgather_gemm": _npu_allgather_gemm,
    "gemm_reducescatter": _npu_gemm_reducescatter,
    "gemm_allreduce": _npu_gemm_allreduce,
    "reverse_all2all": _npu_reverse_all2all,
}


@pytest.mark.npu
@pytest.mark.parametrize("name", FUSED_MODULES)
def test_fused_kernel_on_npu_matches_torch(name):
    rank, world_size, device_id = _npu_rank_or_skip()
    import torch

    from reference_kernels._dist_common import ShmemAllocator

    torch.manual_seed(0)  # every rank draws every rank's inputs, so each can check its own output
    mod = importlib.import_module(f"reference_kernels.{name}")
    got, want = NPU_RUNS[name](mod, ShmemAllocator(rank, device_id), rank, world_size)
    torch.testing.assert_close(got.float().cpu(), want.float(), rtol=2e-2, atol=2e-2)


# --- static checks: no torch or triton needed --------------------------------------------------------


def _lint(path: Path, codes: tuple[str, ...] | None = None) -> list:
    from ascendlint.engine import lint_text
    from ascendlint.registry import all_rules

    rules = [rule for rule in all_rules() if codes is None or rule.code in codes]
    missing = set(codes or ()) - {rule.code for rule in rules}
    if missing:
        pytest.skip(f"rule(s) {sorted(missing)} not implemented")
    return lint_text(path.read_text(), str(path), rules)


@pytest.mark.parametrize(("code", "fragment", "occurrence"), [
    ("ASC402", "for peer in range(1, n_ranks):", 0),
    ("ASC404", "token = dl.wait(slot, 1, \"gpu\", \"acquire\", waitValue=work + 1)", 0),
])
def test_bad_fused_variant_is_flagged(code, fragment, occurrence):
    findings = _lint(BAD_KERNELS_FILE, (code,))
    rows = [d.location.row for d in findings if d.code == code]
    assert rows == [_line_of(BAD_KERNELS_FILE, fragment, occurrence)]


@pytest.mark.parametrize("name", ("_dist_common", *FUSED_MODULES))
def test_fused_reference_module_lints_clean(name):
    findings = _lint(REPO_ROOT / "reference_kernels" / f"{name}.py")
    assert [f"{d.code}:{d.location.row} {d.message}" for d in findings] == []
