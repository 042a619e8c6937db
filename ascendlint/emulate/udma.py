"""What a UDMA transfer (``putmem``/``getmem``) accepts on Ascend (``check_udma_addresses``).

UDMA moves data between ranks: the local copy between this rank's symmetric memory and its ordinary
device memory goes through the MTE path (``tl.load``/``tl.store``), so a transfer whose pe is the
calling rank is an error. The remote operand (``putmem``'s destination, ``getmem``'s source) is named
by the symmetric address, the same pointer value as on the calling rank, plus the pe: a pointer
already mapped to the peer by ``dl.symm_at``/``remote_ptr`` is the MTE way to address it and is
wrong here. The local operand must be the calling rank's own memory.

One core, one pe (``udma_one_core_per_pe``, the Triton-distributed performance guide's second constraint and its AllGather+GEMM tutorial): ``quiet()``
keeps one completion slot per pe, so all transfers of a launch from one rank to one pe must be
issued by a single core. The two vector sub-blocks of an AI core are two cores here: a phase
condition that lets both sub-blocks (or two programs) drive one pe is an error.
"""

from __future__ import annotations

from . import context, memory


class UdmaAddressError(ValueError):
    """A putmem/getmem that the UDMA engine cannot carry out as written."""


def check_put(op_name: str, dest: int, source: int, pe) -> None:
    _check(op_name, remote_role="destination", remote=dest, local_role="source", local=source, pe=pe)


def check_get(op_name: str, dest: int, source: int, pe) -> None:
    _check(op_name, remote_role="source", remote=source, local_role="destination", local=dest, pe=pe)


def _check(op_name: str, *, remote_role: str, remote: int, local_role: str, local: int, pe) -> None:
    ctx = context.require_current(op_name)
    pe = memory.as_int(pe)
    if ctx.launch.model.udma_one_core_per_pe:
        driver = ctx.stage.udma_issuers.setdefault((ctx.rank, pe), ctx)
        if driver is not ctx:
            raise UdmaAddressError(
                f"{op_name} to pe {pe} from {ctx.describe()}, but {driver.describe()} already drives pe {pe} in this "
                "launch: UDMA allows one core per pe (quiet() keeps one completion slot per pe); give each pe to "
                "one program and one sub-block")
    if not ctx.launch.model.check_udma_addresses:
        return
    if pe == ctx.rank:
        raise UdmaAddressError(
            f"{op_name} with pe {pe}, the calling rank itself: UDMA cannot move data between local symmetric "
            "memory and local device memory; copy locally with tl.load / tl.store (the MTE path)")
    world = ctx.launch.world
    if world is None:
        return
    owner = world.owner_of(remote)
    if owner >= 0 and owner != ctx.rank:
        raise UdmaAddressError(
            f"{op_name} {remote_role} points into rank {owner}'s copy of the buffer, i.e. it was mapped by "
            f"dl.symm_at / remote_ptr: UDMA takes the symmetric address (the same pointer value as on the "
            f"calling rank) together with pe={pe}")
    owner = world.owner_of(local)
    if owner >= 0 and owner != ctx.rank:
        raise UdmaAddressError(
            f"{op_name} {local_role} points into rank {owner}'s memory: the {local_role} of a {op_name} must be "
            "the calling rank's own memory")
