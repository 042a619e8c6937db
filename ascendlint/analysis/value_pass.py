"""The forward data-flow pass of the kernel value analysis: how statements and expressions transform values.

One pass over the kernel's control-flow graph (``cfg.py``, solved by ``flow.solve``) carries an abstract value
(``value_lattice``) for every name; every expression is evaluated against the state that reaches its statement and
its value is kept, so a rule's question is a dictionary look-up. Each point runs once plus once per change of its
input (the lattice is small and magnitudes are widened at loop heads), so the cost grows linearly with the kernel.
Plain assignment, runtime calls and arithmetic on tensors make tensors; constexpr parameters, annotated ``x:
tl.constexpr`` locals, ``static_range`` variables and literals stay constexprs; an integer result is wide if any
operand is wide. A mixin of ``values.KernelAnalysis``; its sources (parameters, helpers) are ``value_sources``.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from . import magnitudes as mag
from .cfg import BIND, ITERABLE, STATEMENT, TEST, WITH, Point
from .flow import solve
from .host_dtypes import pointer_dtype
from .module_facts import integer_value
from .syntax import argument, binary_of, builtin_name, integer_or_none, pointer_base
from .value_lattice import INT64, LOOP_CALLS, NARROW_INTS, NO_DIVISORS, TRANSPARENT_CALLS, WIDTHS, T, Traits, Value


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Divide, cst.Power,
               cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)


_FLOAT_CALLS = {"tl.load", "tl.zeros", "tl.full", "tl.dot", "tl.exp", "tl.exp2", "tl.log", "tl.sum", "tl.sqrt"}


_COMBINING_CALLS = {"tl.cdiv", "tl.minimum", "tl.maximum", "min", "max", "abs", "tl.abs"}


_COMPILE_TIME_LOOP_CALLS = {"tl.static_range"}


_NOTHING: Value = (0, 0, NO_DIVISORS)


_CARRIED = T.INDEX | T.PROGRAM | T.EXTENT | T.LOADED  # what a cast keeps from its operand


_RUNTIME = T.DYNAMIC | T.TENSOR


_UNKNOWN: Value = (T.DYNAMIC | T.TENSOR | T.NARROW | T.INT, mag.EXTENT_BITS, NO_DIVISORS)


REMAINDER = "%"  # marks a divisor set entry ``%BT``: the value is a remainder modulo the constexpr ``BT``


def quotient_divisors(divisors: frozenset) -> frozenset:
    """The constexpr extents a value was divided by (its remainder marks left out)."""
    return frozenset(d for d in divisors if not d.startswith(REMAINDER))


def _sum_divisors(first: frozenset, second: frozenset) -> frozenset:
    """The divisors a sum keeps: those both terms share, or a quotient's own when the other term is a remainder
    (``b * TC + t`` with ``t = x % TC`` still counts ``x // TC``'s dividend in units of ``TC``)."""
    if first and second:
        shared = first & second
        if shared:
            return shared
        if not quotient_divisors(second):
            return quotient_divisors(first)
        if not quotient_divisors(first):
            return quotient_divisors(second)
    return NO_DIVISORS


def _is_stride(node) -> bool:
    return type(node) is cst.Name and mag.is_stride_name(node.value)


def join(first: Value, second: Value) -> Value:
    if first is second:
        return first
    bits = first[0] | second[0]
    size = first[1] if first[1] >= second[1] else second[1]
    divisors = first[2] & second[2] if first[2] or second[2] else NO_DIVISORS
    return (bits, size, divisors)


def _named_index(name: str, value: Value) -> Value:
    """A runtime index bound to a name that says what it counts (``i_h``, ``req_idx``) is bounded by that count."""
    if value[0] & T.INDEX:
        bound = mag.index_name_bits(name)
        bits = value[0] | (T.SEQUENCE if mag.names_sequence(name) else 0)
        if bound is not None and bound < value[1]:
            return (bits, bound, NO_DIVISORS)
        return (bits, value[1], value[2]) if bits != value[0] else value
    return value


def _sequence_times_tokens(left: Traits, right: Traits) -> bool:
    """``i_b * T``, ``B * T`` and ``i_b * tl.cdiv(T, BT)``: a sequence index or count times a token (or chunk)
    count is a token offset or count (a chunk index). The count is a parameter on some path (``T``, rebound to
    ``eos - bos`` on a varlen path, is still a sequence's length) or no index at all."""
    for index, extent in ((left, right), (right, left)):
        if (index & T.SEQUENCE and not index & T.TOKENS and extent & T.TOKENS
                and (extent & T.EXTENT or not extent & T.INDEX)):
            return True
    return False


def _widen(old: Value, new: Value) -> Value:
    return (old[0] | new[0], mag.widen(old[1], new[1]), old[2] & new[2])


class _Done:
    """A node whose children have been evaluated (a marker on the evaluation stack)."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


def _combined_width(*parts: Traits) -> Traits:
    """Integer width of an arithmetic result: wide if any operand may be wide, narrow if all may be narrow."""
    sized = [p & WIDTHS for p in parts if p & WIDTHS]
    if not sized:
        return 0
    width = 0
    if any(s & T.WIDE for s in sized):
        width |= T.WIDE
    if all(s & T.NARROW for s in sized):
        width |= T.NARROW
    return width


class ValuePass:
    """The value pass of one kernel (a part of ``KernelAnalysis``)."""

    def value(self, expr: cst.BaseExpression) -> Value:
        """``(bits, magnitude, divisors)`` of ``expr`` over all paths that reach it."""
        values = self._values if self._values is not None else self._run()
        found = values.get(id(expr))
        if found is not None:
            return found
        point = self._point(expr)
        before = self._before[point.index] if point is not None else None
        return self._evaluate(expr, before if before is not None else self._entry_state)

    def traits(self, expr: cst.BaseExpression) -> Traits:
        """Everything ``expr`` may be, over all paths (see ``Trait``)."""
        return self.value(expr)[0]

    def magnitude(self, expr: cst.BaseExpression) -> int:
        """How many bits ``expr`` plausibly needs (see ``magnitudes.py``), its divisors taken into account."""
        bits, size, divisors = self.value(expr)
        for divisor in divisors:
            size -= self._divisor_bits(divisor)
        return max(size, 0)

    def _divisor_bits(self, name: str) -> int:
        known = self.constexpr_values.get(name)
        return max(known).bit_length() - 1 if known else 0

    def _run(self) -> dict[int, Value]:
        if self._running:  # a helper reached again through its own callees
            return {}
        self._running = True
        self._values = {}
        try:
            entry = self._entry_state
            self._before = solve(self.graph, entry, self._transfer, join, _widen)
        except BaseException:
            self._values, self._returned = None, None  # never left half-built: the next rule computes it again
            raise
        finally:
            self._running = False
        return self._values

    @cached_property
    def _entry_state(self) -> dict[str, Value]:
        return {name: self._parameter(name) for name in self.kernel.params}

    def _transfer(self, point: Point, state: dict) -> dict:
        kind = point.kind
        node = point.node
        if kind == STATEMENT:
            return self._statement(node, state)
        if kind == TEST:
            self._evaluate(node.test, state)
            return state
        if kind == ITERABLE:
            self._evaluate(node.iter, state)
            self._loop_values[id(node)] = self._loop_variable(node.iter, state)
            return state
        if kind == BIND:
            loop_value = self._loop_values.get(id(node), _UNKNOWN)
            names = self._bindings.get(id(node))
            if not names:
                return state
            state = dict(state)
            for name, _ in names:
                state[name] = loop_value
            return state
        if kind == WITH:
            for item in node.items:
                self._evaluate(item.item, state)
            names = self._bindings.get(id(node))
            if not names:
                return state
            state = dict(state)
            for name, definition in names:
                state[name] = self._assigned(self._values.get(id(definition.value), _UNKNOWN))
            return state
        return state  # ENTRY, HEAD

    def _statement(self, node: cst.CSTNode, state: dict) -> dict:
        kind = type(node)
        if kind is cst.Assign or kind is cst.AnnAssign:
            if node.value is None:
                return state
            whole = self._evaluate(node.value, state)
            names = self._bindings.get(id(node))
            if not names:
                return state
            keep_constexpr = id(node) in self._annotated_constexpr
            values = self._values
            state = dict(state)
            for name, definition in names:
                found = values.get(id(definition.value), whole) if definition.value is not None else _UNKNOWN
                state[name] = _named_index(name, found if keep_constexpr else self._assigned(found))
            return state
        if kind is cst.AugAssign:
            right = self._evaluate(node.value, state)
            if type(node.target) is not cst.Name:
                self._evaluate(node.target, state)
                return state
            name = node.target.value
            left = state.get(name) or self._global(name)
            self._values[id(node.target)] = left
            combined = self._binary(binary_of(node.operator), left, right, node.target, node.value)
            state = dict(state)
            state[name] = self._assigned(combined)
            return state
        if kind is cst.Expr:
            self._evaluate(node.value, state)
        elif kind is cst.Return:
            if node.value is not None:
                found = self._evaluate(node.value, state)
                self._returned = found if self._returned is None else join(self._returned, found)
        elif kind is cst.Assert:
            self._evaluate(node.test, state)
        return state

    @staticmethod
    def _assigned(value: Value) -> Value:
        """Plain assignment turns a number into a tensor (``visit_Assign`` calls ``to_tensor``)."""
        bits = value[0]
        if bits & (T.INT | T.FLOAT | T.WIDE | T.NARROW) and not bits & T.TENSOR:
            return (bits | T.TENSOR, value[1], value[2])
        return value

    def _evaluate(self, expr: cst.BaseExpression, state: dict) -> Value:
        """Evaluate ``expr`` and all its sub-expressions against ``state``, bottom-up and without recursion."""
        values = self._values if self._values is not None else {}
        stack: list = [expr]
        children_of = self._children
        while stack:
            node = stack[-1]
            if type(node) is _Done:
                stack.pop()
                target = node.node
                values[id(target)] = self._combine(target, state, values)
                continue
            stack[-1] = _Done(node)
            stack.extend(reversed(children_of(node)))
        return values[id(expr)]

    def _children(self, node) -> list:
        kind = type(node)
        if kind is cst.BinaryOperation or kind is cst.BooleanOperation:
            return [node.left, node.right]
        if kind is cst.Name or kind is cst.Integer or kind is cst.Float or kind is cst.SimpleString:
            return []
        if kind is cst.Call:
            children = [a.value for a in node.args]
            func = node.func
            if type(func) is cst.Attribute and self.facts.qualname(func) is None:
                children.insert(0, func.value)
            return children
        if kind is cst.Attribute:
            return [] if self.facts.qualname(node) is not None else [node.value]
        if kind is cst.UnaryOperation:
            return [node.expression]
        if kind is cst.Comparison:
            return [node.left, *(c.comparator for c in node.comparisons)]
        if kind is cst.Subscript:
            children = [node.value]
            for element in node.slice:
                inner = element.slice
                if type(inner) is cst.Index:
                    children.append(inner.value)
                elif type(inner) is cst.Slice:
                    children += [part for part in (inner.lower, inner.upper, inner.step) if part is not None]
            return children
        if kind is cst.IfExp:
            return [node.test, node.body, node.orelse]
        if kind is cst.Tuple or kind is cst.List:
            return [element.value for element in node.elements]
        if kind is cst.NamedExpr:
            return [node.value]
        if kind is cst.StarredElement:
            return [node.value]
        return []

    def _combine(self, node, state: dict, values: dict) -> Value:
        kind = type(node)
        if kind is cst.Name:
            name = node.value
            found = state.get(name)
            if found is not None:
                return found
            if name == "None":
                return _NOTHING
            if name in ("True", "False"):
                return (T.INT | T.NARROW, 1, NO_DIVISORS)
            return self._global(name)
        if kind is cst.Integer:
            return (T.INT | T.NARROW, mag.of_int(integer_value(node)), NO_DIVISORS)
        if kind is cst.BinaryOperation:
            return self._binary(node.operator, values[id(node.left)], values[id(node.right)], node.left, node.right)
        if kind is cst.Call:
            return self._call(node, values)
        if kind is cst.Attribute:
            if self.facts.qualname(node) is not None:
                return _NOTHING
            base = values[id(node.value)]
            if node.attr.value in ("dtype", "type"):
                return _NOTHING
            if node.attr.value == "shape":
                return (T.INT | T.NARROW, mag.CONSTEXPR_BITS, NO_DIVISORS)
            return base
        if kind is cst.Float or kind is cst.Imaginary:
            return (T.FLOAT, 0, NO_DIVISORS)
        if kind in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            return _NOTHING
        if kind is cst.UnaryOperation:
            inner = values[id(node.expression)]
            if type(node.operator) is cst.Not:
                return ((inner[0] & _RUNTIME) | T.INT | T.NARROW, 1, NO_DIVISORS)
            return inner
        if kind is cst.Comparison:
            return self._comparison(node, values)
        if kind is cst.BooleanOperation:
            bits = (values[id(node.left)][0] | values[id(node.right)][0]) & _RUNTIME
            return (bits | T.INT | T.NARROW, 1, NO_DIVISORS)
        if kind is cst.IfExp:
            test = values[id(node.test)][0] & _RUNTIME
            chosen = join(values[id(node.body)], values[id(node.orelse)])
            return (chosen[0] | test, chosen[1], chosen[2])
        if kind is cst.Subscript:
            base = values[id(node.value)]
            return (base[0] & ~T.BLOCK, base[1], base[2])
        if kind is cst.Tuple or kind is cst.List:
            found = _NOTHING
            for element in node.elements:
                found = join(found, values[id(element.value)])
            return found
        if kind is cst.NamedExpr or kind is cst.StarredElement:
            return values[id(node.value)]
        return (T.DYNAMIC | T.TENSOR, 0, NO_DIVISORS)

    def _comparison(self, expr: cst.Comparison, values: dict) -> Value:
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        if all(type(c.operator) in (cst.Is, cst.IsNot) for c in expr.comparisons) and any(
            type(o) is cst.Name and o.value == "None" for o in operands
        ):
            return (T.INT | T.NARROW, 1, NO_DIVISORS)  # `ptr is None` is decided when the kernel is specialised
        bits = 0
        for operand in operands:
            bits |= values[id(operand)][0]
        return ((bits & _RUNTIME) | T.INT | T.NARROW, 1, NO_DIVISORS)

    def _binary(self, operator, left: Value, right: Value, left_node, right_node) -> Value:
        lbits, rbits = left[0], right[0]
        if not isinstance(operator, _ARITHMETIC):
            return (((lbits | rbits) & _RUNTIME) | T.INT | T.NARROW, mag.UNBOUNDED, NO_DIVISORS)
        if type(operator) in (cst.FloorDivide, cst.Modulo, cst.RightShift) and lbits & T.INDEX:
            rbits &= ~(T.EXTENT | T.INDEX)  # an index divided or reduced by a size is still an index
            if type(operator) is cst.FloorDivide:
                rbits &= ~T.TOKENS  # `i_chk // tl.cdiv(T, BT)` counts sequences, not tokens
        bits = (lbits | rbits) & ~(WIDTHS | T.POINTER | T.BLOCK)
        bits |= _combined_width(lbits, rbits)
        if type(operator) in (cst.Add, cst.Subtract) and (lbits | rbits) & T.POINTER:
            bits |= T.POINTER
        if type(operator) is cst.Divide:
            bits |= T.FLOAT
        size, divisors = self._binary_magnitude(operator, left, right, left_node, right_node)
        if type(operator) is cst.Multiply and _sequence_times_tokens(lbits, rbits):
            size = min(size, mag.TOKEN_BITS + 1)  # a sequence's start: the tokens of one launch bound it
            bits &= ~T.HOSTED  # an offset, not a per-row extent
        return (bits, size, divisors)

    def _binary_magnitude(self, operator, left: Value, right: Value, left_node, right_node) -> tuple[int, frozenset]:
        if type(operator) is cst.Multiply:
            for one, other, other_node in ((left, right, right_node), (right, left, left_node)):
                symbol = self._symbol(other_node)
                if symbol is not None and symbol in one[2]:
                    return one[1], one[2] - {symbol}
                if one[0] & T.TILE and len(quotient_divisors(one[2])) >= 2 and _is_stride(other_node):
                    # an outer coordinate unflattened from a flat element offset (``offs // D // T``), times its
                    # stride, reaches at most that offset; a row or chunk index divided once may step much further
                    return one[1], NO_DIVISORS
            return mag.product(self._factor_bits(left, left_node), self._factor_bits(right, right_node)), (
                left[2] | right[2])
        if type(operator) in (cst.Add, cst.Subtract):
            return mag.total(left[1], right[1]), _sum_divisors(left[2], right[2])
        if type(operator) is cst.FloorDivide:
            symbol = self._symbol(right_node)
            if symbol is not None:
                return left[1], left[2] | {symbol}
            return mag.quotient(left[1], integer_or_none(right_node)), left[2]
        if type(operator) is cst.Modulo:
            symbol = self._symbol(right_node)
            return min(left[1], right[1]), (frozenset({REMAINDER + symbol}) if symbol is not None else NO_DIVISORS)
        if type(operator) is cst.LeftShift:
            shift = integer_or_none(right_node)
            return (min(left[1] + shift, mag.UNBOUNDED) if shift is not None else mag.UNBOUNDED), NO_DIVISORS
        if type(operator) is cst.RightShift:
            shift = integer_or_none(right_node)
            return (max(left[1] - shift, 0) if shift is not None else left[1]), left[2]
        if type(operator) is cst.BitAnd:
            return min(left[1], right[1]), NO_DIVISORS
        if type(operator) in (cst.BitOr, cst.BitXor):
            return max(left[1], right[1]), NO_DIVISORS
        if type(operator) is cst.Power:
            return mag.UNBOUNDED, NO_DIVISORS
        return max(left[1], right[1]), NO_DIVISORS

    def _factor_bits(self, value: Value, node) -> int:
        """What a factor adds to a product: a constant ``c`` scales by ``c``, so it adds ``ceil(log2(c))`` bits
        (``x * 16`` needs four more bits than ``x``); anything else adds its magnitude."""
        constant = integer_or_none(node)
        if constant is None and type(node) is cst.Name and not value[0] & T.DYNAMIC:
            known = self.constexpr_values.get(node.value) if self.kernel.is_constexpr_param(node.value) else None
            constant = max(known) if known and len(set(known)) == 1 else None
        if constant is not None and constant > 0:
            return mag.scale_bits(constant)
        return value[1]

    def _symbol(self, node) -> str | None:
        """The constexpr parameter a divisor or factor names (``BT`` in ``tl.cdiv(T, BT)`` and ``i_t * BT``)."""
        if type(node) is cst.Name and self.kernel.is_constexpr_param(node.value):
            if node.value not in self.assignments:
                return node.value
        return None

    def _call(self, call: cst.Call, values: dict) -> Value:
        cast = self.cast_target(call)
        if cast is not None:
            operand, dtype = cast
            found = values.get(id(operand), _UNKNOWN)
            carried = (found[0] & (_CARRIED | T.DYNAMIC)) | T.TENSOR
            target = self.facts.qualname(dtype) or ""
            if target in INT64:
                return (carried | T.INT | T.WIDE, found[1], found[2])
            if target in NARROW_INTS:
                return (carried | T.INT | T.NARROW, min(found[1], mag.INT32_BITS), found[2])
            if target.startswith(("tl.float", "tl.bfloat")):
                return (carried | T.FLOAT, 0, NO_DIVISORS)
            return (found[0] | T.DYNAMIC | T.TENSOR, found[1], found[2])
        name = self.facts.qualname(call.func) or builtin_name(call.func)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        arguments = [values[id(p)] for p in positional]
        if name == "tl.constexpr":
            inner = arguments[0] if arguments else _NOTHING
            return (inner[0] & ~_RUNTIME, inner[1], inner[2])
        if name == "tl.program_id":
            axis = integer_or_none(positional[0]) if positional else 0
            tokens = T.TOKENS if axis in self._token_axes else 0
            return (T.DYNAMIC | T.TENSOR | T.INT | T.NARROW | T.INDEX | T.PROGRAM | tokens,
                    *self._program_id(positional))
        if name == "tl.num_programs":
            return (T.DYNAMIC | T.TENSOR | T.INT | T.NARROW | T.EXTENT, *self._program_id(positional))
        if name == "tl.load":
            table = pointer_base(positional[0]) if positional else None
            size = mag.GRID_AXIS_BITS if table is not None and mag.names_index_table(table) else mag.LOADED_BITS
            # an index loaded from a tensor every launch passes as int64 is int64 already (dtypes, not spellings)
            width = T.WIDE if table is not None and table in self.kernel.params and pointer_dtype(
                self.facts, self.kernel, table) == "int64" else T.NARROW
            return (T.DYNAMIC | T.TENSOR | width | T.INDEX | T.LOADED | T.FLOAT | T.INT, size, NO_DIVISORS)
        if name in ("tl.make_block_ptr", "tl.advance"):
            return (T.DYNAMIC | T.TENSOR | T.BLOCK, 0, NO_DIVISORS)
        if name in TRANSPARENT_CALLS and arguments:
            return arguments[0]
        if name == "tl.where" and len(arguments) == 3:
            chosen = join(arguments[1], arguments[2])
            bits = (chosen[0] & ~WIDTHS) | _combined_width(arguments[1][0], arguments[2][0])
            return (bits | T.DYNAMIC | T.TENSOR | (arguments[0][0] & T.DYNAMIC), chosen[1], chosen[2])
        if name in _COMBINING_CALLS and arguments:
            return self._combining(name, positional, arguments)
        if name in ("tl.zeros", "tl.full"):
            dtype_node = argument(call, 1 if name == "tl.zeros" else 2, "dtype")
            dtype = (self.facts.qualname(dtype_node) if dtype_node is not None else None) or ""
            fill = argument(call, 1, "value") if name == "tl.full" else None
            size = values[id(fill)][1] if fill is not None and id(fill) in values else 0
            if dtype in INT64:
                return (T.DYNAMIC | T.TENSOR | T.INT | T.WIDE, size, NO_DIVISORS)
            return (T.DYNAMIC | T.TENSOR | T.NARROW | T.FLOAT | T.INT, size, NO_DIVISORS)
        if name == "tl.arange":
            end = arguments[-1] if arguments else _NOTHING
            return (T.DYNAMIC | T.TENSOR | T.INT | T.NARROW | T.TILE, end[1], end[2])
        helper = self.facts.kernels.get(name or "") if name and "." not in name else None
        if helper is not None and helper is not self.kernel:
            returned = self._helper_returns(helper)
            if returned is not None:
                return returned
        imported = self._imported_helper(call.func)
        if imported is not None and imported.returned is not None:
            return (imported.returned[0] | T.DYNAMIC | T.TENSOR, imported.returned[1], NO_DIVISORS)
        bits = T.DYNAMIC | T.TENSOR | T.NARROW | T.INT
        if name in _FLOAT_CALLS or any(a[0] & T.FLOAT for a in arguments[:1]):
            bits |= T.FLOAT
        size = max((a[1] for a in arguments), default=mag.EXTENT_BITS)
        if type(call.func) is cst.Attribute and id(call.func.value) in values and not name:
            receiver = values[id(call.func.value)]  # a method of a tensor: x.reshape(...), x.trans()
            return (receiver[0] | T.DYNAMIC | T.TENSOR, receiver[1], receiver[2])
        return (bits, size, NO_DIVISORS)

    def _combining(self, name: str, positional: list, arguments: list[Value]) -> Value:
        union = 0
        for found in arguments:
            union |= found[0]
        width = _combined_width(*(a[0] for a in arguments)) or T.NARROW
        bits = (union & ~(WIDTHS | T.POINTER | T.BLOCK)) | width
        if name == "tl.cdiv" and not union & T.TENSOR:
            bits &= ~T.DYNAMIC  # folded while compiling: the result is a constexpr
        else:
            bits |= T.TENSOR | (union & T.DYNAMIC)  # the builtin min and max are tl.minimum and tl.maximum
        if name == "tl.cdiv" and len(arguments) == 2:
            symbol = self._symbol(positional[1])
            top = arguments[0]
            if symbol is not None:
                return (bits, top[1], top[2] | {symbol})
            return (bits, mag.quotient(top[1], integer_or_none(positional[1])), top[2])
        if name in ("min", "tl.minimum"):
            smallest = min(arguments, key=lambda a: a[1])
            return (bits, smallest[1], smallest[2])
        largest = max(arguments, key=lambda a: a[1])
        return (bits, largest[1], largest[2])

    def _loop_variable(self, iterable: cst.BaseExpression, state: dict) -> Value:
        if type(iterable) is cst.Call:
            name = self.facts.qualname(iterable.func) or builtin_name(iterable.func)
            values = self._values
            bounds = [values.get(id(a.value), _UNKNOWN) for a in iterable.args if a.keyword is None][:2]
            size = max((b[1] for b in bounds), default=0)
            divisors = bounds[-1][2] if bounds else NO_DIVISORS
            if name in _COMPILE_TIME_LOOP_CALLS:
                return (T.INT | T.NARROW, size, divisors)
            if name in LOOP_CALLS:
                bits = 0
                for bound in bounds:
                    bits |= bound[0]
                width = _combined_width(*(b[0] for b in bounds)) or T.NARROW
                carried = bits & (T.PROGRAM | T.LOADED | T.TOKENS)  # bounded by its extents, not one itself
                return (T.DYNAMIC | T.TENSOR | T.INDEX | T.INT | width | carried, size, divisors)
        return (T.DYNAMIC | T.TENSOR | T.INDEX | T.NARROW | T.INT, mag.LOADED_BITS, NO_DIVISORS)

    def _global(self, name: str) -> Value:
        """A name the kernel does not bind: a module constant, an imported name or a builtin."""
        constant = self.facts.module_constants.get(name)
        if constant is not None:
            return (T.INT | T.NARROW, mag.of_int(constant), NO_DIVISORS)
        return _UNKNOWN
