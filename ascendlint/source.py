"""Reading and writing Python source byte-exactly: encoding (PEP 263 cookie, BOM) and line endings survive."""

from __future__ import annotations

import ast
import codecs
import io
import os
import re
import tempfile
import tokenize
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: reading and prefiltering files must not pay for importing libcst
    import libcst as cst


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


# -- parsing without crashing the process ----------------------------------------------------------------------
# libcst's native parser recurses on the machine stack: about 1,500 nested brackets, or a few thousand chained
# lambdas or unary operators, overflow it and kill the whole process (SIGSEGV), where CPython's parser refuses
# such code with a SyntaxError. Text that could be that deep is shown to CPython's parser first.
SHALLOW_BRACKETS = 150  # below this bracket depth (strings included) libcst is safe with room to spare
SHALLOW_CHAINS = 500  # runs of lambdas / unary operators shorter than this are safe too
_BRACKETS = re.compile(r"[^()\[\]{}]+")
_BRACKET_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}
_LONG_CHAIN = re.compile(r"(?:(?:\blambda\b[^:\n]*:|\bnot\b|\bawait\b|[-+~])\s*){%d,}" % SHALLOW_CHAINS)


class NestingTooDeep(ValueError):
    """The code nests deeper than CPython's parser accepts; libcst would overflow the stack on it."""


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module`` guarded against native stack overflow and parser panics (both become errors)."""
    if _could_be_deep(text):
        problem = _depth_problem(text)
        if problem is not None:
            raise NestingTooDeep(problem)
    import libcst as cst

    try:
        return cst.parse_module(text)
    except (Exception, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a panic in the native parser is a BaseException (pyo3's PanicException)
        raise ValueError(f"the parser failed: {type(exc).__name__}: {exc}") from exc


def bracket_depth(text: str) -> int:
    """Deepest bracket nesting, counting brackets inside strings and comments too (cheap and conservative)."""
    brackets = _BRACKETS.sub("", text).encode()
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def _could_be_deep(text: str) -> bool:
    return (
        bracket_depth(text) > SHALLOW_BRACKETS
        or text.count("lambda") >= SHALLOW_CHAINS
        or _LONG_CHAIN.search(text) is not None
    )


def _depth_problem(text: str) -> str | None:
    """CPython's verdict on nesting only; other syntax errors (newer syntax, typos) are left to libcst."""
    try:
        compile(text, "<nesting>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg) or "too complex" in str(exc.msg):
            return f"{exc.msg} (line {exc.lineno})"
        # CPython stopped at another error first: decide on the (conservative) bracket depth alone.
        return "brackets nest too deeply to parse safely" if bracket_depth(text) > 4 * SHALLOW_BRACKETS else None
    except (MemoryError, RecursionError):
        return "the code nests too deeply (CPython's parser refuses it too)"
    except ValueError:  # e.g. NUL characters: libcst reports those itself
        return None
    return None
