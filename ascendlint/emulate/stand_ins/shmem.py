"""Stand-in for ``triton_dist.language.extra.libshmem_device`` on Ascend.

``putmem``/``getmem`` are synchronous (done when the call returns); ``putmem_nbi``/``getmem_nbi``
stay in flight until ``quiet()`` (``nbi_in_flight_until_quiet``, see ``transfers.py``). ``fence``
makes the program's pending MTE stores visible (``hold_stores_until_fence``).
``putmem``/``getmem`` check their addresses the way UDMA needs them (``check_udma_addresses``). Signal
operations accept "set"/"add" or SIGNAL_SET/SIGNAL_ADD, and comparisons "eq", "ne", "gt", "ge", "lt",
"le" or the CMP_* constants.
"""

from __future__ import annotations

import operator

from .. import context, memory, ordering, transfers, udma
from . import peers

SIGNAL_SET = 0
SIGNAL_ADD = 1
CMP_EQ, CMP_NE, CMP_GT, CMP_GE, CMP_LT, CMP_LE = range(6)
_COMPARISONS = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le,
}
_COMPARISON_ORDER = ("eq", "ne", "gt", "ge", "lt", "le")


def my_pe(*_args, **_kwargs):
    return memory.int32_tensor(peers.my_rank())


def n_pes(*_args, **_kwargs):
    return memory.int32_tensor(peers.world_size())


def remote_ptr(ptr, pe):
    return peers.translate_pointer(ptr, pe, "libshmem_device.remote_ptr")


def barrier_all(*_args, **_kwargs):
    peers.barrier_all("libshmem_device.barrier_all")
    return 0


def barrier_all_vec(*_args, **_kwargs):
    peers.barrier_all("libshmem_device.barrier_all_vec")
    return 0


def quiet(*_args, **_kwargs):
    """Wait for the program's non-blocking transfers: they land now."""
    ctx = context.current()
    if ctx is not None:
        transfers.complete(ctx)
    return 0


def fence(*_args, **_kwargs):
    """Complete the program's earlier loads and stores: its stores become visible to everyone now."""
    ctx = context.current()
    if ctx is not None:
        peers.fence(ctx)
    return 0


def _put(op_name: str, dest, source, nbytes, pe) -> tuple[int, int, int]:
    nbytes = memory.as_int(nbytes)
    dest_address, source_address = memory.scalar_address(dest, op_name), memory.scalar_address(source, op_name)
    udma.check_put(op_name, dest_address, source_address, pe)
    return peers.address_on_rank(dest_address, nbytes, pe, op_name), source_address, nbytes


def _get(op_name: str, dest, source, nbytes, pe) -> tuple[int, int, int]:
    nbytes = memory.as_int(nbytes)
    dest_address, source_address = memory.scalar_address(dest, op_name), memory.scalar_address(source, op_name)
    udma.check_get(op_name, dest_address, source_address, pe)
    return dest_address, peers.address_on_rank(source_address, nbytes, pe, op_name), nbytes


def putmem(dest, source, nbytes, pe, *_rest, **_kwargs):
    """Copy ``nbytes`` from local ``source`` to symmetric ``dest`` on ``pe``; done when it returns."""
    transfers.copy_now(context.require_current("putmem"), *_put("putmem", dest, source, nbytes, pe))
    return 0


def getmem(dest, source, nbytes, pe, *_rest, **_kwargs):
    """Copy ``nbytes`` from symmetric ``source`` on ``pe`` to local ``dest``; done when it returns."""
    transfers.copy_now(context.require_current("getmem"), *_get("getmem", dest, source, nbytes, pe))
    return 0


def putmem_nbi(dest, source, nbytes, pe, *_rest, **_kwargs):
    """Start a copy of ``nbytes`` from local ``source`` to symmetric ``dest`` on ``pe``; it lands at ``quiet()``."""
    transfers.issue(context.require_current("putmem_nbi"), *_put("putmem_nbi", dest, source, nbytes, pe))
    return 0


def getmem_nbi(dest, source, nbytes, pe, *_rest, **_kwargs):
    """Start a copy of ``nbytes`` from symmetric ``source`` on ``pe`` to local ``dest``; it lands at ``quiet()``."""
    transfers.issue(context.require_current("getmem_nbi"), *_get("getmem_nbi", dest, source, nbytes, pe))
    return 0


def int_p(dest, value, pe):
    """Store one int32 ``value`` at symmetric ``dest`` on ``pe``."""
    remote = peers.address_on_rank(memory.scalar_address(dest, "int_p"), 4, pe, "int_p")
    ctx = context.require_current("int_p")
    ctx.launch.scheduler.point(ctx)
    ordering.note_signal(ctx)
    memory.view(remote, 1, "int32")[0] = memory.as_int(value)
    peers.after_signal()
    return 0


def signal_op(sig_addr, signal, sig_op, pe):
    dtype = memory.element_dtype(sig_addr)
    remote = peers.address_on_rank(memory.scalar_address(sig_addr, "signal_op"), dtype.itemsize, pe, "signal_op")
    peers.write_signal(remote, dtype, memory.as_int(signal), peers.sig_op_name(sig_op))
    peers.after_signal()
    return 0


def putmem_signal(dest, source, nbytes, sig_addr, signal, sig_op, pe):
    """``putmem`` followed by ``signal_op`` on the same peer: the data lands before the signal."""
    putmem(dest, source, nbytes, pe)
    return signal_op(sig_addr, signal, sig_op, pe)


putmem_signal_nbi = putmem_signal


def signal_wait_until(sig_addr, cmp, cmp_val):
    """Block until the local slot compares true against ``cmp_val``; returns the slot's value."""
    compare = _comparison(cmp)
    expected = memory.as_int(cmp_val)
    address = memory.scalar_address(sig_addr, "signal_wait_until")
    dtype = memory.element_dtype(sig_addr)
    description = peers.describe_slots(address, 1, "signal_wait_until") + f" ({cmp}) {expected}"
    peers.wait_until(address, 1, dtype, lambda values: bool(compare(values[0], expected)), description)
    return int(memory.view(address, 1, dtype)[0])


def _comparison(cmp):
    cmp = getattr(cmp, "value", cmp)
    if isinstance(cmp, str) and cmp.lower() in _COMPARISONS:
        return _COMPARISONS[cmp.lower()]
    if not isinstance(cmp, str):
        index = memory.as_int(cmp)
        if 0 <= index < len(_COMPARISON_ORDER):
            return _COMPARISONS[_COMPARISON_ORDER[index]]
    raise ValueError(f"unknown comparison {cmp!r}")
