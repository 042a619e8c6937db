"""What a fixed distributed kernel must leave in memory, computed from its inputs (for fixes that repair a run).

A fix that repairs a runtime failure or a race cannot be judged against the original, which fails or reads
stale data: the fixed kernel's buffers are compared with these instead. Each function takes the tensors before
the launch and the scalar arguments (both keyed ``name@rank``) and the world size, and returns the expected
contents of the buffers that hold the kernel's results (the worker compares exactly those).
"""

from __future__ import annotations


def _elements(tensor, nbytes: int) -> int:
    return nbytes // tensor.element_size()


def udma_put(before, scalars, world, dest, source, offset=None, nbytes="nbytes", peer="peer"):
    """``putmem(dest + offset, source, nbytes, peer)``: peer's copy of ``dest`` gets ``nbytes`` of the caller's
    ``source`` at ``offset``; nothing else of ``dest`` changes."""
    expected = {f"{dest}@{rank}": before[f"{dest}@{rank}"].clone() for rank in range(world)}
    for rank in range(world):
        target = scalars[f"{peer}@{rank}"]
        start = scalars[f"{offset}@{rank}"] if offset else 0
        count = _elements(before[f"{dest}@{rank}"], scalars[f"{nbytes}@{rank}"])
        expected[f"{dest}@{target}"][start:start + count] = before[f"{source}@{rank}"][:count]
    return expected


def udma_get(before, scalars, world, dest, source, offset=None, nbytes="nbytes", peer="peer"):
    """``getmem(dest, source + offset, nbytes, peer)``: the caller's ``dest`` gets ``nbytes`` of peer's copy of
    ``source`` from ``offset``; nothing else of ``dest`` changes."""
    expected = {}
    for rank in range(world):
        target = scalars[f"{peer}@{rank}"]
        start = scalars[f"{offset}@{rank}"] if offset else 0
        value = before[f"{dest}@{rank}"].clone()
        count = _elements(value, scalars[f"{nbytes}@{rank}"])
        value[:count] = before[f"{source}@{target}"][start:start + count]
        expected[f"{dest}@{rank}"] = value
    return expected


def allgather_rows(before, scalars, world, source, gathered, block, stride):
    """Every rank stores its first ``block`` elements of ``source`` at ``rank * stride`` of every rank's
    ``gathered``, then reads rank 0's rows back into ``source``."""
    expected = {}
    for rank in range(world):
        value = before[f"{gathered}@{rank}"].clone()
        for writer in range(world):
            value[writer * stride:writer * stride + block] = before[f"{source}@{writer}"][:block]
        expected[f"{gathered}@{rank}"] = value
        rows = before[f"{source}@{rank}"].clone()
        rows[:block] = value[:block]
        expected[f"{source}@{rank}"] = rows
    return expected
