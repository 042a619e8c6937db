"""When a program's stores become visible to the other programs and ranks (``hold_stores_until_fence``).

On the NPU a ``tl.store`` goes out through the MTE queue; nothing makes it visible to another core or
rank until the program's ``libshmem_device.fence()`` (or a ``barrier_all()``, or the end of the kernel).
A signal written by ``dl.notify`` does not wait for those stores, so a producer that notifies without
a fence lets its consumer read the buffer before the data is there. The interpreter writes memory at
once and hides that; here a program's stores are held in its own buffer instead:

* the program itself reads its pending stores (program order holds within a program);
* every other program and rank reads what memory held before (with ``hazards=True``: NaN for a
  floating-point element another program has a pending store to, since the device may return the
  old value, the new one or a mix);
* ``fence()``, ``barrier_all()``, an atomic (release semantics) and the end of the program write the
  pending stores to memory, in program order.

``putmem``/``getmem`` are synchronous DMA transfers: they read and write memory directly, so a
``putmem`` does not see its own program's unfenced stores to its source.
"""

from __future__ import annotations

import numpy as np

from . import context, ordering
from .environment import import_triton

_installed = False


class PendingStore:
    """The masked-in addresses of one ``tl.store`` (sorted, last write per address) and their values."""

    __slots__ = ("addresses", "values", "lo", "hi")

    def __init__(self, addresses: np.ndarray, values: np.ndarray) -> None:
        order = np.argsort(addresses, kind="stable")
        addresses, values = addresses[order], values[order]
        last = np.append(addresses[1:] != addresses[:-1], True)  # keep the latest of repeated addresses
        self.addresses = addresses[last]
        self.values = values[last]
        self.lo = int(self.addresses[0])
        self.hi = int(self.addresses[-1])

    def matches(self, addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(hit mask over ``addresses``, index into this store's values for each address)."""
        position = np.searchsorted(self.addresses, addresses)
        position = np.minimum(position, len(self.addresses) - 1)
        return self.addresses[position] == addresses, position


class StoreBuffer:
    """One program's stores not yet visible to others, oldest first."""

    def __init__(self) -> None:
        self.stores: list[PendingStore] = []
        self.lo = 0
        self.hi = -1

    def add(self, addresses: np.ndarray, values: np.ndarray) -> None:
        if addresses.size == 0:
            return
        store = PendingStore(addresses, values)
        if not self.stores:
            self.lo, self.hi = store.lo, store.hi
        else:
            self.lo, self.hi = min(self.lo, store.lo), max(self.hi, store.hi)
        self.stores.append(store)

    def may_touch(self, lo: int, hi: int) -> bool:
        return bool(self.stores) and self.lo <= hi and lo <= self.hi

    def drain(self) -> list[PendingStore]:
        stores, self.stores = self.stores, []
        self.lo, self.hi = 0, -1
        return stores


def attach(ctx) -> None:
    """Give a program its store buffer when the launch holds stores back."""
    if ctx.launch.model.hold_stores_until_fence:
        ctx.pending = StoreBuffer()
        ctx.launch.store_buffers.append(ctx.pending)


def flush(ctx=None) -> None:
    """Write the program's pending stores to memory, oldest first (a fence, a barrier, its end)."""
    ctx = ctx or context.current()
    if ctx is None or ctx.pending is None or not ctx.pending.stores:
        return
    for store in ctx.pending.drain():
        write_visible(ctx, store.addresses, store.values)


def write_visible(ctx, addresses: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` to sorted unique ``addresses`` so that every program sees them, and log the write."""
    _, _, interpreter = import_triton()
    everywhere = np.ones(addresses.shape, dtype=bool)
    old = None
    if ctx.launch.unacquired:
        old = interpreter._interpreter.load(addresses, everywhere, np.zeros_like(values), values.dtype)
    world = ctx.launch.world
    describe = world.describe_address if world is not None else None
    ordering.note_write(ctx, int(addresses[0]), int(addresses[-1]), addresses, old, describe)
    interpreter._interpreter.store(addresses, values, everywhere)


def _shared(ctx, addresses: np.ndarray, live: np.ndarray) -> bool:
    """Whether an access touches memory other programs share: the symmetric heap, or any memory on one device."""
    world = ctx.launch.world
    if world is None:
        return True
    if not live.any():
        return False
    return world.in_heap(int(addresses[live].min()))


def _checks_before_access(ctx, op_name: str, ptrs, mask, is_volatile: bool = False) -> bool:
    """Bounds check and scheduling point of one load or store; returns whether it touches shared memory."""
    launch = ctx.launch
    addresses = ptrs.data.reshape(-1)
    live = np.broadcast_to(mask.data, ptrs.data.shape).reshape(-1)
    if launch.model.check_bounds and launch.regions is not None:
        _, _, interpreter = import_triton()
        element = ptrs.get_element_ty()
        itemsize = np.dtype(interpreter._get_np_dtype(element)).itemsize
        launch.regions.check(op_name, ctx.describe(), ptrs.data, mask.data, itemsize, element.is_floating())
    shared = _shared(ctx, addresses, live)
    if is_volatile:
        launch.scheduler.yield_turn(ctx)  # a spin loop: let the others make progress first
    elif shared:
        launch.scheduler.point(ctx)
    return shared


def _holding(ctx) -> bool:
    return ctx is not None and ctx.pending is not None


def _poison_value(dtype_tt, tl):
    """What a racing read returns: NaN for floating-point data, None (old value kept) otherwise."""
    if dtype_tt == tl.bfloat16:
        return np.uint16(0x7FC0)
    if dtype_tt in (tl.float16, tl.float32, tl.float64):
        return np.nan
    return None


def _overlay(ctx, ptrs: np.ndarray, mask: np.ndarray, data: np.ndarray, dtype_tt, tl) -> np.ndarray:
    """``data`` as this program sees it: its own pending stores over memory, others' racing stores poisoned."""
    live = np.broadcast_to(mask, ptrs.shape).reshape(-1)
    if not live.any():
        return data
    addresses = ptrs.reshape(-1)
    lo, hi = int(addresses[live].min()), int(addresses[live].max())
    out = None
    own = ctx.pending
    if own.may_touch(lo, hi):
        for store in own.stores:
            if store.hi < lo or store.lo > hi or store.values.dtype.itemsize != data.dtype.itemsize:
                continue
            hit, position = store.matches(addresses)
            hit &= live
            if hit.any():
                out = data.reshape(-1).copy() if out is None else out
                out[hit] = store.values[position[hit]].view(data.dtype)
    if ctx.launch.hazards:
        poison = _poison_value(dtype_tt, tl)
        if poison is not None:
            for buffer in ctx.launch.store_buffers:
                if buffer is own or not buffer.may_touch(lo, hi):
                    continue
                for store in buffer.stores:
                    if store.hi < lo or store.lo > hi:
                        continue
                    hit, _ = store.matches(addresses)
                    hit &= live
                    if own.may_touch(lo, hi):
                        hit &= ~_own_hits(own, addresses)
                    if hit.any():
                        out = data.reshape(-1).copy() if out is None else out
                        out[hit] = poison
    return data if out is None else out.reshape(data.shape)


def _own_hits(own: StoreBuffer, addresses: np.ndarray) -> np.ndarray:
    hits = np.zeros(addresses.shape, dtype=bool)
    for store in own.stores:
        hit, _ = store.matches(addresses)
        hits |= hit
    return hits


def install() -> None:
    """Route the interpreter's loads, stores and atomics through the launch's model (idempotent).

    Outside an emulated launch, and in launches that do not hold stores back, the interpreter behaves
    as before. Volatile loads and atomics are also where spinning programs hand over to the others.
    """
    global _installed
    if _installed:
        return
    _, tl, interpreter = import_triton()
    builder_class = interpreter.InterpreterBuilder
    plain_load = builder_class.create_masked_load
    plain_store = builder_class.create_masked_store
    plain_rmw = builder_class.create_atomic_rmw
    plain_cas = builder_class.create_atomic_cas

    def create_masked_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile):
        ctx = context.current()
        if ctx is None:
            return plain_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile)
        shared = _checks_before_access(ctx, "tl.load", ptrs, mask, is_volatile)
        result = plain_load(self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile)
        if _holding(ctx):
            result.data = _overlay(ctx, ptrs.data, mask.data, result.data, ptrs.get_element_ty(), tl)
        if ctx.horizon is not None and ctx.launch.write_log:
            live = np.broadcast_to(mask.data, ptrs.data.shape).reshape(-1)
            poison = _poison_value(ptrs.get_element_ty(), tl) if ctx.launch.hazards else None
            flat = ordering.stale_view(ctx, ptrs.data.reshape(-1).astype(np.uint64), live,
                                       np.ascontiguousarray(result.data).reshape(-1), poison)
            result.data = flat.reshape(result.data.shape)
        if shared and ctx.launch.world is not None and ctx.launch.model.loads_complete_at_fence:
            live = np.broadcast_to(mask.data, ptrs.data.shape).reshape(-1)
            ordering.note_load(ctx, ptrs.data.reshape(-1)[live])
        return result

    def create_masked_store(self, ptrs, value, mask, cache_modifier, eviction_policy):
        ctx = context.current()
        if ctx is None:
            return plain_store(self, ptrs, value, mask, cache_modifier, eviction_policy)
        _checks_before_access(ctx, "tl.store", ptrs, mask)
        shape = ptrs.data.shape
        live = np.broadcast_to(mask.data, shape).reshape(-1)
        addresses = ptrs.data.reshape(-1)[live].astype(np.uint64)
        values = np.ascontiguousarray(np.broadcast_to(value.data, shape).reshape(-1)[live])
        if addresses.size == 0:
            return None
        if _holding(ctx):
            ctx.pending.add(addresses, values)
            return None
        store = PendingStore(addresses, values)  # sorted, last write per address
        write_visible(ctx, store.addresses, store.values)
        return None

    def create_atomic_rmw(self, *args, **kwargs):
        ctx = context.current()
        flush(ctx)
        ordering.acquire(ctx)
        result = plain_rmw(self, *args, **kwargs)
        if ctx is not None:
            ctx.launch.scheduler.yield_turn(ctx)
        return result

    def create_atomic_cas(self, *args, **kwargs):
        ctx = context.current()
        flush(ctx)
        ordering.acquire(ctx)
        result = plain_cas(self, *args, **kwargs)
        if ctx is not None:
            ctx.launch.scheduler.yield_turn(ctx)
        return result

    builder_class.create_masked_load = create_masked_load
    builder_class.create_masked_store = create_masked_store
    builder_class.create_atomic_rmw = create_atomic_rmw
    builder_class.create_atomic_cas = create_atomic_cas
    _installed = True
