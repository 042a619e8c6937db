"""Whether two expressions are written the same, however each is laid out.

A fix that reloads a tile repeats its load's pointer expression, sometimes printed back on one line without the
original's comments or line breaks; rules that count tiles or offsets see the two as one."""

from __future__ import annotations

import ast
import warnings

import libcst as cst


def as_parsed(module: cst.Module, expr: cst.BaseExpression) -> str:
    """The expression as CPython reads it (no spaces, comments, line breaks or redundant parentheses)."""
    code = module.code_for_node(expr)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an invalid escape in a string: a SyntaxWarning, not ours to give
            return ast.dump(ast.parse("(" + code + "\n)", mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
