"""Loads and stores checked against the buffer they point into (``check_bounds``).

Memory a kernel can reach in an emulated launch is known: the tensor arguments (their whole storage)
and the allocations of the symmetric heap. Every live lane of a ``tl.load``/``tl.store`` must lie in
one of them, and all live lanes of one access in the same one: a pointer block that runs off its
buffer into the alignment gap or into the next allocation (an undersized inbox spilling into its
signal slots) is reported as an ``OutOfBoundsError`` naming the buffer and where the lanes went,
instead of silently corrupting the neighbour and surfacing later as a deadlock or a wrong number.
"""

from __future__ import annotations

import numpy as np


class OutOfBoundsError(IndexError):
    """A load or store whose lanes leave the buffer they point into."""


class Regions:
    """Sorted, disjoint address ranges of the launch's buffers, each with a label."""

    def __init__(self, ranges: list[tuple]) -> None:
        ranges = sorted(ranges)
        self.starts = np.array([r[0] for r in ranges], dtype=np.uint64)
        self.ends = np.array([r[1] for r in ranges], dtype=np.uint64)
        self.labels = [r[2] for r in ranges]
        self.signal = np.array([len(r) > 3 and r[3] for r in ranges], dtype=bool)

    @classmethod
    def of_launch(cls, ranks, world) -> Regions:
        found: dict[int, tuple[int, int, str]] = {}
        if world is not None:
            heap = world._heap
            for rank, base in enumerate(heap.bases):
                for allocation in heap.allocations:
                    start = int(base) + allocation.offset
                    found[start] = (start, start + allocation.nbytes, f"{allocation.label()} on rank {rank}",
                                    allocation.is_signal)
        heap_starts = {int(b) for b in world._heap.bases} if world is not None else set()
        for rank_launch in ranks:
            for index, tensor in enumerate(rank_launch.bound.tensors):
                storage = tensor.untyped_storage()
                start = storage.data_ptr()
                if start in heap_starts or start in found or storage.nbytes() == 0:
                    continue
                who = f" of rank {rank_launch.rank}" if world is not None else ""
                dtype = str(tensor.dtype).replace("torch.", "")
                label = f"tensor argument #{index}{who} {dtype}{list(tensor.shape)}"
                found[start] = (start, start + storage.nbytes(), label)
        return cls(list(found.values()))

    def describe(self, address: int) -> str:
        index = int(np.searchsorted(self.starts, np.uint64(address), side="right")) - 1
        if index >= 0 and address < int(self.ends[index]):
            return f"byte {address - int(self.starts[index])} of {self.labels[index]}"
        if index >= 0:
            return f"{address - int(self.ends[index])} bytes past the end of {self.labels[index]}"
        return f"address {address:#x}, below every buffer of the launch"

    def check(self, op_name: str, who: str, ptrs: np.ndarray, mask: np.ndarray, itemsize: int,
              floating: bool = False) -> None:
        """Raise OutOfBoundsError unless every live lane lies in one region, the same for all, and no
        floating-point access lands in a signal buffer (integer slots: a data pointer that ran off the buffer
        below it)."""
        if not self.labels:
            return
        live = np.broadcast_to(mask, ptrs.shape).reshape(-1)
        addresses = ptrs.reshape(-1)[live].astype(np.uint64)
        if addresses.size == 0:
            return
        index = np.searchsorted(self.starts, addresses, side="right").astype(np.int64) - 1
        inside = (index >= 0) & (addresses + np.uint64(itemsize) <= self.ends[np.maximum(index, 0)])
        regions = np.unique(index[inside])
        if floating and regions.size and self.signal[regions].any():
            hit = int(regions[self.signal[regions]][0])
            below = f" (the buffer below it is {self.labels[hit - 1]})" if hit > 0 else ""
            first = int(addresses[inside & (index == hit)][0])
            raise OutOfBoundsError(
                f"{op_name} by {who} out of bounds: floating-point data at {self.describe(first)}, but signal buffers "
                f"hold integer slots, so the pointer ran off the buffer it was computed from{below}; the offsets "
                "outgrow that buffer")
        if inside.all() and regions.size == 1:
            return
        if inside.any():
            home = int(np.bincount(index[inside]).argmax())
            strays = addresses[~inside | (index != home)]
            what = f"a pointer into {self.labels[home]}: {strays.size} of {addresses.size} live lanes leave it"
        else:
            strays = addresses
            what = f"all {addresses.size} live lanes lie outside every buffer of the launch"
        raise OutOfBoundsError(
            f"{op_name} by {who} out of bounds, {what} (first stray lane: {self.describe(int(strays[0]))}); "
            "the offsets outgrow the buffer")
