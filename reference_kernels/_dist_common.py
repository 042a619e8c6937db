"""Pieces shared by the fused distributed kernels: symmetric-memory allocators and tile helpers.

Every fused kernel needs the same two kinds of buffer: data buffers in symmetric memory (same
offset on every rank, so a local pointer names the peer's copy too) and int64 signal slots. A
workspace is built from an *allocator*, so one builder serves both places the kernels run:

* on an NPU, :class:`ShmemAllocator` hands out ``aclshmem`` tensors for the calling process's rank;
* on the CPU emulator, ``ascendlint.emulate.World`` hands out one view per emulated rank.

Either way an allocation is indexed by rank (``buffer[rank]``), and the kernel source is the same.

Signal slots sit ``SIGNAL_SLOT_STRIDE`` int64 elements apart, one per 64-byte line: the NPU's
DataCache does not keep concurrent writes by different cores to one line coherent, so two slots
written by different programs or ranks must never share a line, or one of the signals is lost.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
import triton
import triton.language as tl


# int64 elements per 64-byte DataCache line: the distance between two signal slots.
SIGNAL_SLOT_STRIDE = 8


def signal_slots(alloc: "SymmetricAllocator", n_slots: int):
    """Zeroed signal memory for ``n_slots`` slots, each on its own 64-byte line."""
    return alloc.signal_zeros(n_slots * SIGNAL_SLOT_STRIDE)


class SymmetricAllocator(Protocol):
    """Allocates zeroed symmetric buffers; the result is indexed by rank."""

    def symmetric_zeros(self, shape: Sequence[int], dtype: torch.dtype): ...

    def signal_zeros(self, n: int, dtype: torch.dtype = torch.int64): ...


class ShmemAllocator:
    """Symmetric memory from ``aclshmem`` on an NPU, holding only this process's rank.

    ``aclshmem`` must already be initialised for ``rank``. Every rank has to finish zeroing before
    any peer launches a kernel that writes into it, so call :meth:`barrier` once the workspace is
    built; the kernels hand every signal slot back at zero, so later launches need no re-zeroing.
    """

    def __init__(self, rank: int, device_id: int) -> None:
        self.rank = rank
        self.device_id = device_id

    def symmetric_zeros(self, shape: Sequence[int], dtype: torch.dtype) -> dict:
        import shmem as ash  # deferred: only exists on an NPU host with CANN

        tensor = ash.aclshmem_create_tensor(list(shape), dtype=dtype, device_id=self.device_id)
        tensor.zero_()
        return {self.rank: tensor}

    def signal_zeros(self, n: int, dtype: torch.dtype = torch.int64) -> dict:
        return self.symmetric_zeros((n,), dtype)

    def barrier(self) -> None:
        torch.npu.synchronize()
        torch.distributed.barrier()


@dataclass(frozen=True)
class RoleSplit:
    """How a core grid is divided between the producer role and the consumer role.

    Producers and consumers must be different programs: a program that first produced every round
    would wait for credit that only its own (not yet started) consumer half could return. Signal
    slots are grouped per producer program, so that each slot has a single writer that fills it in
    order; a workspace is therefore built for one split and only fits launches with that grid.
    """

    n_cores: int
    n_producers: int

    @classmethod
    def halves(cls, n_cores: int) -> "RoleSplit":
        if n_cores < 2:
            raise ValueError(f"a fused kernel needs at least 2 programs (producer and consumer), got {n_cores}")
        return cls(n_cores, n_cores // 2)

    def check_grid(self, n_cores: int) -> None:
        if n_cores != self.n_cores:
            raise ValueError(f"the workspace was built for a grid of {self.n_cores} programs, not {n_cores}")


def check_signal_slots_returned(signals: torch.Tensor) -> None:
    """Raise if a launch left a signal slot non-zero (a lost credit breaks the next launch)."""
    leftover = [index // SIGNAL_SLOT_STRIDE for index in torch.nonzero(signals).flatten().tolist()]
    if leftover:
        raise RuntimeError(f"signal slots not returned to zero after the launch: {leftover}")


@triton.jit
def tile_matmul(a_ptr, lda, b_ptr, ldb, m_rows, n_start, n_cols, k_len,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """fp32 ``A[:m_rows, :k_len] @ B[:k_len, n_start:n_start + BLOCK_N]`` with tails masked to zero.

    ``a_ptr`` points at the tile's first row, ``n_start`` is int64 and ``n_cols`` is B's width; rows
    and columns past the tails come out as zeros.
    """
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = n_start + tl.arange(0, BLOCK_N)
    mask_m = offs_m[:, None] < m_rows
    mask_n = offs_n[None, :] < n_cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k_start in range(0, k_len, BLOCK_K):
        offs_k = tl.cast(k_start, tl.int64) + tl.arange(0, BLOCK_K)
        a_tile = tl.load(a_ptr + offs_m[:, None] * lda + offs_k[None, :],
                         mask=mask_m & (offs_k[None, :] < k_len), other=0.0)
        b_tile = tl.load(b_ptr + offs_k[:, None] * ldb + offs_n[None, :],
                         mask=(offs_k[:, None] < k_len) & mask_n, other=0.0)
        acc += tl.dot(a_tile, b_tile)
    return acc
