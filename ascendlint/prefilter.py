"""The cheapest question first: can these bytes hold a Triton kernel at all? (No import of libcst needed.)"""

from __future__ import annotations


def could_hold_kernel(data: bytes | str) -> bool:
    """A file whose text never mentions triton cannot define or launch a Triton kernel."""
    return (b"triton" if isinstance(data, bytes) else "triton") in data
