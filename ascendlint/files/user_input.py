"""The one way every command takes in a user's source: ``check``, ``ub``, ``--add-noqa``, standard input and the
editor server all read, bound, decode and parse through here.

Reading never blocks (a FIFO or device named ``*.py`` is refused) and never loads more than the size limit (a huge
file is looked at only near its start, see ``source.read_source_bytes``); decoding follows PEP 263 and turns every
codec failure into a SourceDecodeError (never a crash); parsing is the guarded parse (deep nesting, long chains
and long literals are refused in milliseconds, never handed to libcst).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO

from .source import (
    MAX_SOURCE_BYTES,
    SourceDecodeError,
    SourceText,
    SourceTooLarge,
    decode_source,
    parse_module,
    read_source_bytes,
)

if TYPE_CHECKING:
    import libcst as cst

__all__ = ["SourceDecodeError", "SourceTooLarge", "read_source_bytes", "load_source", "parse_source",
           "bounded_stream", "too_large_message"]


def too_large_message(size: int, what: str = "file") -> str:
    return (f"{what} is {size / 2**20:.1f} MiB, over the {MAX_SOURCE_BYTES // 2**20} MiB limit for linting; "
            "exclude it (extend-exclude) if it is generated")


def check_size(data: bytes | str, what: str = "file") -> None:
    """SourceTooLarge for text that arrived whole (an editor's buffer) and is over the limit."""
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise SourceTooLarge(too_large_message(size, what))


def load_source(path: str | os.PathLike) -> SourceText:
    """A file's text; OSError (not a regular file, unreadable, SourceTooLarge) or SourceDecodeError otherwise."""
    return decode_source(read_source_bytes(path))


def parse_source(text: str) -> "cst.Module":
    return parse_module(text)


def bounded_stream(stream: BinaryIO) -> tuple[bytes, bool]:
    """What a stream (standard input) holds, read no further than one byte past the limit, and whether it is over
    it (then the rest is still in the stream)."""
    data = stream.read(MAX_SOURCE_BYTES + 1)
    return data, len(data) > MAX_SOURCE_BYTES


def round_trips(source: SourceText, data: bytes, new_data: bytes, new_text: str) -> bool:
    """Do the file's own bytes come back from its text in its encoding, and the new bytes decode to the new text?
    (A ``unicode_escape`` coding comment fails the first: encoding turns every line break into ``\\n``, and Python
    splits lines before decoding, so the program would become one comment line.)"""
    if source.encoding in _PLAIN_CODECS:
        return True
    try:
        return source.encode(source.text) == data and decode_source(new_data).text == new_text
    except (SourceDecodeError, UnicodeError, LookupError, ValueError):
        return False


_PLAIN_CODECS = frozenset({"utf-8", "utf8", "ascii", "latin-1", "iso-8859-1", "iso8859-1", "cp1252"})
