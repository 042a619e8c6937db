"""The shared intra-kernel value analysis: what each name and expression inside a kernel can be.

Built once per kernel (on first request) and used by every rule that reasons about values. It is deliberately
small: each local name is summarised over all of its assignments in the kernel (flow-insensitive), which is
enough for "is this constexpr", "is this widened to int64", "is this a pointer". A property that must hold on every
path ("constexpr", "int64") requires it of every assignment; a property that may hold ("pointer", "runtime") needs
one.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from .kernel_facts import Kernel, ModuleFacts
from .walk import NodeIndex

_INT64 = {"tl.int64", "tl.uint64"}
_POINTER_SINKS = {"tl.load", "tl.store", "tl.make_block_ptr"}
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Divide, cst.Power,
               cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
_LOOP = object()  # marker: the name is a loop variable


class KernelAnalysis:
    def __init__(self, kernel: Kernel, facts: ModuleFacts, index: NodeIndex) -> None:
        self.kernel = kernel
        self.facts = facts
        self.index = index
        self.nodes = index.subtree(kernel.node)
        self.assignments: dict[str, list] = {}
        self.loops: list[cst.For] = []
        for node in self.nodes:
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    self._bind(target.target, node.value)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                self._bind(node.target, node.value)
            elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                combined = cst.BinaryOperation(left=node.target, operator=_binary_of(node.operator), right=node.value)
                self.assignments.setdefault(node.target.value, []).append(combined)
            elif isinstance(node, cst.For):
                self.loops.append(node)
                for name in _names_in_target(node.target):
                    self.assignments.setdefault(name, []).append(_LOOP)
            elif isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name):
                self.assignments.setdefault(node.target.value, []).append(node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.assignments.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for i, element in enumerate(target.elements):
                sub = values[i].value if values is not None and i < len(values) else value
                self._bind(element.value, sub)

    # -- names -------------------------------------------------------------------------------------------------
    def is_param(self, name: str) -> bool:
        return name in self.kernel.params and name not in self.assignments

    @cached_property
    def pointer_params(self) -> set[str]:
        """Parameters that are the base of pointer arithmetic reaching a load, store, atomic or block pointer."""
        bases: set[str] = set()
        pending: list[cst.BaseExpression] = []
        for node in self.nodes:
            if isinstance(node, cst.Call) and node.args:
                name = self.facts.qualname(node.func)
                if name in _POINTER_SINKS or (name or "").startswith(("tl.atomic_", "dl.", "shmem.")):
                    pending.append(node.args[0].value)
        seen: set[str] = set()
        while pending:
            expr = pending.pop()
            base = _pointer_base(expr)
            if base is None or base in seen:
                continue
            seen.add(base)
            if base in self.kernel.params and base not in self.assignments:
                bases.add(base)
            for value in self.assignments.get(base, ()):
                if value is not _LOOP:
                    pending.append(value)
        return bases

    def is_pointer_name(self, name: str) -> bool:
        return name in self.pointer_params

    # -- expression properties ---------------------------------------------------------------------------------
    def is_constexpr(self, expr: cst.BaseExpression, _seen: frozenset = frozenset()) -> bool:
        """Known at compile time on every path: literals, constexpr parameters and arithmetic on them."""
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
            return True
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in ("True", "False", "None"):
                return True
            if name in self.kernel.params and name not in self.assignments:
                return self.kernel.is_constexpr_param(name)
            values = self.assignments.get(name)
            if not values or name in _seen:
                return False
            return all(v is not _LOOP and self.is_constexpr(v, _seen | {name}) for v in values)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
            return self.is_constexpr(expr.left, _seen) and self.is_constexpr(expr.right, _seen)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_constexpr(expr.expression, _seen)
        if isinstance(expr, cst.Call) and self.facts.qualname(expr.func) == "tl.constexpr":
            return True
        return False

    def specializable_param(self, expr: cst.BaseExpression) -> str | None:
        """An unannotated scalar parameter Triton turns into a constant when its argument is 1."""
        if not isinstance(expr, cst.Name):
            return None
        name = expr.value
        kernel = self.kernel
        if name not in kernel.params or name in self.assignments:
            return None
        if name in kernel.constexpr or name in kernel.do_not_specialize or name in self.pointer_params:
            return None
        annotation = kernel.annotations.get(name)
        if annotation is not None and not (isinstance(annotation, cst.Name) and annotation.value == "int"):
            return None
        return name

    def is_int64(self, expr: cst.BaseExpression, _seen: frozenset = frozenset()) -> bool:
        """Widened to 64 bits: an explicit cast, or arithmetic with any 64-bit operand."""
        if isinstance(expr, cst.Call):
            if self.is_widening_cast(expr):
                return True
            return False
        if isinstance(expr, cst.Name):
            values = self.assignments.get(expr.value)
            if not values or expr.value in _seen:
                return False
            return all(v is not _LOOP and self.is_int64(v, _seen | {expr.value}) for v in values)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_int64(expr.left, _seen) or self.is_int64(expr.right, _seen)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_int64(expr.expression, _seen)
        return False

    def cast_target(self, call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(value, dtype) of ``value.to(dtype)`` or ``tl.cast(value, dtype)``."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and call.args:
            dtype = _argument(call, 0, "dtype")
            return (func.value, dtype) if dtype is not None else None
        if self.facts.qualname(func) == "tl.cast" and len(call.args) >= 2:
            dtype = _argument(call, 1, "dtype")
            return (call.args[0].value, dtype) if dtype is not None else None
        return None

    def is_widening_cast(self, call: cst.Call) -> bool:
        cast = self.cast_target(call)
        return cast is not None and self.facts.qualname(cast[1]) in _INT64

    def maybe_float(self, expr: cst.BaseExpression, _seen: frozenset = frozenset()) -> bool:
        """Could hold floating-point data (float literals, loads not narrowed to an integer type)."""
        if isinstance(expr, cst.Float):
            return True
        if isinstance(expr, cst.Call):
            cast = self.cast_target(expr)
            if cast is not None:
                dtype = self.facts.qualname(cast[1]) or ""
                return not dtype.startswith(("tl.int", "tl.uint"))
            name = self.facts.qualname(expr.func) or ""
            return name in ("tl.load", "tl.zeros", "tl.full", "tl.dot", "tl.exp", "tl.sum", "tl.sqrt")
        if isinstance(expr, cst.Name):
            values = self.assignments.get(expr.value)
            if not values or expr.value in _seen:
                return False
            return any(v is not _LOOP and self.maybe_float(v, _seen | {expr.value}) for v in values)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Divide):
                return True
            return self.maybe_float(expr.left, _seen) or self.maybe_float(expr.right, _seen)
        if isinstance(expr, cst.UnaryOperation):
            return self.maybe_float(expr.expression, _seen)
        return False


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` or passed as ``keyword``."""
    return _argument(call, position, keyword)


def _pointer_base(expr: cst.BaseExpression) -> str | None:
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
            expr = expr.left
            continue
        if isinstance(expr, cst.Subscript):
            expr = expr.value
            continue
        return None


def _names_in_target(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        for element in target.elements:
            names.extend(_names_in_target(element.value))
        return names
    return []


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    mapping = {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.DivideAssign: cst.Divide,
        cst.PowerAssign: cst.Power, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
        cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    }
    return mapping.get(type(operator), cst.Add)()
