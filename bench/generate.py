"""Long kernel modules generated from this repository's own kernels, for the scaling and memory checks.

The material is only what the repository holds itself: ``examples/``, ``reference_kernels/`` and the rules'
VALID/INVALID examples (``bench.corpus.kernel_sources``), never third-party code. A module repeated in one file
gets its top-level functions and classes renamed per copy (``name`` becomes ``name_r3``, and so do the references
to it; ``name_p3`` for the pieces of a long module), so the copies are distinct kernels, as in a real file, rather than one kernel redefined; attribute names,
keyword arguments and imports keep their spelling. ``from __future__`` imports move to the top, so every generated
module is valid Python (checked with CPython's parser).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

import libcst as cst


class _Renamer(cst.CSTTransformer):
    """Appends ``suffix`` to every use of the given names, except attribute names, keywords and imported names."""

    def __init__(self, names: set[str], suffix: str) -> None:
        super().__init__()
        self.names, self.suffix = names, suffix
        self._keep: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._keep.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._keep.add(id(node.keyword))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value in self.names and id(original) not in self._keep:
            return updated.with_changes(value=original.value + self.suffix)
        return updated


class _Decorator(cst.CSTTransformer):
    """Puts ``@triton.jit`` on every function that has no decorator (the "decorated file" of the memory check)."""

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if updated.decorators:
            return updated
        jit = cst.Decorator(cst.Attribute(cst.Name("triton"), cst.Name("jit")))
        return updated.with_changes(decorators=[jit])


@dataclass(frozen=True)
class _Parts:
    future: tuple[str, ...]  # the module's ``from __future__`` lines
    body: cst.Module  # the module without them
    defined: frozenset[str]  # top-level function and class names


@lru_cache(maxsize=None)
def _parts(text: str) -> _Parts:
    module = cst.parse_module(text)
    future, body, defined = [], [], set()
    for statement in module.body:
        if (
            isinstance(statement, cst.SimpleStatementLine)
            and isinstance(statement.body[0], cst.ImportFrom)
            and isinstance(statement.body[0].module, cst.Name)
            and statement.body[0].module.value == "__future__"
        ):
            future.append(module.code_for_node(statement).strip())
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            defined.add(statement.name.value)
        body.append(statement)
    return _Parts(tuple(future), module.with_changes(body=body), frozenset(defined))


def copy_of(text: str, suffix: str, decorate: bool = False) -> tuple[tuple[str, ...], str]:
    """(future imports, body) of one copy of a module, its top-level functions and classes renamed ``name + suffix``."""
    parts = _parts(text)
    body = parts.body.visit(_Renamer(set(parts.defined), suffix))
    if decorate:
        body = body.visit(_Decorator())
    code = body.code
    return parts.future, code if code.endswith("\n") else code + "\n"


def assemble(pieces: list[tuple[tuple[str, ...], str]]) -> str:
    """One module from renamed copies: the union of their future imports first, then the bodies in order."""
    future = sorted({line for lines, _ in pieces for line in lines})
    head = "".join(f"{line}\n" for line in future)
    text = head + "\n".join(body for _, body in pieces)
    ast.parse(text)  # a generated module must be valid Python, or the measurement means nothing
    return text


def usable_sources() -> list[tuple[str, str]]:
    """The repository's kernel sources that CPython accepts (the syntax-error examples are left out)."""
    from bench.corpus import kernel_sources

    found = []
    for name, text in kernel_sources():
        try:
            ast.parse(text)
            cst.parse_module(text)
        except (SyntaxError, ValueError, cst.ParserSyntaxError):
            continue
        found.append((name, text))
    return found


def repeated(text: str, times: int) -> str:
    """One module holding ``times`` renamed copies of ``text``."""
    return assemble([copy_of(text, f"_r{number}") for number in range(times)])


def split_and_whole(total_lines: int, parts: int, decorate: bool = False) -> tuple[list[str], str]:
    """``parts`` modules of about ``total_lines / parts`` lines each, and one module holding all of their code.

    The pieces cycle through every usable source; piece n has its names suffixed ``_pn`` (two sources may define
    the same name), so no two pieces define the same name and the single module is exactly the parts' code.
    """
    sources = usable_sources()
    modules: list[list] = []
    position = 0
    for _ in range(parts):
        pieces, lines = [], 0
        while lines < total_lines // parts:
            _, text = sources[position % len(sources)]
            piece = copy_of(text, f"_p{position}", decorate)
            pieces.append(piece)
            lines += piece[1].count("\n") + 1
            position += 1
        modules.append(pieces)
    return [assemble(pieces) for pieces in modules], assemble([piece for pieces in modules for piece in pieces])


@lru_cache(maxsize=None)
def kernel_module(lines: int, decorate: bool = False) -> str:
    """One generated module of at least ``lines`` lines."""
    return split_and_whole(lines, 1, decorate)[1]
