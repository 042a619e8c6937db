"""The fused kernels wired for an emulated world: workspace built, inputs drawn, ready to launch and check.

Shared by the correctness tests (``test_fused.py``) and the mutation tests (``test_mutations.py``), which
launch the same cases with a kernel module whose source has been broken on purpose. Importing this module
needs torch; the kernel modules are passed in, so it can be imported before the emulator's stand-ins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

# Tolerances against the float32 torch reference, by output dtype: float32 as exact as accumulation order
# allows; float16 as the AllGather+GEMM tutorial checks it (rtol=atol=1e-3) after rounding the reference to the
# output dtype; bfloat16 one part in 2^6 of the output (8 significand bits), torch's own bfloat16 rtol.
TOLERANCES = {
    torch.float32: {"rtol": 1e-5, "atol": 1e-4},
    torch.float16: {"rtol": 1e-3, "atol": 1e-3},
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-2},
}


@dataclass
class FusedCase:
    """One fused kernel wired for a world."""

    kernel: Callable
    n_cores: int
    args_for_rank: Callable[[int], tuple]
    outputs: list
    expected: list
    signals: list


def allgather_gemm(mod, world, roles, dtype=torch.float32, rows_per_rank=40, k=24, n=20, buffer_num=2):
    cfg = mod.AllGatherGemmConfig(block_m=16, block_n=16, block_k=16, copy_k=16, buffer_num=buffer_num)
    ws = mod.allgather_gemm_workspace(world, world.num_ranks, k, dtype, roles, cfg)
    a = [torch.randn(rows_per_rank, k).to(dtype) for _ in range(world.num_ranks)]
    b = torch.randn(k, n).to(dtype)
    c = [torch.full((world.num_ranks * rows_per_rank, n), float("nan"), dtype=dtype) for _ in range(world.num_ranks)]
    expected = [mod.allgather_gemm_reference(a, b)] * world.num_ranks
    return FusedCase(mod.allgather_gemm_kernel, roles.n_cores,
                     lambda r: mod.allgather_gemm_launch_args(r, a[r], b, c[r], ws), c, expected, ws.signals)


def gemm_reducescatter(mod, world, roles, dtype=torch.float32, rows_per_rank=36, k=24, n=20):
    cfg = mod.GemmReduceScatterConfig(block_m=16, block_n=16, block_k=16, buffer_num=2)
    ws = mod.gemm_reducescatter_workspace(world, world.num_ranks, roles, cfg, dtype=dtype)
    m = rows_per_rank * world.num_ranks
    a = [torch.randn(m, k).to(dtype) for _ in range(world.num_ranks)]
    b = [torch.randn(k, n).to(dtype) for _ in range(world.num_ranks)]
    out = [torch.full((rows_per_rank, n), float("nan"), dtype=dtype) for _ in range(world.num_ranks)]
    return FusedCase(mod.gemm_reducescatter_kernel, roles.n_cores,
                     lambda r: mod.gemm_reducescatter_launch_args(r, a[r], b[r], out[r], ws),
                     out, mod.gemm_reducescatter_reference(a, b), ws.signals)


def gemm_allreduce(mod, world, roles, dtype=torch.float32, m=36, k=24, n=20):
    cfg = mod.GemmAllReduceConfig(block_m=16, block_n=16, block_k=16, buffer_num=2)
    ws = mod.gemm_allreduce_workspace(world, world.num_ranks, roles, cfg, dtype=dtype)
    a = [torch.randn(m, k).to(dtype) for _ in range(world.num_ranks)]
    b = [torch.randn(k, n).to(dtype) for _ in range(world.num_ranks)]
    out = [torch.full((m, n), float("nan"), dtype=dtype) for _ in range(world.num_ranks)]
    expected = [mod.gemm_allreduce_reference(a, b)] * world.num_ranks
    return FusedCase(mod.gemm_allreduce_kernel, roles.n_cores,
                     lambda r: mod.gemm_allreduce_launch_args(r, a[r], b[r], out[r], ws), out, expected, ws.signals)


def reverse_all2all(mod, world, roles, dtype=torch.float32, seq_per_rank=20, heads_per_rank=2, head_dim=24,
                    buffer_num=2):
    cfg = mod.ReverseAll2AllConfig(block_s=8, block_d=16, buffer_num=buffer_num)
    p = world.num_ranks
    ws = mod.reverse_all2all_workspace(world, p, heads_per_rank, head_dim, dtype, roles, cfg)
    x = [torch.randn(seq_per_rank * p, heads_per_rank, head_dim).to(dtype) for _ in range(p)]
    y = [torch.full((seq_per_rank, p * heads_per_rank, head_dim), float("nan"), dtype=dtype) for _ in range(p)]
    return FusedCase(mod.reverse_all2all_kernel, roles.n_cores,
                     lambda r: mod.reverse_all2all_launch_args(r, x[r], y[r], ws), y,
                     mod.reverse_all2all_reference(x), ws.signals)


def allgather_gemm_two_phase(mod, world, n_cores, dtype=torch.float32, rows_per_rank=40, k=24, n=20, pvalue=2,
                             buffer_num=2):
    cfg = mod.TwoPhaseConfig(block_m=16, block_n=16, block_k=16, copy_m=8, copy_k=16, pvalue=pvalue,
                             buffer_num=buffer_num, swizzle=2)
    ws = mod.allgather_gemm_two_phase_workspace(world, world.num_ranks, k, dtype, cfg)
    a = [torch.randn(rows_per_rank, k).to(dtype) for _ in range(world.num_ranks)]
    b = torch.randn(k, n).to(dtype)
    c = [torch.full((world.num_ranks * rows_per_rank, n), float("nan"), dtype=dtype) for _ in range(world.num_ranks)]
    expected = [mod.allgather_gemm_two_phase_reference(a, b)] * world.num_ranks
    return FusedCase(mod.allgather_gemm_two_phase_kernel, n_cores,
                     lambda r: mod.allgather_gemm_two_phase_launch_args(r, a[r], b, c[r], ws), c, expected, [])


def ring_allgather(mod, world, n_cores, dtype=torch.float32, rows_per_rank=40, n=20, block_m=8):
    """The ring all-gather of the exploration tests (``ring_allgather.py``), not a reference kernel."""
    gathered, signals = mod.ring_allgather_workspace(world, world.num_ranks, rows_per_rank, n, dtype, block_m)
    x = [torch.randn(rows_per_rank, n).to(dtype) for _ in range(world.num_ranks)]
    expected = [torch.cat(x).float()] * world.num_ranks
    return FusedCase(mod.ring_allgather_kernel, n_cores,
                     lambda r: mod.ring_allgather_launch_args(r, x[r], gathered, signals, block_m), gathered, expected,
                     signals)


SIGNAL_KERNELS = ("allgather_gemm", "gemm_reducescatter", "gemm_allreduce", "reverse_all2all")
FUSED_MODULES = (*SIGNAL_KERNELS, "allgather_gemm_two_phase")
BUILDERS = {name: globals()[name] for name in (*FUSED_MODULES, "ring_allgather")}
# kernels whose builder takes the core count itself (no producer/consumer role split)
_WHOLE_GRID = ("allgather_gemm_two_phase", "ring_allgather")


def build(name: str, mod, world, n_cores: int, **shape) -> FusedCase:
    """The case of kernel module ``name`` (or a mutant of it, ``mod``) on ``n_cores`` programs."""
    if name in _WHOLE_GRID:
        return BUILDERS[name](mod, world, n_cores, **shape)
    from reference_kernels._dist_common import RoleSplit

    return BUILDERS[name](mod, world, RoleSplit.halves(n_cores), **shape)


def launch(world, case: FusedCase, *, timeout: float = 60.0, model=None, schedules=None, check=False) -> None:
    """One launch of every rank, hazards on, under ``schedules`` (None: the emulator's default exploration).

    ``check``: compare with torch after every schedule explored (a ``WrongResult`` names the first that differs).
    """
    world.launch(case.kernel, (case.n_cores,), case.args_for_rank, hazards=True, timeout=timeout, model=model,
                 schedules=schedules, check=(lambda: _raise_mismatches(case)) if check else None)


class WrongResult(AssertionError):
    """The outputs of a schedule differ from torch."""


def _raise_mismatches(case: FusedCase) -> None:
    wrong = mismatches(case)
    if wrong:
        raise WrongResult("\n".join(wrong))


def mismatches(case: FusedCase) -> list[str]:
    """One line per rank whose output differs from torch beyond the output dtype's tolerance."""
    found = []
    for rank, (got, want) in enumerate(zip(case.outputs, case.expected, strict=True)):
        tolerance = TOLERANCES[got.dtype]
        want = want.to(got.dtype).float()
        close = torch.isclose(got.float(), want, **tolerance)
        if not bool(close.all()):
            bad = int((~close).sum())
            error = (got.float() - want).abs().nan_to_num(float("inf")).max().item()
            found.append(f"rank {rank}: {bad} of {close.numel()} elements off (max error {error:g})")
    return found


def assert_matches(case: FusedCase) -> None:
    wrong = mismatches(case)
    assert not wrong, "\n".join(wrong)


def assert_every_slot_returned(case: FusedCase) -> None:
    from reference_kernels._dist_common import check_signal_slots_returned

    for signals in case.signals:
        check_signal_slots_returned(signals)
