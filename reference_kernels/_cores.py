"""Core counts that size the 1-D core grids of the reference kernels.

Ascend kernels launch one program per physical core and loop over tasks, so the grid comes from the
device's core count, not from the data. Vector-only kernels use the vector cores (twice the cube
cores on A2); kernels that run ``tl.dot`` use the cube cores. On a host without an NPU (the CPU
interpreter) a small fixed count stands in, so task loops still give several programs uneven work.
"""

import torch

CPU_EMULATED_CORES = 4


def _npu_properties(device: torch.device) -> dict:
    from triton.runtime import driver  # deferred: only an NPU launch needs the driver

    return driver.active.utils.get_device_properties(device.index or 0)


def vector_core_count(device: torch.device) -> int:
    """Vector cores of ``device``: the grid for kernels without ``tl.dot``."""
    if device.type != "npu":
        return CPU_EMULATED_CORES
    return int(_npu_properties(device)["num_vectorcore"])


def cube_core_count(device: torch.device) -> int:
    """Cube cores of ``device``: the grid for kernels built around ``tl.dot``."""
    if device.type != "npu":
        return CPU_EMULATED_CORES
    return int(_npu_properties(device)["num_aicore"])
