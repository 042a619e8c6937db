"""Operations between programs and ranks shared by the ``dl`` and ``libshmem_device`` stand-ins.

A single-device launch behaves as a world of one rank whose symmetric heap is all of memory.
"""

from __future__ import annotations

import numpy as np

from .. import cache_lines, context, memory, ordering, transfers, visibility

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
    """Set or add to one slot (a scheduling point first). Adds are atomic and exact; with
    ``incoherent_cache_lines`` a set goes through the core's copy of the slot's 64-byte line."""
    ctx = context.require_current("signal")
    ctx.launch.scheduler.point(ctx)
    ordering.note_signal(ctx)
    if ctx.launch.world is not None:
        ctx.launch.world.note_signal_slot(address)
    slot = memory.view(address, 1, dtype)
    with ctx.launch.memory_lock:
        if op == "set" and ctx.launch.model.incoherent_cache_lines:
            cache_lines.set_slot(ctx, address, dtype, value)
        else:
            slot[0] = value if op == "set" else slot[0] + value


def wait_until(address: int, count: int, dtype, satisfied, description: str) -> None:
    """Block until ``satisfied(values)`` holds for the ``count`` slots at ``address``; others run meanwhile."""
    ctx = context.require_current("wait")
    ctx.launch.scheduler.point(ctx)
    if ctx.launch.world is not None:
        ctx.launch.world.note_signal_slot(address)
    slots = memory.view(address, count, dtype)
    ctx.launch.scheduler.block_until(ctx, lambda: satisfied(slots), description)
    cache_lines.remember(ctx, address, count * np.dtype(dtype).itemsize)


def fence(ctx) -> None:
    """Stores visible, loads complete, later loads ordered after everything before."""
    visibility.flush(ctx)
    ordering.complete_loads(ctx)
    ordering.acquire(ctx)


def after_signal() -> None:
    """A signal was just set: let the programs it may wake act first (``yield_on_signal``)."""
    ctx = context.require_current("signal")
    ctx.launch.scheduler.after_signal(ctx)


class _Described:
    """A description whose slot numbers are worked out when it is read (the stride may be known only later)."""

    def __init__(self, render) -> None:
        self._render = render

    def __str__(self) -> str:
        return self._render()

    def __format__(self, spec) -> str:
        return format(self._render(), spec)

    def __contains__(self, part) -> bool:
        return part in self._render()

    def __add__(self, other) -> "_Described":
        return _Described(lambda: self._render() + str(other))


def describe_slots(address: int, count: int, op_name: str) -> str:
    ctx = context.current()
    world = ctx.launch.world if ctx is not None else None
    if world is None:
        return f"{op_name} on {count} slot(s) at address {address:#x}"
    return _Described(lambda: f"{op_name} on {count} slot(s) at {world.describe_address(address)}")


def barrier_all(op_name: str = "barrier_all") -> None:
    """Block until every program (every sub-block) of every rank in the launch has arrived.

    The caller's pending stores become visible first, so whatever a program stored before the barrier
    is seen by every program after it.
    """
    ctx = context.require_current(op_name)
    fence(ctx)
    transfers.complete(ctx)
    cache_lines.forget_all(ctx)
    stage = ctx.stage
    stage.barrier_counts[id(ctx)] = stage.barrier_counts.get(id(ctx), 0) + 1
    generation = stage.barrier_generation
    stage.barrier_arrived += 1
    if stage.barrier_arrived == stage.program_count:
        stage.barrier_arrived = 0
        stage.barrier_generation += 1
        ctx.launch.scheduler.yield_turn(ctx)
        return
    who = "programs of the launch" if ctx.launch.stage_count == 1 else f"programs of {stage.describe()}"
    description = f"{op_name} #{stage.barrier_counts[id(ctx)]}: waiting for all {stage.program_count} {who}"
    ctx.launch.scheduler.block_until(ctx, lambda: stage.barrier_generation > generation, description)


def values_equal(expected: int):
    return lambda values: bool(np.all(values == expected))
