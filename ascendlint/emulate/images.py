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
    """Two schedules of one launch left different values in memory: the kernel races.

    ``schedules`` holds both schedules; ``replay`` is the token that runs that pair again (one
    schedule alone has nothing to compare with).
    """

    schedules: tuple = ()
    replay: str = ""


class ScheduleComparison:
    """After every schedule, compare what it left with what the first schedule left.

    ``compare`` is True (every byte of the launch's memory, floats within their dtype's tolerance),
    False (nothing) or a callable returning a canonical form of the results (for kernels whose
    correct result legitimately depends on the interleaving, such as pieces placed in arrival
    order): its values must be equal under every schedule.
    """

    def __init__(self, image: "MemoryImage", compare, kernel_name: str) -> None:
        self.image = image
        self.compare = compare
        self.kernel_name = kernel_name
        self.first = None

    def after(self, schedule) -> None:
        if self.compare is False or self.compare is None:
            return
        seen = _snapshot(self.compare()) if callable(self.compare) else self.image.capture()
        if self.first is None:
            self.first = (schedule, seen)
            return
        first_schedule, first_seen = self.first
        differ = self.image.differences(first_seen, seen) if not callable(self.compare) else canonical_differences(
            first_seen, seen)
        if not differ:
            return
        what = "results" if not callable(self.compare) else "canonical results (compare_schedules)"
        error = ScheduleDependentResult(
            f"emulated kernel {self.kernel_name} leaves different {what} under schedule {schedule.token} than under "
            f"{first_schedule.token}: the result depends on the interleaving (a race):\n  " + "\n  ".join(differ))
        error.schedules = (first_schedule, schedule)
        error.replay = f"{first_schedule.token},{schedule.token}"
        raise error


def _snapshot(value):
    """A copy of a canonical form that the next schedule's memory restore cannot change."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_snapshot(v) for v in value) if not hasattr(value, "_fields") else value
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    return value


def canonical_differences(first, later, label: str = "compare_schedules()") -> list[str]:
    """Where two canonical forms differ: tensors (with the dtype's tolerance), sequences, mappings, values."""
    if isinstance(first, torch.Tensor) and isinstance(later, torch.Tensor):
        if first.shape != later.shape or first.dtype != later.dtype:
            return [f"{label}: {first.dtype}{list(first.shape)} against {later.dtype}{list(later.shape)}"]
        if first.dtype in TOLERANCE:
            rtol, atol = TOLERANCE[first.dtype]
            same = torch.isclose(first.float(), later.float(), rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = first == later
        return [] if bool(same.all()) else [f"{label}: {int((~same).sum())} of {same.numel()} elements differ"]
    if isinstance(first, (list, tuple)) and isinstance(later, (list, tuple)) and len(first) == len(later):
        return [d for i, (a, b) in enumerate(zip(first, later)) for d in canonical_differences(a, b, f"{label}[{i}]")]
    if isinstance(first, dict) and isinstance(later, dict) and first.keys() == later.keys():
        return [d for key in first for d in canonical_differences(first[key], later[key], f"{label}[{key!r}]")]
    return [] if first == later else [f"{label}: {first!r} against {later!r}"]


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
