"""Hypothesis strategies that damage kernel sources the way editing, merging and generators do.

Most mutations keep the code parseable (so the rules really run on odd-but-valid kernels); some break it on purpose
(so the syntax-error path and half-written code are exercised too).
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d*)?\b")
_NUMBERS = ["0", "1", "-1", "2", "3", "65535", "65536", "2**31", "2**40", "1.5", "0.0", "None", "True"]
_SNIPPETS = [
    "(", ")", "[", "]", ":", ",", ".", "=", "*", "**", "\\", "#", "'", '"', '"""', "\n", "\t", "    ",
    "lambda: ", "await ", "yield ", "not ", "None", "tl.constexpr", "tl.load(", "tl.store(", "tl.dot(",
    "tl.program_id(0)", "tl.arange(0, 16)", ".to(tl.int64)", "dl.wait(", "dl.notify(", "shmem.putmem(",
    "@triton.jit\n", "@triton.autotune(configs=[], key=[])\n", "kernel[(1,)](", "num_warps=4", "# noqa",
    "# noqa: ASC101", "# ascendlint: skip-file\n", "async ", "global x\n", "del x\n", "pass\n", "\r\n", "\x0c",
    "é", "\u2028", "ƒ = 1\n", "\U0003203e",
]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


LINE_BREAK_KINDS = ("lone_cr", "form_feed_line", "u2028")


@st.composite
def mutation(draw, text: str, kinds: tuple[str, ...] | None = None) -> str:
    """One edit of ``text`` (of one of ``kinds``, when given)."""
    lines = _lines(text)
    kind = draw(
        st.sampled_from(list(kinds) if kinds else
            ["delete_lines", "duplicate_line", "swap_lines", "rename", "renumber", "insert", "delete_span",
             "indent", "truncate", "crlf", "tabs", "move_block", "parenthesize", "lone_cr", "form_feed_line",
             "u2028"]
        )
    )
    row = draw(st.integers(0, len(lines) - 1))
    if kind == "delete_lines":
        count = draw(st.integers(1, 3))
        return "".join(lines[:row] + lines[row + count :])
    if kind == "duplicate_line":
        return "".join(lines[: row + 1] + [lines[row]] + lines[row + 1 :])
    if kind == "swap_lines":
        other = draw(st.integers(0, len(lines) - 1))
        lines[row], lines[other] = lines[other], lines[row]
        return "".join(lines)
    if kind == "move_block":
        count = draw(st.integers(1, 6))
        block, rest = lines[row : row + count], lines[:row] + lines[row + count :]
        target = draw(st.integers(0, len(rest)))
        return "".join(rest[:target] + block + rest[target:])
    if kind == "rename":
        names = sorted(set(_IDENTIFIER.findall(text))) or ["x"]
        old, new = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        return re.sub(rf"\b{re.escape(old)}\b", new, text, count=draw(st.integers(0, 3)))
    if kind == "renumber":
        spans = [m.span() for m in _NUMBER.finditer(text)]
        if not spans:
            return text
        start, end = draw(st.sampled_from(spans))
        return text[:start] + draw(st.sampled_from(_NUMBERS)) + text[end:]
    if kind == "lone_cr":  # a lone CR ends a line for Python and LSP: one line ending, or all of them
        if draw(st.booleans()):
            return text.replace("\r\n", "\n").replace("\n", "\r")
        ends = [i for i, c in enumerate(text) if c == "\n"]
        if not ends:
            return text + "\r"
        at = draw(st.sampled_from(ends))
        return text[:at] + "\r" + text[at + 1 :]
    if kind == "form_feed_line":  # a form feed starting a line: Python ignores it, libcst and splitlines do not
        lines[row] = "\f" + lines[row]
        return "".join(lines)
    if kind == "u2028":  # not a line break for Python or LSP, but one for str.splitlines (in a comment or string)
        line = lines[row]
        where = line.find("#") if "#" in line else line.find('"')
        if where == -1:
            lines[row] = line.rstrip("\r\n") + "  # a\u2028b" + line[len(line.rstrip("\r\n")):]
        else:
            lines[row] = line[: where + 1] + "\u2028" + line[where + 1 :]
        return "".join(lines)
    if kind == "parenthesize":
        spans = [m.span() for m in _IDENTIFIER.finditer(text)]
        if not spans:
            return text
        start, end = draw(st.sampled_from(spans))
        return f"{text[:start]}({text[start:end]}){text[end:]}"
    position = draw(st.integers(0, len(text)))
    if kind == "insert":
        return text[:position] + draw(st.sampled_from(_SNIPPETS)) + text[position:]
    if kind == "delete_span":
        return text[:position] + text[position + draw(st.integers(1, 12)) :]
    if kind == "indent":
        change = draw(st.sampled_from(["    ", "  ", "\t", ""]))
        line = lines[row]
        lines[row] = change + line if draw(st.booleans()) else line[len(line) - len(line.lstrip(" \t")) :]
        return "".join(lines)
    if kind == "truncate":
        return text[:position]
    if kind == "crlf":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.replace("    ", "\t")  # tabs


@st.composite
def mutated(draw, sources: list[tuple[str, str]], max_edits: int = 4) -> tuple[str, str]:
    """(name of the original, text after one to ``max_edits`` edits)."""
    name, text = draw(st.sampled_from(sources))
    for _ in range(draw(st.integers(1, max_edits))):
        text = draw(mutation(text))
    return name, text


@st.composite
def with_line_breaks(draw, sources: list[tuple[str, str]]) -> tuple[str, str]:
    """A source with lone CRs, form feeds starting lines and U+2028 in comments and strings (one to four)."""
    name, text = draw(st.sampled_from(sources))
    for _ in range(draw(st.integers(1, 4))):
        text = draw(mutation(text, LINE_BREAK_KINDS))
    return name, text


