"""Reading and writing Python source byte-exactly: encoding (PEP 263 cookie, BOM) and line endings survive."""

from __future__ import annotations

import ast
import codecs
import errno
import hashlib
import io
import os
import re
import threading
import tokenize
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from .prefilter import wide_unicode
from .safe_read import open_regular
from .temp_files import temporary_file
from .lazy_regex import lazy

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
    wide = wide_unicode(data)
    if wide is not None:
        raise SourceDecodeError(
            f"the file is {wide.upper()} (it starts with a {wide.upper()} byte-order mark), which Python cannot "
            "run either; save it as UTF-8"
        )
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


# Linting holds the file's libcst tree, its CPython tree and the shared analyses at once: about 0.5 GB of memory
# and 12 s per MiB of kernel source (measured: 0.25 MiB 162 MB peak RSS, 0.5 MiB 291 MB, 1 MiB 549 MB), so 10 MiB
# would need about 5 GB. The largest file mentioning triton in the six corpus repositories and the held-out set is
# 100 KB; 1 MiB is ten times that, and bigger files are generated, not written.
MAX_SOURCE_BYTES = 1024 * 1024


class SourceTooLarge(OSError):
    """A file that mentions triton but is too large to parse in reasonable time and memory."""


def read_source_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes; an oversized file is read only to learn whether it mentions triton at all.

    Oversized files that never mention triton come back empty (they are skipped like any such file); those that
    do raise SourceTooLarge, so the user hears about them instead of waiting minutes.
    """
    with open_regular(path) as handle:  # a FIFO or device swapped in after discovery must not block the run
        size = os.fstat(handle.fileno()).st_size
        if size <= MAX_SOURCE_BYTES:
            return handle.read()
        if not _stream_mentions(handle, b"triton"):
            return b""
    raise SourceTooLarge(
        f"file is {size / 2**20:.1f} MiB, over the {MAX_SOURCE_BYTES // 2**20} MiB limit for linting; "
        "exclude it (extend-exclude) if it is generated"
    )


def _stream_mentions(handle, needle: bytes, chunk_size: int = 1 << 20) -> bool:
    tail = b""
    while chunk := handle.read(chunk_size):
        if needle in tail + chunk[: len(needle)] or needle in chunk:
            return True
        tail = chunk[-(len(needle) - 1) :]
    return False


class SourceChanged(OSError):
    """The file changed on disk between reading it and writing its fixes."""


def content_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class NotWritable(OSError):
    """Fixes would have to replace a file its permissions or owner protect."""


def atomic_write(path: str, data: bytes, expected_digest: str | None = None) -> None:
    """Write through a temporary file in the same folder and rename it over the original.

    The original survives any failure (it is replaced in one rename). Mode, owner and group are kept; a file that
    is read-only, or whose owner or group the rename would change, is refused (NotWritable) rather than replaced
    through the folder's write permission. A symbolic link keeps pointing at its target, which is what gets
    rewritten. With ``expected_digest``, a file that changed since it was read is left alone (another tool's edit
    is never overwritten).
    """
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    status = os.stat(target)
    _refuse_protected(target, status)
    with temporary_file(directory) as (fd, tmp):
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, status.st_mode & 0o7777)
        _keep_owner(tmp, status)
        if expected_digest is not None:
            with open(target, "rb") as current:
                if content_digest(current.read()) != expected_digest:
                    raise SourceChanged(f"{path} changed on disk while it was being linted; fixes not written")
        os.replace(tmp, target)


def _refuse_protected(target: str, status: os.stat_result) -> None:
    """A file without any write permission, or one we may not write, is not ours to replace (as ``ruff`` or an
    editor would refuse to write it); the folder's write permission would let the rename do it anyway."""
    if not status.st_mode & 0o222:
        raise NotWritable(errno.EACCES, f"the file is read-only (mode {status.st_mode & 0o7777:04o})")
    if hasattr(os, "access") and not os.access(target, os.W_OK):
        raise NotWritable(errno.EACCES, "permission denied (the file is not writable)")


def _keep_owner(tmp: str, status: os.stat_result) -> None:
    if not hasattr(os, "chown"):
        return
    created = os.stat(tmp)  # owned by us, its group the folder's (set-group-ID folders) or ours
    if (status.st_uid, status.st_gid) != (created.st_uid, created.st_gid):
        try:
            os.chown(tmp, status.st_uid, status.st_gid)
        except OSError:
            raise NotWritable(
                errno.EPERM, f"replacing it would change its owner or group (uid {status.st_uid}, gid {status.st_gid})"
            ) from None


