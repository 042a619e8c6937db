"""Small readings of Python syntax that several analyses share.

What an assignment target binds, whether a block leaves its function, whether a node is ``None`` or a given integer:
questions of the source text alone, asked alike by the grid, shape-evidence and NPU-reach analyses and the module
facts, so each is answered once here.
"""

from __future__ import annotations

import libcst as cst

from .literals import integer_value


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


def always_exits(statement: cst.CSTNode) -> bool:
    """A statement that always leaves its function: a ``return`` or ``raise``, or an ``if`` whose every branch
    (an ``else`` included) ends in one."""
    if type(statement) is cst.SimpleStatementLine:
        return any(type(small) in (cst.Return, cst.Raise) for small in statement.body)
    if type(statement) is cst.If:
        orelse = statement.orelse
        if orelse is None or not _suite_exits(statement.body):
            return False
        return always_exits(orelse) if type(orelse) is cst.If else _suite_exits(orelse.body)
    return False


def _suite_exits(body: cst.BaseSuite) -> bool:
    if type(body) is cst.SimpleStatementSuite:
        return any(type(small) in (cst.Return, cst.Raise) for small in body.body)
    return any(always_exits(statement) for statement in body.body)


def after_an_exit(index, node: cst.CSTNode) -> bool:
    """``node`` sits below an unconditional ``return`` or ``raise`` of a block that holds it (a debug path
    ``return out`` left above the real code, ``raise NotImplementedError`` above a path not finished), or below an
    ``if`` whose every branch returns or raises: it never runs. Statements of one function only; a nested function
    or class starts afresh."""
    child = node
    for ancestor in index.ancestors(node):
        if type(ancestor) in (cst.IndentedBlock, cst.Module):
            for statement in ancestor.body:
                if statement is child:
                    break
                if always_exits(statement):
                    return True
        if type(ancestor) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        child = ancestor
    return False


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` or passed as ``keyword``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


def builtin_name(func: cst.BaseExpression) -> str:
    return func.value if type(func) is cst.Name else ""


def integer_or_none(node) -> int | None:
    if type(node) is cst.Integer:
        return integer_value(node)
    return None


def pointer_base(expr: cst.BaseExpression) -> str | None:
    while True:
        if type(expr) is cst.Name:
            return expr.value
        if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
            expr = expr.left
            continue
        if type(expr) is cst.Subscript:
            expr = expr.value
            continue
        return None


def binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    mapping = {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.DivideAssign: cst.Divide,
        cst.PowerAssign: cst.Power, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
        cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    }
    return mapping.get(type(operator), cst.Add)()
