"""A small Triton-Ascend module with the mistakes ascendlint exists to catch.

Run ``ascendlint check examples/`` to see them, and ``ascendlint check examples/ --diff`` for the fixes.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8, num_stages=2),
    ],
    key=["n_elements"],
)
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, stride_xm, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # The row offset is multiplied in int32 and only then widened: it wraps past 2**31 elements (ASC201, opt-in).
    row_start = (pid * BLOCK * stride_xm).to(tl.int64)
    offsets = row_start + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # A constexpr is not a tensor: it has no `.to` (ASC102).
    scale = SCALE.to(tl.float32)
    tl.store(out_ptr + offsets, x * scale + y, mask=mask)


def scaled_add(x: torch.Tensor, y: torch.Tensor, scale: int = 2) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    scaled_add_kernel[grid](x, y, out, n, meta_stride_xm(x), SCALE=scale)
    return out


def meta_stride_xm(x: torch.Tensor) -> int:
    return x.stride(0) if x.dim() > 1 else x.numel()