# -- parsing without crashing the process ----------------------------------------------------------------------
# libcst's native parser recurses on the machine stack: about 1,500 nested brackets, or a few thousand chained
# lambdas, unary or binary operators, overflow it and kill the whole process (SIGSEGV). So text that could nest
# deeply is first shown to CPython's parser, which refuses such code with a SyntaxError (the verdict we report)
# instead of crashing, and what it accepts is parsed by libcst on a thread with a large stack. Ordinary code,
# far below those depths, is parsed directly.
PARSER_STACK_BYTES = 512 * 1024 * 1024  # address space only: pages are committed as the parser touches them
SHALLOW_BRACKETS = 150  # below this bracket depth (strings included) libcst is safe with room to spare
SHALLOW_CHAINS = 500  # runs of lambdas / unary operators shorter than this are safe too
# One chain of ~12,000 binary operators overflows the main thread's stack (6,000 was seen to pass); a text with
# fewer operators than this in total cannot hold such a chain, so it may be parsed without the big-stack thread.
SHALLOW_OPERATORS = 3000
_OPERATOR_MARKS = ("+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "@", " and ", " or ", " if ")
_BRACKETS = lazy(r"[^()\[\]{}]+")
_BRACKET_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}
_UNARY_RUN = lazy(rf"[-+~][-+~\s]{{{SHALLOW_CHAINS},}}")
_WORD_RUNS = {word: re.compile(rf"(?:{word}\s+){{{SHALLOW_CHAINS},}}") for word in ("not", "await")}
# Calls, subscripts and attribute accesses chained on one expression (``a[0][0]...``, ``b.f().f()...``) nest the tree
# one level per part without any bracket nesting; libcst's parse time grows with the square of the chain's length
# (1,500 subscripts take seconds, 3,000 a quarter of a minute). Chains longer than MAX_CHAIN_PARTS are refused.
MAX_CHAIN_PARTS = 1000
# The cheap test for a chain: keep only the bytes a chain is made of (dots, brackets) and those that end a run
# (newlines, braces, ``#``, ``;``), then look for a long run. A line starting with a dot continues the line above
# (a chain written one part per line).
_CHAIN_BYTES = b".[](){}\n#;"
_NOT_CHAIN_BYTES = bytes(byte for byte in range(256) if byte not in _CHAIN_BYTES)
_CHAIN_RUN = lazy(rb"[.\[\]()]{%d,}" % SHALLOW_CHAINS)


_LINE_START_FEEDS = lazy(r"(?:^|(?<=\r))\f+", re.MULTILINE)  # before any blank of a line's indentation


class ParseFailure(ValueError):
    """libcst failed in a way other than a syntax error; reported like one."""


class NestingTooDeep(ValueError):
    """The code nests deeper than CPython's parser accepts; libcst would overflow the stack on it."""


class ParserLimit(ValueError):
    """Python accepts the code, but it is beyond what libcst parses (or parses in reasonable time)."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module`` guarded against native stack overflow and parser panics (both become errors)."""
    chains = _could_chain(text)
    deep = chains or _could_be_deep(text)
    if deep:
        _refuse_too_deep(text, chains)
    import libcst as cst

    outcome: dict[str, object] = {}

    def parse() -> None:
        try:
            outcome["module"] = cst.parse_module(text)
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread below
            outcome["error"] = exc

    with _checks_skipped_for_parsed_nodes(text):
        if deep:
            _on_big_stack(parse)  # a thread per such file: rare, and only these need the room
        else:
            parse()  # shallow code cannot come near the stack limit: no thread to start
    error = outcome.get("error")
    if error is None:
        return outcome["module"]  # type: ignore[return-value]
    if isinstance(error, cst.ParserSyntaxError) and _LINE_START_FEEDS.search(text):
        # libcst refuses a block whose first line starts with a form feed, which Python ignores there (the
        # tokenizer resets its column count). Parsed without those form feeds, the tree differs from the text in
        # form feeds only, which the locator maps through (positions and fixes stay exact).
        try:
            return parse_module(_LINE_START_FEEDS.sub("", text))
        except cst.ParserSyntaxError:
            pass
    if isinstance(error, (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError)):
        raise error
    # Anything else is a parse failure too: CSTValidationError (a name the tokenizer took but Python does not),
    # or a panic of the native parser, which arrives as a BaseException (pyo3's PanicException).
    raise ParseFailure(f"{type(error).__name__}: {error}") from error


