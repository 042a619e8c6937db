"""Small readings of Python syntax that several analyses share.

What an assignment target binds, whether a block leaves its function, whether a node is ``None`` or a given integer:
questions of the source text alone, asked alike by the grid, shape-evidence and NPU-reach analyses and the module
facts, so each is answered once here.
"""

from __future__ import annotations

import libcst as cst


def is_none(expr) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def is_integer(node, value: int) -> bool:
    return type(node) is cst.Integer and node.evaluated_value == value


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names an assignment, ``for`` or ``with`` target binds (``a``, ``a, (b, *c)``)."""
    if type(target) is cst.Name:
        return [target.value]
    if type(target) in (cst.Tuple, cst.List):
        return [name for element in target.elements for name in target_names(element.value)]
    if type(target) is cst.StarredElement:
        return target_names(target.value)
    return []


def block_exits(body: cst.BaseSuite) -> bool:
    """A block whose last statement returns or raises."""
    if type(body) is cst.SimpleStatementSuite:
        last = body.body[-1] if body.body else None
    else:
        line = body.body[-1] if body.body else None
        last = line.body[-1] if type(line) is cst.SimpleStatementLine and line.body else None
    return type(last) in (cst.Return, cst.Raise)
