"""One heap per rank with identical layouts, so a buffer sits at the same offset in every rank.

That is what lets ``symm_at``/``remote_ptr`` turn a pointer into rank A's buffer into a pointer to
rank B's copy: keep the offset, swap the heap base.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

ALIGNMENT = 512


@dataclass(frozen=True)
class Allocation:
    index: int
    offset: int
    nbytes: int
    shape: tuple
    dtype: object
    is_signal: bool

    def label(self) -> str:
        kind = "signal buffer" if self.is_signal else "symmetric buffer"
        dtype = str(self.dtype).replace("torch.", "")
        return f"{kind} #{self.index} {dtype}{list(self.shape)}"


class SymmetricHeap:
    """Per-rank byte heaps plus the allocation table they share."""

    def __init__(self, num_ranks: int, heap_bytes: int) -> None:
        if num_ranks < 1:
            raise ValueError(f"num_ranks must be at least 1, got {num_ranks}")
        self.heap_bytes = heap_bytes
        self.heaps = [torch.empty(heap_bytes, dtype=torch.uint8) for _ in range(num_ranks)]
        self.bases = np.array([heap.data_ptr() for heap in self.heaps], dtype=np.uint64)
        self.allocations: list[Allocation] = []
        self._next_offset = 0

    def allocate(self, shape, dtype, is_signal: bool = False) -> list:
        """Views of one new buffer, one per rank, all at the same heap offset."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        itemsize = torch.empty((), dtype=dtype).element_size()
        nbytes = int(np.prod(shape, dtype=np.int64)) * itemsize
        offset = -(-self._next_offset // ALIGNMENT) * ALIGNMENT
        if offset + nbytes > self.heap_bytes:
            raise MemoryError(
                f"symmetric heap of {self.heap_bytes} bytes is full; create the World with a larger heap_bytes")
        self._next_offset = offset + nbytes
        self.allocations.append(Allocation(len(self.allocations), offset, nbytes, shape, dtype, is_signal))
        return [heap[offset:offset + nbytes].view(dtype).view(shape) for heap in self.heaps]

    def rank_of(self, addresses: np.ndarray) -> np.ndarray:
        """Rank whose heap holds each address, or -1 outside every heap."""
        addresses = addresses.astype(np.uint64)
        owner = np.full(addresses.shape, -1, dtype=np.int64)
        for rank, base in enumerate(self.bases):
            inside = (addresses >= base) & (addresses < base + np.uint64(self.heap_bytes))
            owner[inside] = rank
        return owner

    def locate(self, address: int) -> tuple[int, Allocation | None, int]:
        """(rank, allocation or None, byte offset inside it) of one address; rank -1 if outside."""
        rank = int(self.rank_of(np.array([address], dtype=np.uint64))[0])
        if rank < 0:
            return -1, None, 0
        offset = address - int(self.bases[rank])
        for allocation in self.allocations:
            if allocation.offset <= offset < allocation.offset + allocation.nbytes:
                return rank, allocation, offset - allocation.offset
        return rank, None, offset