@contextmanager
def _checks_skipped_for_parsed_nodes(text: str):
    """libcst checks every node it constructs (``CSTNode.__post_init__``: names are identifiers, whitespace is
    whitespace, brackets match), a sixth of a parse, although a node its parser builds from source satisfies those
    checks by construction. The one check source can fail, a name the tokenizer took that is not a Python
    identifier, needs a non-ASCII character, so for ASCII text the checks are skipped while the parser builds the
    tree; they are back for every node built afterwards (a fix's replacement nodes are checked as always)."""
    from libcst._nodes.base import CSTNode

    checks = CSTNode.__dict__.get("__post_init__")
    if checks is None or not text.isascii():
        yield
        return
    CSTNode.__post_init__ = _built_by_the_parser
    try:
        yield
    finally:
        CSTNode.__post_init__ = checks


def _built_by_the_parser(self) -> None:
    """A parsed node's checks: none (see _checks_skipped_for_parsed_nodes)."""


def _on_big_stack(function) -> None:
    """Run ``function`` in a thread whose stack is far larger than the main thread's usual 8 MiB."""
    previous = threading.stack_size()
    try:
        threading.stack_size(PARSER_STACK_BYTES)
    except (ValueError, RuntimeError):  # the platform refuses: parse on this thread's stack
        function()
        return
    try:
        worker = threading.Thread(target=function, name="ascendlint-parse", daemon=True)
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()


def bracket_depth(text: str) -> int:
    """Deepest bracket nesting, counting brackets inside strings and comments too (cheap and conservative)."""
    brackets = _BRACKETS.sub("", text).encode()
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def _operator_count(text: str) -> int:
    return sum(text.count(mark) for mark in _OPERATOR_MARKS)


def _could_chain(text: str) -> bool:
    """Cheap and conservative: could the text hold a chain of SHALLOW_CHAINS calls, subscripts or attributes?"""
    data = text.encode("utf-8", "surrogatepass").translate(None, b" \t")
    if b"\n." in data:  # a line that starts with a dot continues a chain: join it to the line above
        data = data.replace(b"\n.", b".")
    return _CHAIN_RUN.search(data.translate(None, _NOT_CHAIN_BYTES)) is not None


def _could_be_deep(text: str) -> bool:
    """Cheap and conservative (C-speed scans only): False means libcst cannot come near its stack limit."""
    return (
        text.count("elif") >= SHALLOW_CHAINS  # a long elif chain nests too (10,000 overflow libcst's stack)
        or _operator_count(text) >= SHALLOW_OPERATORS
        or bracket_depth(text) > SHALLOW_BRACKETS
        or text.count("lambda") >= SHALLOW_CHAINS
        or _UNARY_RUN.search(text) is not None
        or any(text.count(word) >= SHALLOW_CHAINS and run.search(text) for word, run in _WORD_RUNS.items())
    )


def _refuse_too_deep(text: str, chains: bool) -> None:
    """Raise NestingTooDeep where CPython refuses the nesting, ParserLimit for a chain longer than libcst takes."""
    try:
        with warnings.catch_warnings():  # e.g. "invalid escape sequence": not ours to print
            warnings.simplefilter("ignore")
            tree = compile(text, "<nesting>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg) or "too complex" in str(exc.msg):
            raise NestingTooDeep(f"{exc.msg} (line {exc.lineno})") from None
        # CPython stopped at another error first: decide on the (conservative) bracket depth alone.
        if bracket_depth(text) > 4 * SHALLOW_BRACKETS:
            raise NestingTooDeep("brackets nest too deeply to parse safely") from None
        return
    except (MemoryError, RecursionError):
        raise NestingTooDeep("the code nests too deeply (CPython's parser refuses it too)") from None
    except ValueError:  # e.g. NUL characters: libcst reports those itself
        return
    if chains:
        length, line = longest_chain(tree)
        if length > MAX_CHAIN_PARTS:
            raise ParserLimit(
                f"a chain of {length:,} calls, subscripts and attribute accesses is longer than the "
                f"{MAX_CHAIN_PARTS:,} parts ascendlint parses (libcst's time grows with the square of the length); "
                "the file was not linted",
                line,
            )


_CHAINED = (ast.Attribute, ast.Call, ast.Subscript)


def longest_chain(tree: ast.AST) -> tuple[int, int]:
    """The most calls, subscripts and attribute accesses applied one after another, and the line where it starts."""
    longest, line = 0, 0
    inside: set[int] = set()  # chain members already counted from the chain's outermost part
    for node in ast.walk(tree):  # breadth first: a chain's outermost part comes before its inner ones
        if not isinstance(node, _CHAINED) or id(node) in inside:
            continue
        length, part = 0, node
        while isinstance(part, _CHAINED):
            inside.add(id(part))
            length += 1
            part = part.func if isinstance(part, ast.Call) else part.value
        if length > longest:
            longest, line = length, getattr(part, "lineno", 1)
    return longest, line
