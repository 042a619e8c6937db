"""Must-facts about element types that the value analysis leaves open: is a tile floating point on every path?

``KernelAnalysis.maybe_float`` answers "could this hold floats" (a load may, whatever its pointer); a fix that is
only correct for floats needs the opposite guarantee. An expression is *surely float* when the source proves it
wherever the kernel compiles:

- an explicit float type (fp8 types excepted): ``x.to(tl.float16)``, ``tl.cast(x, tl.bfloat16)``,
  ``.to(y.dtype)`` with ``y`` surely float, ``tl.zeros/tl.full(..., dtype=tl.float32)``, a float literal;
- operations whose result is float: true division, arithmetic with a surely-float operand, float-only math
  (``tl.exp``, ``tl.sqrt``...), reductions and shape changes of a surely-float tile;
- the operands of a ``tl.dot`` whose other operand or accumulator is surely float: triton-ascend requires both
  operands to have the same type and an integer dot to accumulate in int32 (it rejects anything else);
- a name all of whose reaching definitions are surely float (loop-carried cycles do not count against it).

Loads, parameters and loop variables are not: their element type is the caller's pointer type. "Float" here
means the types that stay themselves when a Python float is added (fp16, bf16, fp32): fp8 tiles are left out.
"""

from __future__ import annotations

import libcst as cst

from .syntax import argument
from .values import KernelAnalysis

_FLOAT_RESULT_CALLS = {
    "tl.exp", "tl.exp2", "tl.log", "tl.log2", "tl.sqrt", "tl.sqrt_rn", "tl.rsqrt", "tl.sigmoid", "tl.softmax",
    "tl.sin", "tl.cos", "tl.erf", "tl.div_rn", "tl.fdiv", "tl.math.exp", "tl.math.exp2", "tl.math.log",
    "tl.math.log2", "tl.math.sqrt", "tl.math.rsqrt", "tl.math.sin", "tl.math.cos", "tl.math.erf",
}
_SAME_TYPE_CALLS = {  # the result has the element type of the first operand
    "tl.trans", "tl.reshape", "tl.view", "tl.permute", "tl.broadcast_to", "tl.expand_dims", "tl.sum", "tl.max",
    "tl.min", "tl.cumsum", "tl.cumprod", "tl.abs", "tl.flip", "tl.ravel", "tl.multiple_of", "tl.max_contiguous",
    "tl.max_constancy",
}
_EITHER_OPERAND_CALLS = {"tl.maximum", "tl.minimum"}
_FLOAT_DTYPES = ("tl.float", "tl.bfloat")


def surely_float(analysis: KernelAnalysis, expr: cst.BaseExpression) -> bool:
    """True when ``expr`` is floating point on every path the kernel compiles (see the module docstring)."""
    return _Prover(analysis).expression(expr)


class _Prover:
    def __init__(self, analysis: KernelAnalysis) -> None:
        self.analysis = analysis
        self.facts = analysis.facts
        self.open: set[int] = set()  # definitions being proven: a cycle back to one proves nothing against it

    def expression(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.Float:
            return True
        if type(expr) is cst.Name:
            return self.name(expr)
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) is cst.Divide:
                return True
            return self.expression(expr.left) or self.expression(expr.right)
        if type(expr) is cst.UnaryOperation:
            return type(expr.operator) is not cst.Not and self.expression(expr.expression)
        if type(expr) is cst.IfExp:
            return self.expression(expr.body) and self.expression(expr.orelse)
        if type(expr) is cst.Subscript:
            return self.expression(expr.value)
        if type(expr) is cst.Attribute and expr.attr.value == "T":
            return self.expression(expr.value)
        if type(expr) is cst.Call:
            return self.call(expr)
        return False

    def name(self, read: cst.Name) -> bool:
        definitions = self.analysis.definitions(read)
        return bool(definitions) and all(self.definition(d) for d in definitions)

    def definition(self, definition) -> bool:
        key = id(definition)
        if key in self.open:
            return True  # loop-carried: the other definitions decide
        self.open.add(key)
        try:
            if definition.kind == "assign":
                return definition.value is not None and self.expression(definition.value)
            if definition.kind == "augmented":
                if type(definition.operator) is cst.DivideAssign or self.expression(definition.value):
                    return True
                target = definition.statement.target
                return type(target) is cst.Name and self.name(target)
            return False  # parameters and loop variables: whatever the caller passes
        finally:
            self.open.discard(key)

    def call(self, call: cst.Call) -> bool:
        cast = self.analysis.cast_target(call)
        if cast is not None:
            return self.dtype(cast[1])
        name = self.facts.qualname(call.func) or ""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if name in _FLOAT_RESULT_CALLS:
            return True
        if name in ("tl.zeros", "tl.full"):
            dtype = argument(call, 1 if name == "tl.zeros" else 2, "dtype")
            return dtype is not None and self.dtype(dtype)
        if name in ("tl.zeros_like", "tl.full_like") and positional:
            return self.expression(positional[0])
        if name == "tl.dot":
            out_dtype = argument(call, 99, "out_dtype")
            if out_dtype is not None and self.dtype(out_dtype):
                return True
            operands = [argument(call, 0, "input"), argument(call, 1, "other"), argument(call, 2, "acc")]
            return any(o is not None and self.expression(o) for o in operands)
        if name == "tl.where" and len(positional) == 3:
            return self.expression(positional[1]) or self.expression(positional[2])
        if name in _EITHER_OPERAND_CALLS:
            return any(self.expression(p) for p in positional)
        if name in _SAME_TYPE_CALLS and positional:
            return self.expression(positional[0])
        if type(call.func) is cst.Attribute and call.func.attr.value in ("trans", "reshape", "sum", "max"):
            return self.expression(call.func.value)  # method forms: `b_k.trans()`, `b_s.sum(1)`
        return False

    def dtype(self, dtype: cst.BaseExpression) -> bool:
        """A dtype expression that names a float type: ``tl.float16``, ``y.dtype`` of a surely-float ``y``."""
        name = self.facts.qualname(dtype) or ""
        if name.startswith(_FLOAT_DTYPES):
            return "float8" not in name  # fp8 arithmetic promotes: `x + 0.0` would not keep the type
        if type(dtype) is cst.Attribute and dtype.attr.value == "dtype":
            return self.expression(dtype.value)
        return False


def operand_partner_is_float(analysis: KernelAnalysis, dot: cst.Call) -> bool:
    """Whether a ``tl.dot``'s other operand or accumulator proves its left operand floating point."""
    prover = _Prover(analysis)
    partners = [argument(dot, 1, "other"), argument(dot, 2, "acc")]
    return any(p is not None and prover.expression(p) for p in partners)
