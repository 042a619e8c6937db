"""Long chains: findings keep their positions (no RecursionError turning them into ASC002), and chains longer than
the parser takes are refused at once with a clear ASC001 naming the limit, never parsed for minutes."""

from __future__ import annotations

import time

import pytest

from ascendlint.files import source
from tests.helpers import lint

KERNEL = (
    "import triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(x_ptr, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n{body}"
    "    tl.store(x_ptr + pid, pid)\n\ndef launch(x, n):\n    kernel[(n,)](x, BLOCK=128, num_warps=4)\n"
)
CHAINS = {
    "strings": lambda n: "    s = (\n" + "        'ab'\n" * n + "    )\n",
    "plus": lambda n: "    s = " + " + ".join(["pid"] * n) + "\n",
    "and": lambda n: "    s = " + " and ".join(["pid"] * n) + "\n",
    "if-else": lambda n: "    s = " + " if pid else ".join(["pid"] * n) + "\n",
    "subscripts": lambda n: "    s = x_ptr" + "[0]" * n + "\n",
    "calls": lambda n: "    s = x_ptr" + ".f()" * (n // 2) + "\n",
}


def _finding_lines(text: str) -> list[tuple[str, int]]:
    return [(d.code, d.location.row) for d in lint(text)]


@pytest.mark.parametrize("kind", sorted(CHAINS))
def test_a_chain_of_600_parts_keeps_every_finding(kind):
    text = KERNEL.format(body=CHAINS[kind](600))
    last_row = text.count("\n")
    assert _finding_lines(text) == [("ASC101", last_row)]


def test_the_standard_librarys_longest_string_concatenation_shape_is_linted():
    """pydoc_data/topics.py: a dict of long implicit concatenations, here with a kernel launch after it."""
    table = "topics = {" + ",\n".join(f"'t{i}': " + " ".join(["'line\\n'"] * 700) for i in range(3)) + "}\n"
    text = "import triton\n" + table + "def launch(k, x):\n    k[(1,)](x, num_warps=4)\n"
    assert _finding_lines(text) == [("ASC101", text.count("\n"))]


@pytest.mark.parametrize("chain", ["x = a" + "[0]" * 5000, "x = a" + ".b" * 5000, "x = a" + "()" * 5000,
                                   "x = (a\n" + "    .f()\n" * 3000 + ")"], ids=["subscripts", "attributes", "calls", "one-per-line"])
def test_chains_of_thousands_of_parts_are_refused_quickly(chain):
    text = "import triton\n" + chain + "\n"
    started = time.monotonic()
    found = lint(text)
    assert time.monotonic() - started < 5  # libcst alone needs from tens of seconds to minutes
    assert [d.code for d in found] == ["ASC001"]
    message = found[0].message
    assert "Parser limit: a chain of" in message or "nests too deeply (CPython's parser refuses it too)" in message


def test_a_chain_python_accepts_but_too_long_for_the_parser_names_the_limit():
    text = "import triton\n\nx = a" + "[0]" * 1200 + "\n"
    with pytest.raises(source.ParserLimit):
        source.parse_module(text)
    (found,) = lint(text)
    assert found.code == "ASC001" and found.location.row == 3
    assert found.message.startswith("Parser limit: a chain of 1,200 calls, subscripts and attribute accesses")
    assert f"{source.MAX_CHAIN_PARTS:,} parts" in found.message and "SyntaxError" not in found.message


def test_chain_lengths_are_counted_on_pythons_tree():
    import ast

    assert source.longest_chain(ast.parse("a.b(c)[d].e\nf(g(h(i)))\n")) == (4, 1)  # nesting is not chaining
    assert source.longest_chain(ast.parse("x = 1\n")) == (0, 0)


def test_chain_text_inside_a_string_or_comment_is_not_refused():
    text = ("import triton\ns = '" + "[0]" * 3000 + "'\n# " + ".f()" * 3000 + '\nt = """\n' + "[0]\n" * 3000
            + '"""\n')
    assert source.chain_runs(source._code_only(text)) == []  # strings and comments are dropped before looking
    assert lint(text) == []


# Every layout of one chain of N parts: one per line (the layout that used to pass the cheap test and take
# minutes), with comments, backslashes and arguments spread over lines between the parts, and with argument text
# (strings holding ``#``, ``;``, braces) that ended a run in a test that looked at bytes only.
LAYOUTS = {
    "one-per-line": lambda n: "x = (a\n" + "[0]\n" * n + ")\n",
    "one-per-line-indented": lambda n: "x = (\n    a\n" + "    [0]\n" * n + ")\n",
    "comment-between": lambda n: "x = (a  # c\n" + "  # c\n  .f()  # c\n" * (n // 2) + ")\n",
    "arguments-over-lines": lambda n: "x = (a\n" + "(\n  ')', b,\n  c\n)\n" * n + ")\n",
    "backslashes": lambda n: "x = a\\\n" + "[0]\\\n" * (n - 1) + "[0]\n",
    "hash-in-subscript": lambda n: "x = a" + "['#']" * n + "\n",
    "brace-in-subscript": lambda n: "x = a" + "[{}]" * n + "\n",
    "semicolon-string": lambda n: "x = a" + "[';']" * n + "\n",
    "triple-quoted-argument": lambda n: "x = a" + '("""\nz\n""")' * n + "\n",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_cheap_test_sees_a_chain_whatever_its_layout(layout):
    import ast

    text = "import triton\n" + LAYOUTS[layout](source.LONG_CHAIN)
    length = source.longest_chain(ast.parse(text))[0]
    assert length >= source.LONG_CHAIN
    assert max(source.chain_runs(source._code_only(text))) >= length


@pytest.mark.parametrize("parts", [1200, 3000, 20000])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_long_chain_is_refused_in_milliseconds_whatever_its_layout(layout, parts):
    """3,000 ``[0]`` one per line took 16 s and passed; 20,000 ran for minutes. CPython takes the 1,200-part
    forms (a Parser limit) and refuses the longer ones (RecursionError: nests too deeply)."""
    text = "import triton\n" + LAYOUTS[layout](parts)
    started = time.monotonic()
    found = lint(text)
    assert time.monotonic() - started < 2
    assert [d.code for d in found] == ["ASC001"]
    message = found[0].message
    assert ("Parser limit: a chain of" in message or "nests too deeply (CPython's parser refuses it too)" in message
            or "tokens, more than the 100,000" in message)


def test_chains_below_the_limit_are_refused_together_when_their_cost_adds_up():
    """Each chain of 900 parts is under the limit, but libcst spends most of a second on each: 300 of them (0.8 MB,
    under the size limit) would take minutes. Their cost is bounded per file."""
    text = "import triton\n" + ("x = (a\n" + "[0]\n" * 900 + ")\n") * 4
    (found,) = lint(text)
    assert found.code == "ASC001" and found.message.startswith("Parser limit: 4 chains of 100 or more")


def test_runs_of_binary_operators_count_toward_the_budget():
    """libcst nests ``a + b + ...`` one level per operator too: 2,900 terms took 4 s of CPU each."""
    text = "import triton\n" + ("s = " + " + ".join(["x"] * 1_500) + "\n") * 4
    (found,) = lint(text)
    assert found.code == "ASC001" and "4 runs of 100 or more binary operators (the longest 1,499)" in found.message


@pytest.mark.slow
def test_the_worst_file_of_chains_under_the_size_limit_is_refused_in_seconds():
    text = "import triton\n" + ("x = (a\n" + "[0]\n" * 1000 + ")\n") * 30  # just under the token limit
    assert len(text) < source.MAX_SOURCE_BYTES
    started = time.monotonic()
    (found,) = lint(text)
    assert time.monotonic() - started < 10
    assert found.code == "ASC001" and found.message.startswith("Parser limit: 30 chains of 100 or more")


def test_two_chains_of_600_and_1000_parts_are_still_linted():
    text = KERNEL.format(body=CHAINS["subscripts"](600) + CHAINS["calls"](1000))
    assert _finding_lines(text) == [("ASC101", text.count("\n"))]


def test_a_long_chain_in_a_file_python_refuses_is_its_syntax_error_at_once():
    text = "import triton\nx = (a\n" + "[0]\n" * 1500 + ")\ndef f(:\n    pass\n"
    started = time.monotonic()
    (found,) = lint(text)
    assert time.monotonic() - started < 2
    assert found.code == "ASC001" and found.message.startswith("SyntaxError:") and found.location.row == 1504


def test_realistic_code_never_reaches_the_chain_check():
    text = "import triton\n" + "y = a.b.c(d)[0].e(f, g).h\n" * 2000
    assert source.chain_runs(source._code_only(text)) == []


def test_ten_thousand_elif_branches_are_refused_not_a_crash():
    """libcst's native parser overflows the stack past about 8,000 branches (SIGSEGV); CPython refuses far fewer."""
    text = "import triton\nif a:\n    pass\n" + "elif a:\n    pass\n" * 10000
    (found,) = lint(text)
    assert found.code == "ASC001" and "too deeply" in found.message


# -- valid Python libcst cannot parse: the parser is the limit, not the code -----------------------------------


@pytest.mark.parametrize("construct", [
    "(x): bool = True\n",  # a parenthesized annotation target
    "(self.flag): int = 1\n",
    "x = (\n" + "    'a'\n" * 4000 + ")\n",  # implicit concatenation longer than libcst's parser takes
], ids=["parenthesized-name", "parenthesized-attribute", "4000-strings"])
def test_valid_python_libcst_rejects_is_a_parser_limit_not_a_syntax_error(construct):
    text = "import triton\n" + construct
    compile(text, "<test>", "exec")  # valid Python
    (found,) = lint(text)
    assert found.code == "ASC001"
    assert found.message.startswith("Parser limit: libcst, the parser ascendlint uses, cannot parse this code")
    assert "SyntaxError" not in found.message


def test_real_syntax_errors_are_still_syntax_errors():
    (found,) = lint("import triton\n(x) bool = True\n")
    assert found.message.startswith("SyntaxError:")
