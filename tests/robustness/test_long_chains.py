"""Long chains: findings keep their positions (no RecursionError turning them into ASC002), and chains longer than
the parser takes are refused at once with a clear ASC001 naming the limit, never parsed for minutes."""

from __future__ import annotations

import time

import pytest

from ascendlint import source
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


def test_chain_text_inside_a_string_is_not_refused():
    text = "import triton\ns = '" + "[0]" * 3000 + "'\n"
    assert source._could_chain(text)  # the cheap test fires; Python's tree has no chain
    assert lint(text) == []


def test_realistic_code_never_reaches_the_chain_check():
    text = "import triton\n" + "y = a.b.c(d)[0].e(f, g).h\n" * 2000
    assert not source._could_chain(text)


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
