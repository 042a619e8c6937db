"""Reading and writing Python source byte-exactly: encoding (PEP 263 cookie, BOM) and line endings survive."""

from __future__ import annotations

import ast
import codecs
import errno
import hashlib
import io
import os
import re
import sys
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
from ..text.lazy_regex import lazy

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
    except (UnicodeError, ValueError, TypeError) as exc:  # codecs such as idna raise their own errors
        raise SourceDecodeError(f"cannot be read as {codec} ({type(exc).__name__}: {exc})") from exc
    return SourceText(text=text, encoding=codec, bom=bom)


# Linting holds the file's libcst tree, its CPython tree and the shared analyses at once: about 0.5 GB of memory
# and 12 s per MiB of kernel source (measured: 0.25 MiB 162 MB peak RSS, 0.5 MiB 291 MB, 1 MiB 549 MB), so 10 MiB
# would need about 5 GB. The largest file mentioning triton in the six corpus repositories and the held-out set is
# 100 KB; 1 MiB is ten times that, and bigger files are generated, not written.
MAX_SOURCE_BYTES = 1024 * 1024


class SourceTooLarge(OSError):
    """A file that mentions triton but is too large to parse in reasonable time and memory."""


# An oversized file is looked at only this far for "triton" (a generated kernel imports it at the top): the size is
# known before reading, and a 20 GiB file must cost what its first few MiB cost, not minutes.
MAX_SCAN_BYTES = 4 * MAX_SOURCE_BYTES


def read_source_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes; an oversized file is read only to learn whether it mentions triton near its start.

    Oversized files that do not mention triton in their first MAX_SCAN_BYTES come back empty (they are skipped like
    any such file); those that do raise SourceTooLarge, so the user hears about them instead of waiting minutes.
    """
    with open_regular(path) as handle:  # a FIFO or device swapped in after discovery must not block the run
        size = os.fstat(handle.fileno()).st_size  # before any read
        if size <= MAX_SOURCE_BYTES:
            data = handle.read(MAX_SOURCE_BYTES + 1)
            if len(data) <= MAX_SOURCE_BYTES:
                return data
            size = max(size, len(data))  # the file grew since it was measured
        elif not _stream_mentions(handle, b"triton", MAX_SCAN_BYTES):
            return b""
    raise SourceTooLarge(
        f"file is {size / 2**20:.1f} MiB, over the {MAX_SOURCE_BYTES // 2**20} MiB limit for linting; "
        "exclude it (extend-exclude) if it is generated"
    )


def _stream_mentions(handle, needle: bytes, limit: int, chunk_size: int = 1 << 20) -> bool:
    """Whether ``needle`` is in the first ``limit`` bytes of the stream."""
    tail, seen = b"", 0
    while seen < limit and (chunk := handle.read(min(chunk_size, limit - seen))):
        seen += len(chunk)
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
        _keep_extended_attributes(target, tmp)
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


def _keep_extended_attributes(target: str, tmp: str) -> None:
    """The file's extended attributes (``user.*`` tags, SELinux labels...) on its replacement, as far as we may set
    them: an attribute we may not copy is left behind rather than failing the fix."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(target)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(tmp, name, os.getxattr(target, name))
        except OSError:
            continue


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
# (1,000 subscripts take 0.8 s, 1,500 two seconds, 3,000 a quarter of a minute), whatever the line layout. Chains
# longer than MAX_CHAIN_PARTS are refused, and so are files whose long chains together would cost more than
# CHAIN_BUDGET (the sum of the squares of the lengths of chains, and of runs of binary operators, of LONG_CHAIN
# parts or more: three chains of 1,000).
MAX_CHAIN_PARTS = 1000
LONG_CHAIN = 100
CHAIN_BUDGET = 3 * MAX_CHAIN_PARTS**2  # about 2.5 s of libcst's time (a run of 2,000 "+" takes 1.3 s, of 2,900 4 s)
# The cheap measure of chains, independent of the layout (chain_runs): an upper bound on every chain's length,
# from the text without strings and comments (as a tokenizer ends them, see _code_only). Only a file whose bound
# goes past the limits is counted exactly on CPython's tree.
_TRIPLE = r"{q}{q}{q}(?:\\.|[^\\])*?{q}{q}{q}"  # backslash escapes skipped, in raw strings too
_SINGLE = r"{q}(?:\\.|[^{q}\\\r\n])*{q}"
_STRINGS_AND_COMMENTS = lazy(
    "|".join([_TRIPLE.format(q="'"), _TRIPLE.format(q='"'), _SINGLE.format(q="'"), _SINGLE.format(q='"'), r"#[^\r\n]*"]),
    re.S,
)
_GROUP = lazy(r"[(\[][^()\[\]{}]*[)\]]")  # a call's or subscript's brackets, nothing nested left inside
_BRACES = lazy(r"\{[^()\[\]{}]*\}")  # a display in braces is never a chain's part
_ATTRIBUTE = lazy(r"\.\w+")
_BLANKS = str.maketrans("", "", " \t\f\r\n\\")
_PART = "\x00"  # a call, a subscript or an attribute access (or a parenthesized head, conservatively)
_CHAIN_RUN = lazy(_PART + "{%d,}" % LONG_CHAIN)
# Python 3.12 lets an f-string's replacement fields reuse its quote (PEP 701), which the string pattern above
# cannot follow: there, a text with an f-string is always counted on the tree.
_NESTING_FSTRING = lazy(r"[fF][rRbB]?['\"]") if sys.version_info >= (3, 12) else None


