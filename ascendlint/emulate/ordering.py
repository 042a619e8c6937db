"""Acquire ordering of waits and completion of loads (``acquire_by_wait_semantics``, ``loads_complete_at_fence``).

Acquire. A ``dl.wait`` with semantic ``"acquire"`` at a scope that covers the producer orders the
program's later loads after it. One with ``"relaxed"``, or scoped to one core (``"cta"``) while the
data comes from another core or rank, does not: the loads may be performed before the wait is
satisfied. Here such a wait gives the program a *horizon*, the count of visible writes when the wait
began; until the program's next acquiring wait, fence, barrier or atomic, its loads see memory as it
was at the horizon for every element another program wrote since (the old value, or NaN for
floating-point data with hazards on). Writes are logged only while some program has a horizon. A
synchronisation whose scope does not cover the producer is a race like a missing one, the class of
bug ScoRD (Kamath, George, Basu, "ScoRD: A Scoped Race Detector for GPUs", ISCA 2020) detects.

Completion. On the NPU a load is complete only once a later ``fence()`` (or barrier) has waited for
it; a signal set before that may reach the peer first. A program's loads from symmetric memory are
therefore kept as *in flight* until its fence, barrier or end; when it sets a signal they become
*overtaken*, and a write by another program to any of those elements before the loader's fence is a
load that may have read the new data: ``LoadOvertakenError`` names both programs and the buffer.
"""

from __future__ import annotations

import numpy as np

ACQUIRING_SEMANTICS = ("acquire", "acq_rel", "seq_cst")
CORE_SCOPES = ("cta", "block", "core")


class LoadOvertakenError(RuntimeError):
    """A load overwritten by a peer after the loading program signalled without a fence."""


class LoggedWrite:
    __slots__ = ("addresses", "hi", "lo", "old", "seq", "writer")

    def __init__(self, seq, writer, lo, hi, addresses, old) -> None:
        self.seq, self.writer, self.lo, self.hi, self.addresses, self.old = seq, writer, lo, hi, addresses, old


def wait_acquires(scope, semantic) -> bool:
    scope = str(getattr(scope, "value", scope)).lower()
    semantic = str(getattr(semantic, "value", semantic)).lower()
    return semantic in ACQUIRING_SEMANTICS and scope not in CORE_SCOPES


def begin_without_acquire(ctx) -> None:
    """A wait without acquire starts: later loads may miss what others write from now on."""
    if not ctx.launch.model.acquire_by_wait_semantics or ctx.horizon is not None:
        return
    ctx.horizon = ctx.launch.write_seq
    ctx.launch.unacquired += 1


def acquire(ctx) -> None:
    """An acquiring wait, fence, barrier or atomic: the program sees every visible write again."""
    if ctx is None or ctx.horizon is None:
        return
    ctx.horizon = None
    launch = ctx.launch
    launch.unacquired -= 1
    if launch.unacquired == 0:
        launch.write_log.clear()


def complete_loads(ctx) -> None:
    """A fence, barrier or the program's end: its loads are done."""
    if ctx is not None:
        ctx.inflight_loads.clear()
        ctx.overtaken_loads.clear()


def note_load(ctx, addresses: np.ndarray) -> None:
    """A load from symmetric memory: in flight until the next fence."""
    if addresses.size:
        unique = np.unique(addresses.astype(np.uint64))
        ctx.inflight_loads.append((int(unique[0]), int(unique[-1]), unique))


def note_signal(ctx) -> None:
    """The program set a signal: its in-flight loads may be overtaken by it."""
    if ctx.inflight_loads:
        ctx.overtaken_loads.extend(ctx.inflight_loads)
        ctx.inflight_loads.clear()


def note_write(ctx, lo: int, hi: int, addresses: np.ndarray | None = None, old: np.ndarray | None = None,
               describe=None) -> None:
    """A write by ``ctx`` to [lo, hi] became visible (``addresses`` sorted unique, ``old`` what they held)."""
    launch = ctx.launch
    launch.write_seq += 1
    if launch.model.loads_complete_at_fence:
        _check_overtaken(ctx, lo, hi, addresses, describe)
    if launch.unacquired:
        launch.write_log.append(LoggedWrite(launch.write_seq, id(ctx), lo, hi, addresses, old))


def _hits(lo, hi, addresses, other_lo, other_hi, other_addresses) -> np.ndarray | None:
    if hi < other_lo or lo > other_hi:
        return None
    if addresses is None:
        found = other_addresses[(other_addresses >= lo) & (other_addresses <= hi)]
    else:
        found = np.intersect1d(addresses, other_addresses, assume_unique=True)
    return found if found.size else None


def _check_overtaken(ctx, lo, hi, addresses, describe) -> None:
    for other in ctx.launch.programs:
        if other is ctx or not other.overtaken_loads:
            continue
        for load_lo, load_hi, loaded in other.overtaken_loads:
            found = _hits(lo, hi, addresses, load_lo, load_hi, loaded)
            if found is None:
                continue
            where = describe(int(found[0])) if describe else f"address {int(found[0]):#x}"
            raise LoadOvertakenError(
                f"{ctx.describe()} overwrote {found.size} element(s) ({where}) that {other.describe()} loaded and "
                "then signalled without a fence in between: on the device that load may still be in flight and "
                "read the new data; put libshmem_device.fence() between the loads and the signal")


def stale_view(ctx, addresses: np.ndarray, live: np.ndarray, data: np.ndarray, poison) -> np.ndarray:
    """``data`` (a load's result, flat) as a program with a horizon may see it."""
    horizon = ctx.horizon
    out = None
    seen = np.zeros(addresses.shape, dtype=bool)
    for entry in ctx.launch.write_log:
        if entry.seq <= horizon or entry.writer == id(ctx):
            continue
        if entry.addresses is None:
            hit = live & (addresses >= entry.lo) & (addresses <= entry.hi) & ~seen
            position = None
        else:
            position = np.minimum(np.searchsorted(entry.addresses, addresses), len(entry.addresses) - 1)
            hit = live & (entry.addresses[position] == addresses) & ~seen
        if not hit.any():
            continue
        out = data.copy() if out is None else out
        if poison is not None:
            out[hit] = poison
        elif position is not None and entry.old is not None and entry.old.dtype.itemsize == data.dtype.itemsize:
            out[hit] = entry.old[position[hit]].view(data.dtype)
        seen |= hit
    return data if out is None else out
