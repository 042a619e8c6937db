"""Several ranks in one process: a symmetric heap, address translation between ranks, one launch.

Imported lazily by ``ascendlint.emulate`` (it needs torch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np
import torch

from . import binding, executor
from .model import DeviceModel
from .symmetric_heap import SymmetricHeap

NOT_SYMMETRIC = "does not point into the symmetric heap; allocate the buffer with World.symmetric_zeros/_empty"


class World:
    """``num_ranks`` emulated devices sharing one process, each with a symmetric heap."""

    def __init__(self, num_ranks: int, heap_bytes: int = 64 << 20) -> None:
        executor.prepare()
        self.num_ranks = num_ranks
        self._heap = SymmetricHeap(num_ranks, heap_bytes)
        self._names: dict[int, list[str]] = {}  # allocation index -> launch parameter names it was passed as
        self._touched: dict[int, set[int]] = {}  # signal allocation index -> element indices signalled or waited on

    def symmetric_zeros(self, shape, dtype) -> list:
        views = self._heap.allocate(shape, dtype)
        for view in views:
            view.zero_()
        return views

    def symmetric_empty(self, shape, dtype) -> list:
        """Views of a new buffer whose contents are unknowable: floating-point buffers start as NaN."""
        views = self._heap.allocate(shape, dtype)
        if dtype.is_floating_point:
            for view in views:
                view.fill_(float("nan"))
        return views

    def signal_zeros(self, n: int, dtype=torch.int64) -> list:
        """Zeroed symmetric signal slots, listed in hang reports when non-zero."""
        views = self._heap.allocate((n,), dtype, is_signal=True)
        for view in views:
            view.zero_()
        return views

    def launch(self, kernel, grid, args_for_rank: Callable[[int], tuple], *, hazards: bool = True,
               timeout: float = 60.0, model: DeviceModel | None = None, schedules=None, check=None,
               compare_schedules=True) -> None:
        """Run every rank's programs in one combined launch, under each schedule explored.

        ``args_for_rank(rank)`` returns ``(args, kwargs)`` for that rank's launch. ``model`` picks the
        emulated device behaviours (default: all of them, see ``DeviceModel``); ``hazards``,
        ``schedules``, ``check`` and ``compare_schedules`` are as for ``ascendlint.emulate.launch``.
        """
        self.launch_sequence([Launch(kernel, grid, args_for_rank)], hazards=hazards, timeout=timeout, model=model,
                             schedules=schedules, check=check, compare_schedules=compare_schedules)

    def launch_sequence(self, launches, *, hazards: bool = True, timeout: float = 60.0,
                        model: DeviceModel | None = None, schedules=None, check=None,
                        compare_schedules=True) -> None:
        """Run a sequence of launches on every rank, as a stream would, under each schedule explored.

        ``launches`` lists ``Launch(kernel, grid, args_for_rank)`` entries, optionally separated by
        ``HOST_BARRIER``. Each rank runs its launches in order (launch k+1 starts on a rank once launch
        k has ended there), but ranks advance independently: rank 0 may run launch k+1 while rank 1 is
        still in launch k. ``HOST_BARRIER`` between two launches makes every rank finish the earlier
        one before any rank starts the later one (a host barrier or stream synchronisation). Memory is
        restored before every schedule; ``check`` runs after the whole sequence.
        """
        executor.prepare()
        ranks, host_barriers, stage = [], set(), 0
        pending_barrier = False
        for entry in launches:
            if entry is HOST_BARRIER:
                pending_barrier = True
                continue
            if not isinstance(entry, Launch):
                raise TypeError(f"launch_sequence takes Launch(...) entries and HOST_BARRIER, got {entry!r}")
            if pending_barrier and stage:
                host_barriers.add(stage)
            pending_barrier = False
            for rank in range(self.num_ranks):
                args, kwargs = _split_args(entry.args_for_rank(rank), rank)
                ranks.append(executor.RankLaunch(rank, binding.bind(entry.kernel, entry.grid, args, kwargs), stage))
            stage += 1
        executor.run(ranks, hazards=hazards, timeout=timeout, world=self, model=model, schedules=schedules,
                     check=check, compare_schedules=compare_schedules, host_barriers=frozenset(host_barriers))

    def name_buffers(self, ranks) -> None:
        """Remember which launch parameter each symmetric buffer was passed as (named in reports)."""
        for rank_launch in ranks:
            for address, name in rank_launch.bound.argument_names().items():
                owner, allocation, inner = self._heap.locate(address)
                if allocation is not None and inner == 0:
                    names = self._names.setdefault(allocation.index, [])
                    if name not in names:
                        names.append(name)

    def note_signal_slot(self, address: int) -> None:
        """A signal or wait touched this slot: the slots a kernel uses tell the stride it indexes with."""
        owner, allocation, inner = self._heap.locate(address)
        if allocation is not None and allocation.is_signal:
            self._touched.setdefault(allocation.index, set()).add(inner // _itemsize(allocation))

    def _label(self, allocation) -> str:
        names = self._names.get(allocation.index)
        if not names:
            return allocation.label()
        kind = "signal buffer" if allocation.is_signal else "symmetric buffer"
        return f"{kind} {'/'.join(names)} ({allocation.label().split(' ', 2)[2]})"

    def _stride(self, allocation) -> int:
        """The step between the slots the kernels used, when they used at least two (else 1)."""
        touched = self._touched.get(allocation.index, set())
        if len(touched) < 2:
            return 1
        return max(1, math.gcd(*touched))

    def _slot_name(self, allocation, element: int) -> str:
        stride = self._stride(allocation)
        if stride == 1:
            return f"slot {element}"
        if element % stride:
            return f"element {element} (between slots of stride {stride})"
        return f"slot {element // stride} (element {element}, stride {stride})"

    # --- used by the stand-ins while a launch runs -------------------------------------------------

    def translate(self, addresses: np.ndarray, rank: int, op_name: str) -> np.ndarray:
        """Addresses in one rank's heap moved to the same offsets in ``rank``'s heap.

        Lanes outside every heap (typically masked off) move with the buffer the other lanes are in.
        """
        addresses = np.asarray(addresses, dtype=np.uint64)
        owners = self._heap.rank_of(addresses)
        known = np.unique(owners[owners >= 0])
        if known.size == 0:
            raise ValueError(f"{op_name}: pointer {int(addresses.reshape(-1)[0]):#x} {NOT_SYMMETRIC}")
        if (owners < 0).any():
            if known.size > 1:
                raise ValueError(f"{op_name}: pointer block mixes ranks and addresses outside the heap")
            owners = np.where(owners < 0, known[0], owners)
        bases = self._heap.bases
        return (addresses - bases[owners] + bases[rank]).astype(np.uint64)

    def translate_range(self, address: int, nbytes: int, rank: int, op_name: str) -> int:
        """One address moved to ``rank``, checked so ``nbytes`` from it stay inside one buffer."""
        owner, allocation, inner = self._heap.locate(address)
        if owner < 0:
            raise ValueError(f"{op_name}: pointer {address:#x} {NOT_SYMMETRIC}")
        if allocation is None or inner + nbytes > allocation.nbytes:
            where = self._label(allocation) if allocation else "unallocated heap space"
            raise ValueError(f"{op_name}: {nbytes} bytes at offset {inner} overrun {where}")
        return address - int(self._heap.bases[owner]) + int(self._heap.bases[rank])

    def in_heap(self, address: int) -> bool:
        """Whether ``address`` lies in some rank's symmetric heap."""
        bases = self._heap.bases
        return bool(np.any((bases <= address) & (address < bases + np.uint64(self._heap.heap_bytes))))

    def owner_of(self, address: int) -> int:
        """The rank whose heap holds ``address``, or -1 for memory outside every heap."""
        return self._heap.locate(address)[0]

    def describe_address(self, address: int) -> str:
        owner, allocation, inner = self._heap.locate(address)
        if owner < 0:
            return f"non-symmetric address {address:#x}"
        if allocation is None:
            return f"unallocated offset {inner} of rank {owner}'s heap"
        slot = self._slot_name(allocation, inner // _itemsize(allocation))
        return f"{slot} of {self._label(allocation)} on rank {owner}"

    def signal_report(self) -> list[str]:
        """Non-zero slots of every signal buffer, per rank."""
        signals = [a for a in self._heap.allocations if a.is_signal]
        if not signals:
            return ["no signal buffers registered (allocate them with World.signal_zeros)"]
        lines = ["signal buffers (non-zero slots as {slot: value}):"]
        for allocation in signals:
            stride = self._stride(allocation)
            strided = f", slots of stride {stride} (slot = element // {stride})" if stride > 1 else ""
            lines.append(f"  {self._label(allocation)}{strided}:")
            for rank, heap in enumerate(self._heap.heaps):
                values = heap[allocation.offset:allocation.offset + allocation.nbytes].view(allocation.dtype)
                values = values.reshape(-1).tolist()
                nonzero = {(i // stride if i % stride == 0 else f"element {i}"): value
                           for i, value in enumerate(values) if value}
                lines.append(f"    rank {rank}: {nonzero if nonzero else 'all zero'}")
        return lines


class Launch:
    """One launch of a sequence: ``kernel[grid](*args, **kwargs)`` on every rank, with
    ``args_for_rank(rank)`` returning ``(args, kwargs)``."""

    def __init__(self, kernel, grid, args_for_rank: Callable[[int], tuple]) -> None:
        self.kernel = kernel
        self.grid = grid
        self.args_for_rank = args_for_rank

    def __repr__(self) -> str:
        return f"Launch({getattr(self.kernel, '__name__', self.kernel)!r})"


class _HostBarrier:
    def __repr__(self) -> str:
        return "HOST_BARRIER"


HOST_BARRIER = _HostBarrier()


def _itemsize(allocation) -> int:
    return max(1, allocation.nbytes // max(1, int(np.prod(allocation.shape))))


def _split_args(value, rank: int) -> tuple[tuple, dict]:
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[1], Mapping)):
        raise TypeError(f"args_for_rank({rank}) must return (args, kwargs), got {value!r}")
    return tuple(value[0]), dict(value[1])