# The parser's nodes, not the bytes, decide what linting a file costs: about 3 KB of memory and 50 microseconds
# per token with the default rules (measured: a list of 50,000 numbers, 100,000 tokens, 224 MB peak; a jit
# function of 98,000 tokens, 308 MB). The largest file mentioning triton in the corpora has about 30,000 tokens.
MAX_SOURCE_TOKENS = 100_000
_TOKENS = lazy(r"\w+|[^\w\s]")  # names and numbers, and every other character but blanks (over-counts operators)
_STRING = "\x02"

# CPython refuses a decimal literal of more digits than int() converts (4,300 by default): such a text is shown to
# CPython before libcst, which takes it, and the rules, which could not read its value.
_LONG_DIGITS = lazy(r"[0-9][0-9_]{4000,}")
# Text libcst takes that CPython refuses, so a file that Python cannot run would pass: a byte-order mark inside the
# text (a doubled one), a ``\N{...}`` escape (its name may not exist), a bytes literal (``"a" b"b"`` mixes kinds).
# Where one may occur, CPython judges the text first (rare in kernels: a compile costs a seventh of a parse).
_LIBCST_TAKES = lazy(r"\ufeff|\\N\{|(?<![\w'\"])(?:[bB][rR]?|[rR][bB])['\"]")

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
    code = _code_only(text)
    _refuse_too_many_tokens(text if code is None else code)
    runs = chain_runs(code)
    deep = code is None or _could_be_deep(text, code)
    if deep or not _chains_within_limits(runs) or _LONG_DIGITS.search(code) or _LIBCST_TAKES.search(text):
        deep = _judged_by_cpython(text) or deep  # counted exactly on CPython's tree; CPython judges long literals
    elif max(runs, default=0) >= SHALLOW_CHAINS:
        deep = True
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


def _refuse_too_many_tokens(code: str) -> None:
    """ParserLimit for a file of more than MAX_SOURCE_TOKENS tokens: what linting costs grows with the nodes the
    parser builds, not with bytes (a 1 MB list of small numbers took 2.2 GB and half a minute)."""
    if len(code) <= MAX_SOURCE_TOKENS:  # fewer characters than the limit: fewer tokens too
        return
    tokens = len(_TOKENS.findall(code))
    if tokens > MAX_SOURCE_TOKENS:
        raise ParserLimit(
            f"the file has {tokens:,} tokens, more than the {MAX_SOURCE_TOKENS:,} ascendlint lints in one file "
            "(linting holds about 3 KB per token); the file was not linted"
        )