@st.composite
def with_form_feeds(draw, sources: list[tuple[str, str]]) -> tuple[str, str]:
    """A source with form feeds at line starts (before or inside the indentation) and between tokens.

    libcst leaves a form feed at the start of an indented line out when it prints the tree back, which once moved
    every position after it by a column.
    """
    name, text = draw(st.sampled_from(sources))
    lines = text.split("\n")
    if draw(st.booleans()):  # every line: whatever line a fix is on, its block has form feeds before it
        lines = ["\f" + line if line.strip() else line for line in lines]
    for _ in range(draw(st.integers(0, 4))):
        row = draw(st.integers(0, len(lines) - 1))
        line = lines[row]
        indent = len(line) - len(line.lstrip(" \t"))
        where = draw(st.sampled_from(["line-start", "after-indent", "blank-line", "between-tokens"]))
        if where == "line-start":
            lines[row] = "\f" + line
        elif where == "after-indent":
            lines[row] = line[:indent] + "\f" + line[indent:]
        elif where == "blank-line":
            lines.insert(row, "\f")
        else:
            spaces = [i for i, c in enumerate(line) if c == " " and i >= indent]
            if spaces:
                at = draw(st.sampled_from(spaces))
                lines[row] = line[:at] + " \f" + line[at:]
    return name, "\n".join(lines)


_CHAINS = {
    "strings": lambda n: "(" + " ".join(['"ab"'] * n) + ")",
    "plus": lambda n: " + ".join(["x"] * n),
    "and": lambda n: " and ".join(["x"] * n),
    "if-else": lambda n: " if x else ".join(["x"] * n),
    "subscripts": lambda n: "x" + "[0]" * n,
    "attributes": lambda n: "x" + ".y" * n,
    "calls": lambda n: "x" + ".f()" * (n // 2),
}


@st.composite
def with_long_chain(draw, sources: list[tuple[str, str]]) -> tuple[str, str]:
    """A source with one long chain (hundreds of parts) assigned on a line of its own, inside a kernel or not."""
    name, text = draw(st.sampled_from(sources))
    lines = text.split("\n")
    row = draw(st.integers(0, len(lines)))
    kind = draw(st.sampled_from(sorted(_CHAINS)))
    parts = draw(st.sampled_from([300, 600, 900]))
    reference = lines[row] if row < len(lines) else ""
    indent = reference[: len(reference) - len(reference.lstrip(" \t"))]
    lines.insert(row, f"{indent}chained = {_CHAINS[kind](parts)}")
    return f"{name}+{kind}x{parts}", "\n".join(lines)



# -- damaged notebooks ----------------------------------------------------------------------------------------------
def _notebook_json(**changes) -> str:
    import json

    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import triton\n", "def run(k, x):\n", "    k[(1,)](x, num_warps=4)\n"]}
    book = {"nbformat": 4, "nbformat_minor": 4, "metadata": {"kernelspec": {"language": "python"}}, "cells": [cell],
            "x_note": "import triton"}  # whatever is damaged, the prefilter still sees triton
    for key, value in changes.items():
        if key.startswith("cell_"):
            cell[key[len("cell_"):]] = value
        else:
            book[key] = value
    return json.dumps(book, indent=1)


# Each one mentions triton (or the prefilter would skip it) and is damaged in a way a hand edit, a merge or a
# generator produces.
MALFORMED_NOTEBOOKS = {
    "cell-is-a-string": _notebook_json(cells=["import triton"]),
    "cell-is-null": _notebook_json(cells=[None, "import triton"]),
    "cell-metadata-string": _notebook_json(cell_metadata="import triton"),
    "cell-outputs-string": _notebook_json(cell_outputs="import triton"),
    "cell-outputs-bad-items": _notebook_json(cell_outputs=["import triton", 3]),
    "source-holds-a-number": _notebook_json(cell_source=["import triton\n", 3]),
    "source-is-an-object": _notebook_json(cell_source={"import triton": 1}),
    "cell-type-missing": _notebook_json(cell_cell_type=None),
    "metadata-string": _notebook_json(metadata="import triton"),
    "kernelspec-string": _notebook_json(metadata={"kernelspec": "python"}),
    "cells-an-object": _notebook_json(cells={"import triton": 1}),
    "cells-missing": _notebook_json(cells=None),
    "format-a-string": _notebook_json(nbformat="4"),
    "format-3": _notebook_json(nbformat=3),
    "document-a-list": '["import triton", 1]',
    "document-a-string": '"import triton"',
    "truncated": _notebook_json()[:-40],
    "deeply-nested": '{"nbformat": 4, "cells": ' + "[" * 100_000 + "]" * 100_000 + ', "x": "import triton"}',
}


@st.composite
def malformed_notebook(draw) -> str:
    """A damaged notebook: one of the fixed shapes, or a valid one with a random part replaced by a random value."""
    import json

    if draw(st.booleans()):
        return MALFORMED_NOTEBOOKS[draw(st.sampled_from(sorted(MALFORMED_NOTEBOOKS)))]
    book = json.loads(_notebook_json())
    junk = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.just([]), st.just({}),
                     st.just(["x", 1]))
    paths = [("cells",), ("metadata",), ("nbformat",), ("cells", 0), ("cells", 0, "source"),
             ("cells", 0, "source", 0), ("cells", 0, "metadata"), ("cells", 0, "outputs"),
             ("cells", 0, "cell_type"), ("metadata", "kernelspec"), ("metadata", "kernelspec", "language")]
    *parents, last = draw(st.sampled_from(paths))
    target = book
    for key in parents:
        target = target[key]
    target[last] = draw(junk)
    return json.dumps(book)
