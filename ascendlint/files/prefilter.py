"""The cheapest question first: can these bytes hold a Triton kernel at all? (No import of libcst needed.)"""

from __future__ import annotations

import codecs

# UTF-32's little-endian mark begins with UTF-16's, so it is tried first.
_WIDE_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def wide_unicode(data: bytes) -> str | None:
    """"utf-16" or "utf-32" for bytes that start with that byte-order mark (Python itself cannot run them)."""
    for mark, codec in _WIDE_MARKS:
        if data.startswith(mark):
            return codec
    return None


def could_hold_kernel(data: bytes | str) -> bool:
    """A file whose text never mentions triton cannot define or launch a Triton kernel.

    A UTF-16 or UTF-32 file spells "triton" with zero bytes in between: it is looked at as text, so that such a
    kernel is reported as undecodable rather than skipped in silence.
    """
    if not isinstance(data, bytes):
        return "triton" in data
    if b"triton" in data:
        return True
    codec = wide_unicode(data)
    return codec is not None and "triton" in data.decode(codec, errors="replace")