def _code_depth(code: str) -> int:
    """A bound on the bracket nesting of ``code`` (strings and comments removed), unmatched closers included."""
    brackets = _BRACKETS.sub("", code).encode()
    depths = list(accumulate(map(_BRACKET_STEP.__getitem__, brackets)))
    return max(depths, default=0) - min(0, min(depths, default=0))


def _operator_count(text: str) -> int:
    return sum(text.count(mark) for mark in _OPERATOR_MARKS)


def _code_only(text: str) -> str | None:
    """The text without its strings and comments (as a tokenizer ends them); None where that cannot be told
    cheaply (Python 3.12 f-strings may reuse their quote inside). Brackets in strings neither nest nor close, so
    a bound on nesting or chains must not count them: ``f(')', f(')', ...`` nests 3,000 deep with a bracket count
    of one."""
    if _NESTING_FSTRING is not None and _NESTING_FSTRING.search(text):
        return None
    return _STRINGS_AND_COMMENTS.sub(_one_mark_per_string, text)


def _one_mark_per_string(match: re.Match) -> str:
    """A comment goes; a string stays as one mark (a token), which can never stand between two parts of a chain."""
    return "" if match.group().startswith("#") else _STRING


def chain_runs(code: str | None) -> list[int] | None:
    """Upper bounds on the lengths of the chains of LONG_CHAIN or more calls, subscripts or attribute accesses in
    ``code`` (``_code_only``), however they are laid out; None when the text must be counted on the tree.

    Conservative by construction: dropping text can only join runs, never split one, so a blank, a line break, a
    backslash, a comment or a string between two parts cannot hide a chain; each part becomes one mark, bracket
    groups are collapsed innermost first (one regular expression pass per bracket level, at most
    SHALLOW_BRACKETS), and a run is measured when the group holding it collapses. Two chains may be seen as one
    run, never one chain as two."""
    if code is None:
        return None
    marks = _ATTRIBUTE.sub(_PART, code.translate(_BLANKS))
    runs: list[int] = []

    def measured(group: re.Match) -> str:
        runs.extend(len(run.group()) for run in _CHAIN_RUN.finditer(group.group()))
        return _PART

    for _ in range(SHALLOW_BRACKETS + 1):
        marks, braces = _BRACES.subn("\x01", marks)  # a display in braces is never a chain's part
        long_run = marks.count(_PART) >= LONG_CHAIN and _CHAIN_RUN.search(marks) is not None
        marks, groups = _GROUP.subn(measured if long_run else _PART, marks)
        if not braces and not groups:
            runs.extend(len(run.group()) for run in _CHAIN_RUN.finditer(marks))
            return runs
    return None


def _chains_within_limits(runs: list[int] | None) -> bool:
    return runs is not None and max(runs, default=0) <= MAX_CHAIN_PARTS and _chain_cost(runs) <= CHAIN_BUDGET


def _chain_cost(lengths) -> int:
    return sum(length * length for length in lengths)


def _could_be_deep(text: str, code: str) -> bool:
    """Cheap and conservative (C-speed scans only): False means libcst cannot come near its stack limit."""
    return (
        text.count("elif") >= SHALLOW_CHAINS  # a long elif chain nests too (10,000 overflow libcst's stack)
        or _operator_count(text) >= SHALLOW_OPERATORS
        or _code_depth(code) > SHALLOW_BRACKETS
        or text.count("lambda") >= SHALLOW_CHAINS
        or _UNARY_RUN.search(text) is not None
        or any(text.count(word) >= SHALLOW_CHAINS and run.search(text) for word, run in _WORD_RUNS.items())
    )


