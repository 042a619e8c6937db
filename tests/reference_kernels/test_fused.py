"""The fused distributed reference kernels: results on the multi-rank CPU emulator and lint.

Kernel tests run every rank's programs through ``ascendlint.emulate.World`` with the full device model
(stores visible only after a fence, dead waits dropped, two vector sub-blocks, bf16 computed in fp32) and
hazards on, and compare with a torch reference at world sizes 1 to 4 on grids of 2 to 7 programs, in fp32,
fp16 and bf16, on shapes with tails in every tiled dimension and more rounds than buffer generations (so
slots are reused and credits must come back). These runs take the emulator's fixed schedule only, to keep the
many shapes and dtypes affordable; ``test_mutations.py`` runs every kernel under the default schedule
exploration at world sizes 2 and 4, where the protocol mistakes are caught.
"""

import importlib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# (world size, core grid): every size in 1, 2, 4; odd grids give producers and consumers unequal counts
WORLD_AND_CORES = ((1, 2), (1, 4), (2, 4), (2, 7), (3, 5), (4, 4), (4, 7))
LOW_PRECISION = ("float16", "bfloat16")
ONE_SCHEDULE = "fixed"  # the emulator's own order; the explored schedules run in test_mutations.py


@pytest.fixture(scope="module")
def emulate():
    """``ascendlint.emulate`` with its stand-ins installed: kernel modules may be imported afterwards."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture(scope="module")
def cases(emulate):
    return importlib.import_module("tests.reference_kernels.fused_cases")


@pytest.fixture(scope="module")
def kernels(emulate, cases):
    return {name: importlib.import_module(f"reference_kernels.{name}") for name in cases.FUSED_MODULES}


@pytest.mark.kernels
@pytest.mark.parametrize(("world_size", "n_cores"), WORLD_AND_CORES)
@pytest.mark.parametrize("name", ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all",
                                  "allgather_gemm_two_phase"))
def test_fused_kernel_matches_torch_and_returns_every_credit(emulate, cases, kernels, name, world_size, n_cores):
    if name == "allgather_gemm_two_phase" and (world_size, n_cores) not in ((1, 2), (2, 4), (4, 7)):
        pytest.skip("the barrier kernel has no roles to balance: three grids cover it")
    import torch

    torch.manual_seed(world_size * 100 + n_cores)
    world = emulate.World(world_size)
    case = cases.build(name, kernels[name], world, n_cores)
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    cases.assert_matches(case)
    cases.assert_every_slot_returned(case)


@pytest.mark.kernels
@pytest.mark.parametrize("world_size", (1, 2, 4))
@pytest.mark.parametrize("dtype_name", LOW_PRECISION)
@pytest.mark.parametrize("name", ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all",
                                  "allgather_gemm_two_phase"))
def test_fused_kernel_matches_torch_in_half_precision(emulate, cases, kernels, name, dtype_name, world_size):
    """fp16 and bf16 inputs and outputs, tails in every tiled dimension (M, N, K, the sequence and head dim)."""
    import torch

    torch.manual_seed(world_size)
    world = emulate.World(world_size)
    case = cases.build(name, kernels[name], world, 4, dtype=getattr(torch, dtype_name))
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    cases.assert_matches(case)
    cases.assert_every_slot_returned(case)


@pytest.mark.kernels
@pytest.mark.parametrize("world_size", (2, 4))
def test_two_phase_allgather_gemm_matches_torch_in_fp16_with_seed_sizes_scaled_down(emulate, cases, kernels,
                                                                                     world_size):
    """The tutorial's configuration (PVALUE 4, double buffers, copy tiles narrower than the GEMM tiles), scaled down:
    several iterations, a short last one, ranks that send by UDMA and programs that copy by MTE."""
    import torch

    torch.manual_seed(3)
    world = emulate.World(world_size)
    case = cases.build("allgather_gemm_two_phase", kernels["allgather_gemm_two_phase"], world, 3,
                       dtype=torch.float16, rows_per_rank=70, k=24, n=20, pvalue=4)
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    cases.assert_matches(case)


@pytest.mark.kernels
def test_two_phase_allgather_gemm_needs_its_second_vector_sub_block(emulate, cases, kernels):
    """With a single sub-block (sub_vec_id() always 0), sub-block 1's putmems never run: every peer's rows are
    missing from the product, and nothing else fails."""
    import torch

    torch.manual_seed(5)
    world = emulate.World(2)
    case = cases.build("allgather_gemm_two_phase", kernels["allgather_gemm_two_phase"], world, 4,
                       dtype=torch.float16)
    cases.launch(world, case, model=emulate.DeviceModel(vector_sub_blocks=1), schedules=ONE_SCHEDULE)
    assert len(cases.mismatches(case)) == 2


@pytest.mark.kernels
@pytest.mark.parametrize("name", ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all",
                                  "allgather_gemm_two_phase"))
def test_workspace_serves_a_second_launch_without_rezeroing(emulate, cases, kernels, name):
    import torch

    torch.manual_seed(7)
    world = emulate.World(2)
    case = cases.build(name, kernels[name], world, 4)
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    for out in case.outputs:
        out.fill_(float("nan"))
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    cases.assert_matches(case)


@pytest.mark.kernels
@pytest.mark.parametrize("name", ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all",
                                  "allgather_gemm_two_phase"))
def test_launch_arguments_reject_an_output_of_the_wrong_shape(emulate, cases, kernels, name):
    world = emulate.World(2)
    case = cases.build(name, kernels[name], world, 4)
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
        from reference_kernels._dist_common import RoleSplit

        RoleSplit.halves(6).check_grid(8)


@pytest.mark.kernels
def test_signal_slots_sit_on_their_own_64_byte_lines(emulate, cases, kernels):
    from reference_kernels._dist_common import SIGNAL_SLOT_STRIDE

    world = emulate.World(2)
    case = cases.build("gemm_allreduce", kernels["gemm_allreduce"], world, 4)
    cases.launch(world, case, schedules=ONE_SCHEDULE)
    assert SIGNAL_SLOT_STRIDE * case.signals[0].element_size() == 64
    _, constants = case.args_for_rank(0)
    assert constants["SLOT_STRIDE"] == SIGNAL_SLOT_STRIDE


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
    ws = mod.gemm_reducescatter_workspace(alloc, p, _npu_roles("cube"), dtype=torch.float16)
    alloc.barrier()
    got = mod.gemm_reducescatter_on_npu(a[rank].npu(), b[rank].npu(), ws, rank)
    return got, mod.gemm_reducescatter_reference(a, b)[rank]


def _npu_gemm_allreduce(mod, alloc, rank, p):
    import torch

    a = [torch.randn(1000, 384, dtype=torch.float16) for _ in range(p)]
    b = [torch.randn(384, 768, dtype=torch.float16) for _ in range(p)]
    ws = mod.gemm_allreduce_workspace(alloc, p, _npu_roles("cube"), dtype=torch.float16)
    alloc.barrier()
    return mod.gemm_allreduce_on_npu(a[rank].npu(), b[rank].npu(), ws, rank), mod.gemm_allreduce_reference(a, b)


def _npu_reverse_all2all(mod, alloc, rank, p):
    import torch

    x = [torch.randn(1000 * p, 4, 200, dtype=torch.float16) for _ in range(p)]
    ws = mod.reverse_all2all_workspace(alloc, p, 4, 200, torch.float16, _npu_roles("vector"))
    alloc.barrier()
    return mod.reverse_all2all_on_npu(x[rank].npu(), ws, rank), mod.reverse_all2all_reference(x)[rank]


def _npu_allgather_gemm_two_phase(mod, alloc, rank, p):
    import torch

    a = [torch.randn(1000, 512, dtype=torch.float16) for _ in range(p)]
    b = torch.randn(512, 768, dtype=torch.float16)
    ws = mod.allgather_gemm_two_phase_workspace(alloc, p, 512, torch.float16)
    alloc.barrier()
    return mod.allgather_gemm_two_phase_on_npu(a[rank].npu(), b.npu(), ws, rank), \
        mod.allgather_gemm_two_phase_reference(a, b)


NPU_RUNS = {
    "allgather_gemm": _npu_allgather_gemm,
    "gemm_reducescatter": _npu_gemm_reducescatter,
    "gemm_allreduce": _npu_gemm_allreduce,
    "reverse_all2all": _npu_reverse_all2all,
    "allgather_gemm_two_phase": _npu_allgather_gemm_two_phase,
}


@pytest.mark.npu
@pytest.mark.parametrize("name", sorted(NPU_RUNS))
def test_fused_kernel_on_npu_matches_torch(name):
    rank, world_size, device_id = _npu_rank_or_skip()
    import torch

    from reference_kernels._dist_common import ShmemAllocator

    torch.manual_seed(0)  # every rank draws every rank's inputs, so each can check its own output
    mod = importlib.import_module(f"reference_kernels.{name}")
    got, want = NPU_RUNS[name](mod, ShmemAllocator(rank, device_id), rank, world_size)
    torch.testing.assert_close(got.float().cpu(), want.float(), rtol=2e-2, atol=2e-2)


# --- static checks: no torch or triton needed --------------------------------------------------------


def _lint(path: Path) -> list:
    from ascendlint.linter.engine import lint_text
    from ascendlint.catalog.registry import all_rules

    return lint_text(path.read_text(), str(path), list(all_rules()))


@pytest.mark.parametrize("name", ("_dist_common", "allgather_gemm", "gemm_reducescatter", "gemm_allreduce",
                                  "reverse_all2all", "allgather_gemm_two_phase"))
def test_fused_reference_module_lints_clean(name):
    findings = _lint(REPO_ROOT / "reference_kernels" / f"{name}.py")
    assert [f"{d.code}:{d.location.row} {d.message}" for d in findings] == []
