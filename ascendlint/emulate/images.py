"""The memory a launch can touch, saved before the first schedule and restored before each later one.

Every schedule of an exploration must start from the same memory: the launch's tensor arguments and,
for a ``World`` launch, every allocation of the symmetric heap. After each schedule the image is also
compared with the first schedule's: a correct kernel's results do not depend on the interleaving, so
a difference is a race (``ScheduleDependentResult``). Floating-point values are compared with the
tolerance of their dtype (atomics may add in another order), NaN equal to NaN; other values exactly.
"""

from __future__ import annotations

import torch

TOLERANCE = {
    torch.float64: (1e-9, 1e-12), torch.float32: (1e-5, 1e-6), torch.float16: (1e-3, 1e-4),
    torch.bfloat16: (1.6e-2, 1e-3),
}


class ScheduleDependentResult(AssertionError):
    """Two schedules of one launch left different values in memory: the kernel races."""


class MemoryImage:
    """Named views of everything a launch may write."""

    def __init__(self, ranks, world) -> None:
        self.views: list[tuple[str, torch.Tensor]] = []
        heap_ptrs = set()
        if world is not None:
            heap = world._heap
            heap_ptrs = {view.untyped_storage().data_ptr() for view in heap.heaps}
            for allocation in heap.allocations:
                for rank, memory in enumerate(heap.heaps):
                    raw = memory[allocation.offset:allocation.offset + allocation.nbytes]
                    self.views.append((f"{allocation.label()} on rank {rank}",
                                       raw.view(allocation.dtype).view(allocation.shape)))
        seen = set()
        for rank_launch in ranks:
            for index, tensor in enumerate(rank_launch.bound.tensors):
                key = (tensor.data_ptr(), tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()))
                if tensor.untyped_storage().data_ptr() in heap_ptrs or key in seen:
                    continue
                seen.add(key)
                who = f" of rank {rank_launch.rank}" if world is not None else ""
                dtype = str(tensor.dtype).replace("torch.", "")
                self.views.append((f"tensor argument #{index}{who} {dtype}{list(tensor.shape)}", tensor))

    def capture(self) -> list[torch.Tensor]:
        return [view.detach().clone() for _, view in self.views]

    def restore(self, saved: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for (_, view), values in zip(self.views, saved, strict=True):
                view.copy_(values)

    def differences(self, first: list[torch.Tensor], later: list[torch.Tensor]) -> list[str]:
        found = []
        for (label, _), a, b in zip(self.views, first, later, strict=True):
            if a.dtype in TOLERANCE:
                rtol, atol = TOLERANCE[a.dtype]
                same = torch.isclose(a.float(), b.float(), rtol=rtol, atol=atol, equal_nan=True)
            else:
                same = a == b
            if not bool(same.all()):
                found.append(f"{label}: {int((~same).sum())} of {same.numel()} elements differ")
        return found
