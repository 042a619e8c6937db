"""Reading and writing Python source byte-exactly: encoding (PEP 263 cookie, BOM) and line endings survive."""

from __future__ import annotations

import codecs
import io
import os
import tempfile
import tokenize
from dataclasses import dataclass


class SourceDecodeError(ValueError):
    """The bytes are not text in the encoding the file declares."""


@dataclass
class SourceText:
    text: str
    encoding: str  # codec name used to decode (without the "-sig" suffix)
    bom: bool

    def encode(self, text: str | None = None) -> bytes:
        data = (self.text if text is None else text).encode(self.encoding)
        return (codecs.BOM_UTF8 + data) if self.bom else data


def decode_source(data: bytes) -> SourceText:
    """Decode like the interpreter would: BOM, then coding cookie, then UTF-8. Keeps \\r\\n as is."""
    if b"\x00" in data:
        raise SourceDecodeError("file contains NUL bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceDecodeError(str(exc)) from exc
    bom = encoding == "utf-8-sig" and data.startswith(codecs.BOM_UTF8)
    codec = "utf-8" if encoding == "utf-8-sig" else encoding
    body = data[len(codecs.BOM_UTF8):] if bom else data
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        raise SourceDecodeError(
            f"not valid {codec} (byte {exc.start}: {exc.reason}); declare the encoding with a PEP 263 coding comment"
        ) from exc
    except LookupError as exc:
        raise SourceDecodeError(f"unknown encoding {codec!r}") from exc
    return SourceText(text=text, encoding=codec, bom=bom)


def atomic_write(path: str, data: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over the original, keeping its mode."""
    directory = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=".ascendlint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
