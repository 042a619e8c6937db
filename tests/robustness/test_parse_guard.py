"""The guarded parse: deep nesting becomes a syntax finding instead of a native stack overflow (SIGSEGV)."""

from __future__ import annotations

import libcst as cst
import pytest

from ascendlint.files import source
from tests.helpers import lint
from tests.robustness.harness import examine


def nested(depth: int, tail: str = "") -> str:
    return "import triton\nx = " + "(" * depth + "1" + ")" * depth + "\n" + tail


def test_nesting_cpython_refuses_is_refused_before_libcst_sees_it():
    with pytest.raises(source.NestingTooDeep, match="too many nested parentheses"):
        source.parse_module(nested(5000))


def test_nesting_cpython_accepts_is_parsed_and_linted_with_positions():
    launch = "def run(k, x):\n    y = [" + "(" * 150 + "x" + ")" * 150 + "]\n    k[(1,)](y, num_warps=4)\n"
    found = lint(nested(190, launch))
    assert [d.code for d in found] == ["ASC101"]
    assert examine(nested(190, launch))


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = "import triton\ns = '" + "(" * 3000 + "'\n"
    assert source.bracket_depth(text) > 1000
    assert isinstance(source.parse_module(text), cst.Module)


def test_newer_syntax_with_deep_brackets_is_refused_on_the_bracket_count():
    text = "type Alias = int\n" + nested(2000)  # CPython 3.11 stops at `type`, before the brackets
    with pytest.raises(source.NestingTooDeep):
        source.parse_module(text)


def test_newer_syntax_with_shallow_brackets_is_left_to_libcst():
    text = "type Alias = int\nx = [[1]]\n"
    assert source.parse_module(text).code == text


def test_a_panic_in_the_native_parser_becomes_a_value_error(monkeypatch):
    class FakePanic(BaseException):
        pass

    def panic(text):
        raise FakePanic("internal parser error")

    monkeypatch.setattr(cst, "parse_module", panic)
    with pytest.raises(source.ParseFailure, match="FakePanic: internal parser error"):
        source.parse_module("import triton\n")


def test_parse_errors_reach_the_caller_unchanged():
    with pytest.raises(cst.ParserSyntaxError):
        source.parse_module("def f(:\n")


def test_names_the_tokenizer_accepts_but_python_does_not_become_a_syntax_finding():
    text = "import triton\nx\U0003203e = 1\n"  # a character outside Python's identifier set
    found = lint(text)
    assert [d.code for d in found] == ["ASC001"]
    assert "is not a valid identifier" in found[0].message


@pytest.mark.parametrize("shape", [
    "x = " + "f(')', " * 3000 + "1" + ")" * 3000,  # every opening bracket followed by a closing one in a string
    "s = '" + ")" * 3000 + "'\nx = " + "(" * 3000 + "1" + ")" * 3000,  # closers in a string lower the count first
    "x = " + "f(1, # )\n" * 3000 + "1" + ")" * 3000,  # closers in comments
])
def test_brackets_in_strings_cannot_hide_nesting_from_the_guard(shape):
    """Counting every bracket, strings' included, saw depth 1 for ``f(')', f(')', ...``: libcst got 3,000 nested
    calls on the main thread's stack and the process died (SIGSEGV)."""
    with pytest.raises(source.NestingTooDeep):
        source.parse_module("import triton\n" + shape + "\n")


@pytest.mark.parametrize("data, words", [
    (b"\xef\xbb\xbf\xef\xbb\xbfimport triton\nx = 1\n", "U+FEFF"),  # a doubled byte-order mark
    (b"import triton\nx = '\\N{NOT A NAME}'\n", "unicode error"),
    (b"import triton\nx = 'a' b'b'\n", "cannot mix bytes and nonbytes literals"),
    (b"# coding: punycode\nimport triton\nx = 1\n", "punycode"),
], ids=["doubled-bom", "unknown-character-name", "bytes-and-str", "punycode"])
def test_files_cpython_refuses_are_asc001_although_libcst_takes_them(data, words):
    from tests.helpers import lint

    try:
        text = source.decode_source(data).text
    except source.SourceDecodeError as exc:  # refused while decoding: ASC001 "cannot be decoded" (runner)
        assert words in str(exc)
        return
    (found,) = lint(text)
    assert found.code == "ASC001" and words in found.message


def test_what_cpython_takes_among_those_shapes_is_still_linted():
    from tests.helpers import lint

    text = ("import triton\nx = b'a' b'b'\ny = r'\\N{x}'\nz = '\\N{BULLET}'\n"
            "def run(k, x):\n    k[(1,)](x, num_warps=4)\n")
    assert [d.code for d in lint(text)] == ["ASC101"]
