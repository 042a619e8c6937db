"""Operations between programs and ranks shared by the ``dl`` and ``libshmem_device`` stand-ins.

A single-device launch behaves as a world of one rank whose symmetric heap is all of memory.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from .. import context, memory
from ..errors import ProgramAborted

FIRST_POLL_SECONDS = 0.00005
LONGEST_POLL_SECONDS = 0.002

SIGNAL_OPS = ("set", "add")


def my_rank() -> int:
    return context.require_current("rank()").rank


def world_size() -> int:
    return context.require_current("num_ranks()").num_ranks


def _check_rank(ctx, rank: int, op_name: str) -> None:
    if not 0 <= rank < ctx.num_ranks:
        raise ValueError(f"{op_name}: rank {rank} is outside the world of {ctx.num_ranks} rank(s)")


def translate_pointer(ptr, rank, op_name: str):
    """``ptr`` (a symmetric pointer of this rank) moved to ``rank``'s copy of the same buffer."""
    ctx = context.require_current(op_name)
    rank = memory.as_int(rank)
    _check_rank(ctx, rank, op_name)
    if ctx.launch.world is None:
        return ptr
    return memory.with_addresses(ptr, lambda addrs: ctx.launch.world.translate(addrs, rank, op_name))


def address_on_rank(address: int, nbytes: int, rank, op_name: str) -> int:
    """A symmetric address of this rank moved to ``rank``, checked to lie inside its heap."""
    ctx = context.require_current(op_name)
    rank = memory.as_int(rank)
    _check_rank(ctx, rank, op_name)
    if ctx.launch.world is None:
        return address
    return ctx.launch.world.translate_range(address, nbytes, rank, op_name)


def sig_op_name(sig_op) -> str:
    """Normalise a signal operation given as "set"/"add" or as SIGNAL_SET/SIGNAL_ADD (0/1)."""
    sig_op = getattr(sig_op, "value", sig_op)
    if isinstance(sig_op, str) and sig_op.lower() in SIGNAL_OPS:
        return sig_op.lower()
    if not isinstance(sig_op, str):
        index = memory.as_int(sig_op)
        if 0 <= index < len(SIGNAL_OPS):
            return SIGNAL_OPS[index]
    raise ValueError(f"unknown signal operation {sig_op!r}; use 'set' or 'add'")


def write_signal(address: int, dtype, value: int, op: str) -> None:
    """Set or add to one slot; the launch-wide lock makes concurrent adds exact."""
    ctx = context.require_current("signal")
    slot = memory.view(address, 1, dtype)
    with ctx.launch.memory_lock:
        slot[0] = value if op == "set" else slot[0] + value


def wait_until(address: int, count: int, dtype, satisfied, description: str) -> None:
    """Poll ``count`` slots until ``satisfied(values)``.

    Sleeping between polls hands the GIL to the programs that will set the slots; the pause grows
    while nothing changes so that many waiting programs do not starve the working ones.
    """
    ctx = context.require_current("wait")
    slots = memory.view(address, count, dtype)
    ctx.blocked_on = description
    pause = FIRST_POLL_SECONDS
    try:
        while not satisfied(slots):
            if ctx.launch.aborted.is_set():
                raise ProgramAborted()
            time.sleep(pause)
            pause = min(pause * 2, LONGEST_POLL_SECONDS)
    finally:
        ctx.blocked_on = None


def describe_slots(address: int, count: int, op_name: str) -> str:
    ctx = context.current()
    world = ctx.launch.world if ctx is not None else None
    where = world.describe_address(address) if world is not None else f"address {address:#x}"
    return f"{op_name} on {count} slot(s) at {where}"


def barrier_all(op_name: str = "barrier_all") -> None:
    """Block until every program of every rank in the launch has arrived."""
    ctx = context.require_current(op_name)
    ctx.blocked_on = f"{op_name}: waiting for all {ctx.launch.program_count} programs of the launch"
    try:
        ctx.launch.barrier.wait()
    except threading.BrokenBarrierError:
        raise ProgramAborted() from None
    finally:
        ctx.blocked_on = None


def values_equal(expected: int):
    return lambda values: bool(np.all(values == expected))