def _judged_by_cpython(text: str) -> bool:
    """Raise NestingTooDeep where CPython refuses the nesting, ParserLimit for chains longer than libcst takes.

    The chains are counted on CPython's tree, and a text CPython refuses is refused at once: the finding is
    CPython's error either way, and libcst would spend seconds on the chain, or overflow its stack, first.
    Returns whether the text holds a chain long enough to need the big-stack parse."""
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
        raise _as_parser_error(text, exc) from None
    except (MemoryError, RecursionError):
        raise NestingTooDeep("the code nests too deeply (CPython's parser refuses it too)") from None
    except ValueError:  # e.g. NUL characters: libcst reports those itself
        return False
    lengths, operators = long_runs(tree)
    if not lengths and not operators:
        return False
    longest, line = max(lengths, default=(0, 0))
    if longest > MAX_CHAIN_PARTS:
        raise ParserLimit(
            f"a chain of {longest:,} calls, subscripts and attribute accesses is longer than the "
            f"{MAX_CHAIN_PARTS:,} parts ascendlint parses (libcst's time grows with the square of the length); "
            "the file was not linted",
            line,
        )
    if _chain_cost(length for length, _ in [*lengths, *operators]) > CHAIN_BUDGET:
        what = []
        if lengths:
            what.append(f"{len(lengths):,} chains of {LONG_CHAIN:,} or more calls, subscripts and attribute "
                        f"accesses (the longest {longest:,})")
        if operators:
            what.append(f"{len(operators):,} runs of {LONG_CHAIN:,} or more binary operators (the longest "
                        f"{max(operators)[0]:,})")
        raise ParserLimit(
            f"{' and '.join(what)} are more than ascendlint parses in one file (libcst's time grows with the square "
            "of each one's length); the file was not linted",
            max([*lengths, *operators])[1],
        )
    return longest >= SHALLOW_CHAINS or max(operators, default=(0, 0))[0] >= SHALLOW_CHAINS


def _as_parser_error(text: str, error: SyntaxError) -> Exception:
    """CPython's syntax error in the form libcst reports one (the engine words it as CPython does)."""
    import libcst as cst

    return cst.ParserSyntaxError(
        str(error.msg), lines=text.splitlines(True) or [""], raw_line=max(error.lineno or 1, 1),
        raw_column=max((error.offset or 1) - 1, 0),
    )


_CHAINED = (ast.Attribute, ast.Call, ast.Subscript)


def longest_chain(tree: ast.AST) -> tuple[int, int]:
    """The most calls, subscripts and attribute accesses applied one after another, and the line where it starts."""
    return max(chain_lengths(tree, 1), default=(0, 0))


def chain_lengths(tree: ast.AST, shortest: int = LONG_CHAIN) -> list[tuple[int, int]]:
    """(length, line) of every chain of at least ``shortest`` calls, subscripts and attribute accesses."""
    return long_runs(tree, shortest)[0]


def long_runs(tree: ast.AST, shortest: int = LONG_CHAIN) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(length, line) of every chain of at least ``shortest`` calls, subscripts and attribute accesses, and of every
    run of at least ``shortest`` binary operators (``a + b + ...``, which libcst also nests one level per operator).

    One pass over the tree without ``ast.walk``'s generators: a file of chains has a million nodes."""
    chains, operators = [], []
    stack: list = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        if isinstance(node, _CHAINED):
            length, part = 0, node
            while isinstance(part, _CHAINED):
                length += 1
                if isinstance(part, ast.Call):
                    extend(part.args)
                    extend(part.keywords)
                    part = part.func
                else:
                    if isinstance(part, ast.Subscript):
                        push(part.slice)
                    part = part.value
            if length >= shortest:
                chains.append((length, getattr(part, "lineno", 1)))
            push(part)
            continue
        if isinstance(node, ast.BinOp):
            length, part = 0, node
            while isinstance(part, ast.BinOp):
                length += 1
                push(part.right)
                part = part.left
            if length >= shortest:
                operators.append((length, getattr(part, "lineno", 1)))
            push(part)
            continue
        if not isinstance(node, ast.AST):  # None in a dict's keys, names in global statements
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                push(value)
            elif isinstance(value, list):
                extend(value)
    return chains, operators
