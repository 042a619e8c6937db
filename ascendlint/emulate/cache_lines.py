"""Signal slots through each core's DataCache, a 64-byte line at a time (``incoherent_cache_lines``).

The NPU does not keep concurrent writes by different cores to one 64-byte DataCache line coherent
(the Triton-distributed performance guide, ascendlint's ASC412): a core writes back its whole copy of a line, so a slot on that line
that another core set after this core last fetched the line is overwritten with the old value and
the signal is lost. Here each core (each program's sub-block) keeps a copy of every line it last
read through a wait (``dl.wait``, ``signal_wait_until``) or wrote with a "set" signal; a "set" writes
the slot into that copy (fetching the line first if the core holds none) and writes the whole line
back, clipped to the buffer the slot is in. "add" signals are atomic and exact. ``barrier_all``
drops every copy. Slots 64 bytes apart, one per line, are unaffected.
"""

from __future__ import annotations

import numpy as np

from . import memory

LINE_BYTES = 64


def _line_span(ctx, address: int) -> tuple[int, int]:
    start = address - address % LINE_BYTES
    end = start + LINE_BYTES
    regions = ctx.launch.regions
    if regions is not None and regions.labels:
        index = int(np.searchsorted(regions.starts, np.uint64(address), side="right")) - 1
        if index >= 0 and address < int(regions.ends[index]):
            start, end = max(start, int(regions.starts[index])), min(end, int(regions.ends[index]))
    return start, end


def remember(ctx, address: int, nbytes: int) -> None:
    """The core read ``nbytes`` of signal slots at ``address`` (a wait saw them): it holds their lines now."""
    if ctx is None or not ctx.launch.model.incoherent_cache_lines:
        return
    line = address - address % LINE_BYTES
    while line < address + nbytes:
        start, end = _line_span(ctx, max(line, address))
        ctx.line_copies[line] = (start, memory.view(start, end - start, np.uint8).copy())
        line += LINE_BYTES


def set_slot(ctx, address: int, dtype, value: int) -> None:
    """Set one slot the way a core's DataCache does: into the core's copy of its line, then the line back."""
    dtype = np.dtype(dtype)
    line = address - address % LINE_BYTES
    held = ctx.line_copies.get(line)
    if held is None:
        start, end = _line_span(ctx, address)
        held = (start, memory.view(start, end - start, np.uint8).copy())
    start, copy = held
    offset = address - start
    copy[offset:offset + dtype.itemsize] = np.array([value], dtype=dtype).view(np.uint8)
    memory.view(start, copy.size, np.uint8)[:] = copy
    ctx.line_copies[line] = (start, copy)


def forget_all(ctx) -> None:
    ctx.line_copies.clear()
