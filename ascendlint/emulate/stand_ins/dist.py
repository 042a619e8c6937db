"""Stand-in for ``triton_dist.language`` (imported by kernels as ``dl``).

Called from interpreted kernel code, so every function takes ``tl.tensor``/constexpr/int arguments
and returns a ``tl.tensor`` (never None when a value is expected).
"""

from __future__ import annotations

import sys

from .. import context, dead_waits, memory, ordering
from . import peers


def rank(*_args, **_kwargs):
    """This program's rank in the world (int32)."""
    return memory.int32_tensor(peers.my_rank())


def num_ranks(*_args, **_kwargs):
    """Number of ranks in the world (int32)."""
    return memory.int32_tensor(peers.world_size())


def symm_at(ptr, rank):
    """Map a symmetric pointer of this rank to ``rank``'s copy of the same buffer."""
    return peers.translate_pointer(ptr, rank, "dl.symm_at")


def wait(barrierPtrs, numBarriers, scope="gpu", semantic="acquire", waitValue=1):
    """Block until ``numBarriers`` consecutive slots all equal ``waitValue``; slots are not reset.

    A wait whose token no effectful code uses is skipped, as the compiler deletes it
    (``DeviceModel.drop_unconsumed_waits``). Only an acquiring semantic at a scope wider than one core
    orders the later loads after the wait (``DeviceModel.acquire_by_wait_semantics``).
    """
    ctx = context.require_current("dl.wait")
    if ctx.launch.model.drop_unconsumed_waits and dead_waits.wait_is_dead(sys._getframe(1)):
        return memory.int32_tensor(0)
    address = memory.scalar_address(barrierPtrs, "dl.wait")
    count = memory.as_int(numBarriers)
    dtype = memory.element_dtype(barrierPtrs)
    if ctx.launch.world is not None:  # the slots must lie inside one buffer of the calling rank's heap
        ctx.launch.world.translate_range(address, count * dtype.itemsize, ctx.rank, "dl.wait")
    expected = memory.as_int(waitValue)
    description = peers.describe_slots(address, count, "dl.wait") + f" to equal {expected}"
    acquires = ordering.wait_acquires(scope, semantic)
    if not acquires:
        ordering.begin_without_acquire(ctx)
    peers.wait_until(address, count, dtype, peers.values_equal(expected), description)
    if acquires:
        ordering.acquire(ctx)
    return memory.int32_tensor(0)


def notify(ptr, rank, signal=1, sig_op="set", comm_scope="gpu"):
    """Set or add ``signal`` to the slot ``ptr`` points to, in ``rank``'s copy of the buffer."""
    dtype = memory.element_dtype(ptr)
    local = memory.scalar_address(ptr, "dl.notify")
    remote = peers.address_on_rank(local, dtype.itemsize, rank, "dl.notify")
    peers.write_signal(remote, dtype, memory.as_int(signal), peers.sig_op_name(sig_op))
    peers.after_signal()
    return memory.int32_tensor(0)


def consume_token(value, token):
    """Order later uses of ``value`` after the wait that produced ``token`` (a no-op on CPU)."""
    return value
