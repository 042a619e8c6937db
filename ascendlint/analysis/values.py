"""The shared intra-kernel value analysis: what each name and expression inside a kernel can be.

Built once per kernel (on first request, see ``FileContext.analysis``) and shared by every rule. ``KernelAnalysis``
gathers the kernel's bindings and loops, then answers rules' questions (is this offset int64, does it scale with the
tokens of a launch, is this a pointer parameter, which offsets feed a load) from three parts: the abstract values
(``value_lattice``), the pass that computes them (``value_pass``, starting from ``value_sources``), and reads and
definitions on the control-flow graph (``kernel_reads``).
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from . import magnitudes as mag
from .flow import Definition, bound_names, loop_targets, with_targets
from .module_facts import Kernel, ModuleFacts
from .task_loops import range_arguments
from .walk import NodeIndex
from .syntax import argument, binary_of, builtin_name, pointer_base
from .value_lattice import INT64, NARROW_INTS, TRANSPARENT_CALLS, WIDTHS, T, Traits, Value
from .kernel_reads import KernelReads
from .value_pass import ValuePass
from .value_sources import ValueSources


_POINTER_SINKS = {"tl.load", "tl.store", "tl.make_block_ptr"}


def _registry(facts: ModuleFacts) -> dict[int, "KernelAnalysis"]:
    """Analyses live on the module facts they belong to, and die with them."""
    return facts.memo("kernel_analyses", dict)


_LOOP = object()  # marker in ``assignments``: the name is a loop variable


_INDEX_TYPES = {"tl.int32", "tl.int64", "tl.uint32", "tl.uint64"}


def _arguments_for(call: cst.Call, params, wanted) -> list[cst.BaseExpression]:
    """The arguments of ``call`` bound to the parameters in ``wanted`` (by position or keyword)."""
    found = []
    for position, arg in enumerate(a for a in call.args if not a.star):
        if arg.keyword is not None:
            param = arg.keyword.value
        else:
            param = params[position] if position < len(params) else None
        if param in wanted:
            found.append(arg.value)
    return found


def _loaded_pointer(facts: ModuleFacts, expr: cst.BaseExpression) -> str | None:
    """The base pointer name of ``tl.load(base + ...)``, or None."""
    if facts.is_call_to(expr, "tl.load") and expr.args:
        return pointer_base(expr.args[0].value)
    return None


def _is_index_value(bits: Traits) -> bool:
    return bool(bits & T.INT) and bool(bits & T.INDEX) and not bits & (T.FLOAT | T.POINTER | T.BLOCK)


def _is_sum(node) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Subtract)


class KernelAnalysis(KernelReads, ValuePass, ValueSources):
    """Facts about the values of one kernel (or jit helper), computed lazily and cached for every rule."""

    def __init__(self, kernel: Kernel, facts: ModuleFacts, index: NodeIndex) -> None:
        self.kernel = kernel
        self.facts = facts
        self.index = index
        self.nodes = index.subtree(kernel.node)
        _registry(facts)[id(kernel.node)] = self
        try:
            self._build(kernel)
        except BaseException:
            _registry(facts).pop(id(kernel.node), None)  # a half-built analysis is never shared
            raise

    def _build(self, kernel: Kernel) -> None:
        self.assignments: dict[str, list] = {}  # flow-insensitive: every expression ever bound to a name
        self.loops: list[cst.For] = []
        self._bindings: dict[int, list[tuple[str, Definition]]] = {}
        self._all_definitions: dict[str, list[Definition]] = {}
        self._targets: set[int] = set()
        self._annotated_constexpr: set[int] = set()
        for node in self.nodes:
            kind = type(node)
            if kind is cst.Assign or kind is cst.AugAssign or kind is cst.AnnAssign:
                self._record(node)
            elif kind is cst.For:
                self.loops.append(node)
                self._record_loop(node)
            elif kind is cst.With:
                self._record_with(node)
            elif kind is cst.NamedExpr and type(node.target) is cst.Name:
                self.assignments.setdefault(node.target.value, []).append(node.value)
        self._params = {name: Definition(name, "param") for name in kernel.params}
        self._statement_cache: dict[int, cst.CSTNode | None] = {}
        self._values: dict[int, Value] | None = None
        self._loop_values: dict[int, Value] = {}
        self._returned: Value | None = None
        self._running = False

    @classmethod
    def of(cls, kernel: Kernel, facts: ModuleFacts, index: NodeIndex) -> KernelAnalysis:
        """The analysis of ``kernel``, shared with ``FileContext.analysis`` (built at most once per kernel)."""
        found = _registry(facts).get(id(kernel.node))
        return found if found is not None else cls(kernel, facts, index)

    def _record(self, statement) -> None:
        found = []
        if type(statement) is cst.AnnAssign and self._is_constexpr_annotation(statement.annotation.annotation):
            self._annotated_constexpr.add(id(statement))
        for target, value in bound_names(statement):
            self._targets.add(id(target))
            name = target.value
            if type(statement) is cst.AugAssign:
                definition = Definition(name, "augmented", statement, value, statement.operator)
                combined = cst.BinaryOperation(left=target, operator=binary_of(statement.operator), right=value)
                self.assignments.setdefault(name, []).append(combined)
            else:
                definition = Definition(name, "assign", statement, value)
                if value is not None:
                    self.assignments.setdefault(name, []).append(value)
            found.append((name, definition))
            self._all_definitions.setdefault(name, []).append(definition)
        self._bindings[id(statement)] = found

    def _record_loop(self, loop: cst.For) -> None:
        found = []
        for target in loop_targets(loop):
            self._targets.add(id(target))
            definition = Definition(target.value, "loop", loop, loop.iter)
            found.append((target.value, definition))
            self._all_definitions.setdefault(target.value, []).append(definition)
            self.assignments.setdefault(target.value, []).append(_LOOP)
        self._bindings[id(loop)] = found

    def _record_with(self, statement: cst.With) -> None:
        found = []
        for target, value in with_targets(statement):
            self._targets.add(id(target))
            definition = Definition(target.value, "assign", statement, value)
            found.append((target.value, definition))
            self._all_definitions.setdefault(target.value, []).append(definition)
            self.assignments.setdefault(target.value, []).append(value)
        self._bindings[id(statement)] = found

    def _is_constexpr_annotation(self, annotation: cst.BaseExpression) -> bool:
        return self.facts.qualname(annotation) == "tl.constexpr" or (
            type(annotation) is cst.SimpleString and "constexpr" in annotation.value
        )

    def is_param(self, name: str) -> bool:
        return name in self.kernel.params and name not in self.assignments

    @cached_property
    def pointer_params(self) -> set[str]:
        """Parameters that are the base of pointer arithmetic reaching a load, store, atomic, block pointer,
        distributed call, or a pointer parameter of a jit helper."""
        self.__dict__["pointer_params"] = set()  # a recursive helper sees no pointers while this is computed
        pending: list[cst.BaseExpression] = []
        for node in self.nodes:
            if type(node) is not cst.Call or not node.args:
                continue
            name = self.facts.qualname(node.func) or builtin_name(node.func)
            if name in _POINTER_SINKS or name.startswith(("tl.atomic_", "dl.", "shmem.")):
                base = argument(node, 0, "base") if name == "tl.make_block_ptr" else node.args[0].value
                if base is not None:
                    pending.append(base)
            helper = self.facts.kernels.get(name) if "." not in name else None
            if helper is not None and helper is not self.kernel:
                pending.extend(self._pointer_arguments(node, helper))
            imported = self._imported_helper(node.func)
            if imported is not None:
                pending.extend(_arguments_for(node, imported.params, imported.pointer_params))
        bases: set[str] = set()
        seen: set[str] = set()
        while pending:
            base = pointer_base(pending.pop())
            if base is None or base in seen:
                continue
            seen.add(base)
            if base in self.kernel.params:
                bases.add(base)
            for value in self.assignments.get(base, ()):
                if value is not _LOOP:
                    pending.append(value)
        return bases

    def _pointer_arguments(self, call: cst.Call, helper: Kernel) -> list[cst.BaseExpression]:
        pointers = KernelAnalysis.of(helper, self.facts, self.index).pointer_params
        return _arguments_for(call, helper.params, pointers)

    def is_pointer_name(self, name: str) -> bool:
        return name in self.pointer_params

    @cached_property
    def index_tables(self) -> set[str]:
        """Pointer parameters that point at integer tables: what is loaded through them is cast to int32/int64 or
        indexes other memory, or what is stored through them is an integer index (block tables, sequence offsets,
        token ids, counters). Such tables hold a few entries per request or token, far below 2**31."""
        found: set[str] = set()
        facts = self.facts
        for node in self.nodes:
            if type(node) is not cst.Call:
                continue
            cast = self.cast_target(node)
            if cast is not None and (self.facts.qualname(cast[1]) or "") in _INDEX_TYPES:
                loaded = _loaded_pointer(facts, cast[0])
                if loaded is not None:
                    found.add(loaded)
            elif facts.is_call_to(node, "tl.store") and len(node.args) >= 2:
                stored = argument(node, 1, "value")
                if stored is not None and _is_index_value(self.traits(stored)):
                    base = pointer_base(node.args[0].value)
                    if base in self.pointer_params:
                        found.add(base)
        for _, offsets in self.pointer_expressions:
            for part in self.offset_nodes(offsets):
                loaded = _loaded_pointer(facts, part)
                if loaded is not None:
                    found.add(loaded)
        return {name for name in found if name in self.pointer_params}

    def is_constexpr(self, expr: cst.BaseExpression) -> bool:
        """A ``constexpr`` object (not a tensor) on every path when the compiler reaches it: literals, constexpr
        parameters, annotated constexpr locals, ``static_range`` variables and inline arithmetic on them. A name
        bound by plain assignment is a tensor, whatever it was assigned."""
        return not self.traits(expr) & T.TENSOR

    def is_compile_time(self, expr: cst.BaseExpression) -> bool:
        """Known at compile time on every path (folded by the compiler), tensor or not: ``is_tail = False`` is."""
        return not self.traits(expr) & T.DYNAMIC

    def is_int64(self, expr: cst.BaseExpression) -> bool:
        """Widened to 64 bits on every path: an explicit cast, or arithmetic with any 64-bit operand."""
        found = self.traits(expr)
        return found & WIDTHS == T.WIDE

    def may_be_int64(self, expr: cst.BaseExpression) -> bool:
        """Widened to 64 bits on at least one path."""
        return bool(self.traits(expr) & T.WIDE)

    def maybe_float(self, expr: cst.BaseExpression) -> bool:
        """Could hold floating-point data (float literals, loads not narrowed to an integer type)."""
        return bool(self.traits(expr) & T.FLOAT)

    def surely_float(self, expr: cst.BaseExpression) -> bool:
        """Floating point on every path (a float cast or literal, arithmetic that only floats reach)."""
        found = self.traits(expr)
        return bool(found & T.FLOAT) and not found & (T.INT | WIDTHS | T.POINTER | T.BLOCK)

    def can_wrap(self, expr: cst.BaseExpression) -> bool:
        """An int32 value that can plausibly pass 2**31 (see ``magnitudes.py``)."""
        return mag.can_wrap(self.magnitude(expr))

    def scales_with_tokens(self, expr: cst.BaseExpression) -> bool:
        """Grows with the tokens of a launch: a token count or offset, a loaded offset or id, or a row of a grid
        (or loop) sized by a token count."""
        found = self.traits(expr)
        return bool(found & T.TOKENS) or found & (T.LOADED | T.INDEX) == T.LOADED | T.INDEX

    def is_token_offset(self, expr: cst.BaseExpression) -> bool:
        """The start of a sequence or chunk in the tokens of a launch: a sequence index times a token count
        (``bos = i_n * T``) or an offset loaded from memory (``bos = tl.load(cu_seqlens + i_n)``), on some path."""
        found = self.traits(expr)
        return found & (T.SEQUENCE | T.TOKENS) == T.SEQUENCE | T.TOKENS or found & (T.LOADED | T.INDEX) == (
            T.LOADED | T.INDEX)

    def host_proven(self, expr: cst.BaseExpression) -> bool:
        """Holds a per-row extent the launching host code shows to be large (``logits.stride(0)``,
        ``k_cache.stride(0)``, ``x.stride(0)`` of an activation), or one of a kernel whose launch is not visible here,
        where the magnitude model decides alone."""
        return bool(self.traits(expr) & T.HOSTED)

    def is_tile(self, expr: cst.BaseExpression) -> bool:
        """A vector of offsets built from ``tl.arange``."""
        return bool(self.traits(expr) & T.TILE)

    def is_runtime_index(self, expr: cst.BaseExpression) -> bool:
        """Derived from a program id, a loop variable or a loaded value."""
        return bool(self.traits(expr) & T.INDEX)

    def is_runtime_extent(self, expr: cst.BaseExpression) -> bool:
        """A runtime size (integer parameter, or computed from them) on some path: a name that is a parameter
        in one branch and a loaded length in another is still an extent where the parameter reaches."""
        found = self.traits(expr)
        return found & (T.EXTENT | T.DYNAMIC) == T.EXTENT | T.DYNAMIC

    def derives_from_program_id(self, expr: cst.BaseExpression) -> bool:
        return bool(self.traits(expr) & T.PROGRAM)

    def is_loaded(self, expr: cst.BaseExpression) -> bool:
        """Derived from a value loaded from memory."""
        return bool(self.traits(expr) & T.LOADED)

    def is_pointer(self, expr: cst.BaseExpression) -> bool:
        return bool(self.traits(expr) & T.POINTER)

    def is_block_pointer(self, expr: cst.BaseExpression) -> bool:
        return bool(self.traits(expr) & T.BLOCK)

    def specializable_param(self, expr: cst.BaseExpression) -> str | None:
        """An unannotated scalar parameter Triton turns into a constant when its argument is 1."""
        if type(expr) is not cst.Name:
            return None
        name = expr.value
        kernel = self.kernel
        if name not in kernel.params or name in self.assignments:
            return None
        if name in kernel.constexpr or name in kernel.do_not_specialize or name in self.pointer_params:
            return None
        if kernel.name in self.facts.helpers:
            return None
        annotation = kernel.annotations.get(name)
        if annotation is not None and not (type(annotation) is cst.Name and annotation.value == "int"):
            return None
        return name

    def cast_target(self, call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(value, dtype) of ``value.to(dtype)`` or ``tl.cast(value, dtype)``."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "to" and call.args:
            dtype = argument(call, 0, "dtype")
            return (func.value, dtype) if dtype is not None else None
        if self.facts.qualname(func) == "tl.cast" and len(call.args) >= 2:
            dtype = argument(call, 1, "dtype")
            return (call.args[0].value, dtype) if dtype is not None else None
        return None

    def is_widening_cast(self, call: cst.Call) -> bool:
        cast = self.cast_target(call)
        return cast is not None and self.facts.qualname(cast[1]) in INT64

    def is_narrowing_cast(self, call: cst.Call) -> bool:
        """``.to(tl.int32)`` / ``tl.cast(x, tl.int32)`` and the narrower integer types."""
        cast = self.cast_target(call)
        return cast is not None and self.facts.qualname(cast[1]) in NARROW_INTS

    @cached_property
    def pointer_expressions(self) -> list[tuple[cst.CSTNode, list[cst.BaseExpression]]]:
        """Each outermost pointer arithmetic (``q + off``, ``p += off``) with its integer offset operands."""
        found = []
        for node in self.nodes:
            if type(node) is cst.AugAssign and type(node.operator) in (cst.AddAssign, cst.SubtractAssign):
                if type(node.target) is cst.Name and self.is_pointer(node.target):
                    found.append((node, [node.value]))
            elif type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Subtract):
                parent = self.index.parent(node)
                if _is_sum(parent) and self.is_pointer(parent):
                    continue
                if self.is_pointer(node):
                    found.append((node, self._offsets(node)))
        return found

    def _offsets(self, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
        """The integer operands of a pointer sum, in source order (the pointer base itself is left out)."""
        found, stack = [], [expr]
        while stack:
            node = stack.pop()
            if _is_sum(node) and self.is_pointer(node):
                stack += [node.right, node.left]
            elif not self.is_pointer(node):
                found.append(node)
        return found

    def offset_nodes(self, offsets: list[cst.BaseExpression], stop=None,
                     loop_starts: bool = False) -> list[cst.BaseExpression]:
        """Every expression an offset is computed from: through arithmetic, subscripts, ``tl.multiple_of``-style
        hints and, for names, the expressions of their reaching definitions. Other calls are leaves, and so is
        any node for which ``stop(node)`` is true. With ``loop_starts``, a loop variable of ``range(start, ...)``
        (or ``tl.range``) is computed from ``start``: it counts up from that value, in its type."""
        found: list[cst.BaseExpression] = []
        seen: set[int] = set()
        stack = list(reversed(offsets))
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.append(node)
            if stop is not None and stop(node):
                continue
            if type(node) is cst.BinaryOperation:
                stack.extend((node.right, node.left))
            elif type(node) is cst.UnaryOperation:
                stack.append(node.expression)
            elif type(node) is cst.Subscript:
                stack.append(node.value)
            elif type(node) is cst.IfExp:
                stack.extend((node.orelse, node.body))
            elif type(node) is cst.Call and (self.facts.qualname(node.func) in TRANSPARENT_CALLS) and node.args:
                stack.append(node.args[0].value)
            elif self.facts.is_call_to(node, "tl.where") and len(node.args) == 3:
                stack.extend((node.args[2].value, node.args[1].value))
            elif type(node) is cst.Name:
                for definition in self.definitions(node):
                    if definition.kind == "assign" and definition.value is not None:
                        stack.append(definition.value)
                    elif definition.kind == "augmented":
                        stack.append(definition.value)
                        stack.append(definition.statement.target)
                    elif definition.kind == "loop" and loop_starts:
                        bounds = range_arguments(self.facts, definition.statement)
                        if bounds is not None and len(bounds) >= 2:  # range(start, stop[, step]): from start
                            stack.append(bounds[0])
        return found
