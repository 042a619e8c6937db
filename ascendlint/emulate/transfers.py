"""Non-blocking UDMA transfers stay in flight until ``quiet()`` (``nbi_in_flight_until_quiet``).

``putmem_nbi``/``getmem_nbi`` return as soon as the transfer is queued; only ``quiet()`` waits for
it. A producer that signals its peer between the two lets the peer read the buffer before the data
arrives. Here a queued transfer does nothing until the issuing program's ``quiet()``,
``barrier_all()`` or end: then it reads its source and writes its destination, as late as the device
may do it, so a source overwritten before ``quiet()`` is caught as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import context, memory, ordering


@dataclass(frozen=True)
class Transfer:
    destination: int
    source: int
    nbytes: int


def copy_now(ctx, destination: int, source: int, nbytes: int) -> None:
    """A UDMA copy performed at once (a scheduling point first), logged as a visible write."""
    ctx.launch.scheduler.point(ctx)
    if nbytes > 0:
        world = ctx.launch.world
        ordering.note_write(ctx, destination, destination + nbytes - 1,
                            describe=world.describe_address if world is not None else None)
    memory.copy_bytes(destination, source, nbytes)


def issue(ctx, destination: int, source: int, nbytes: int) -> None:
    """Queue a non-blocking copy, or perform it at once when the model does not keep it in flight."""
    if not ctx.launch.model.nbi_in_flight_until_quiet:
        copy_now(ctx, destination, source, nbytes)
        return
    ctx.launch.scheduler.point(ctx)
    ctx.transfers.append(Transfer(destination, source, nbytes))


def complete(ctx=None) -> None:
    """Carry out the program's queued copies, oldest first (its ``quiet()``, barrier or end)."""
    ctx = ctx or context.current()
    if ctx is None or not ctx.transfers:
        return
    queued, ctx.transfers = ctx.transfers, []
    for transfer in queued:
        copy_now(ctx, transfer.destination, transfer.source, transfer.nbytes)
