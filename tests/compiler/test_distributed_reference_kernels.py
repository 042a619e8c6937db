"""The fused reference kernels through BiShengIR at their launchers' default configs, with the Triton-distributed
device API stood in (``ascendlint.compiler.device_api``): every tile and loop around the communication compiles
for Ascend910B1, so on-chip memory is checked; the communication calls themselves are not compiled.

``gemm_allreduce_kernel`` is left out: BiShengIR 1.2.0 does not finish compiling it within the 120 s limit
(docs/compiler.md says so); a test would only wait for the limit."""

import pytest

from ascendlint.compiler import verdict as v
from tests.compiler.support import needs_compiler
from tests.conftest import REPO

TILES = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 256, "BUFFER_NUM": 2, "SLOT_STRIDE": 8}
DECLARED = {  # each module's config dataclass defaults, as its launcher passes them
    "allgather_gemm": {"allgather_gemm_kernel": {**TILES, "COPY_K": 256}},
    "allgather_gemm_two_phase": {"allgather_gemm_two_phase_kernel": {
        **TILES, "COPY_M": 16, "COPY_K": 256, "PVALUE": 4, "SWIZZLE": 7}},
    "gemm_reducescatter": {"gemm_reducescatter_kernel": {**TILES, "BLOCK_N": 128}},
    "reverse_all2all": {"reverse_all2all_kernel": {"BLOCK_S": 16, "BLOCK_D": 256, "BUFFER_NUM": 2,
                                                   "SLOT_STRIDE": 8}},
    "allgather_shmem": {},  # its launch states BLOCK and SLOT_STRIDE itself
}


@pytest.mark.parametrize("module", sorted(DECLARED))
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_fused_reference_kernel_reaches_the_npu_compilers_last_step(module, dtype):
    needs_compiler()
    from ascendlint.compiler import outcomes as outcomes_module
    from tests.compiler.support import facts_of

    path = REPO / "reference_kernels" / f"{module}.py"
    facts = facts_of(path.read_text(encoding="utf-8"))
    facts.filename, facts.name = str(path), f"reference_kernels.{module}"  # as the engine sets them in a tree
    declared = {kernel: [{**values}] for kernel, values in DECLARED[module].items()}
    found = outcomes_module.outcomes(facts, ("Ascend910B1",), dtype, 65536, declared)
    compiled = [o for o in found if o.request.job is not None and o.request.runtime is None]
    assert compiled, [o.request.reason for o in found]
    for outcome in compiled:
        assert outcome.verdict.status == v.FITS, (outcome.request.label, outcome.verdict)
