"""The shared intra-kernel value analysis: what each name and expression inside a kernel can be.

Built once per kernel (on first request, see ``FileContext.analysis``) and shared by every rule.

The model:
- *Where values come from* is answered by reaching definitions (``reaching.py``): every read of a name sees the
  definitions that can reach it through straight code, ``if``/``else`` branches (which never see each other) and
  loops (loop-carried values reach the top of the body). A read the solver did not visit falls back to every
  definition of the name in the kernel.
- *What a value can be* is a small set of traits (``Trait``), computed bottom-up over the expression and, through
  names, over the reaching definitions. Traits are "may" facts, united over all paths: an expression is
  constexpr when no path makes it ``DYNAMIC``; it is int64 when some path makes it ``WIDE`` and none leaves it
  ``NARROW``. Arithmetic unites its operands' traits; an integer result is wide if any operand is wide.
- Sources: constexpr parameters and literals are compile-time; other integer parameters are runtime *extents*;
  ``tl.program_id``, loop variables and loaded values are runtime *indices* (and what is computed from them);
  loop variables of ``range``/``tl.range`` take the width of their bounds; ``tl.static_range`` targets are
  compile-time. Pointer parameters (bases of pointer arithmetic reaching a load, store, atomic, block pointer,
  distributed call or a jit helper's pointer parameter) and arithmetic on them are pointers; ``tl.make_block_ptr``,
  ``tl.advance`` and jit helpers returning them are block pointers.
"""

from __future__ import annotations

import weakref
from functools import cached_property

import libcst as cst

from .module_facts import Kernel, ModuleFacts
from .flow import Definition, FlowSolver, Mark, State, bound_names, loop_targets
from .walk import NodeIndex

_INT64 = {"tl.int64", "tl.uint64"}
_NARROW_INTS = {"tl.int32", "tl.uint32", "tl.int16", "tl.uint16", "tl.int8", "tl.uint8", "tl.int1"}
_POINTER_SINKS = {"tl.load", "tl.store", "tl.make_block_ptr"}
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Divide, cst.Power,
               cst.LeftShift, cst.RightShift, cst.BitAnd, cst.BitOr, cst.BitXor)
_FLOAT_CALLS = {"tl.load", "tl.zeros", "tl.full", "tl.dot", "tl.exp", "tl.exp2", "tl.log", "tl.sum", "tl.sqrt"}
_TRANSPARENT_CALLS = {"tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"}
_COMBINING_CALLS = {"tl.cdiv", "tl.minimum", "tl.maximum", "min", "max", "abs", "tl.abs"}
_LOOP_CALLS = {"range", "tl.range"}
_COMPILE_TIME_LOOP_CALLS = {"tl.static_range"}


class Trait:
    """Bit flags of what a value may be (a plain int bit set keeps the analysis cheap)."""

    DYNAMIC = 1 << 0  # not known at compile time
    WIDE = 1 << 1  # a 64-bit integer
    NARROW = 1 << 2  # a 32-bit (or narrower) integer
    INDEX = 1 << 3  # runtime index: program id, loop variable, loaded value
    PROGRAM = 1 << 4  # derived from tl.program_id
    EXTENT = 1 << 5  # runtime extent: integer kernel parameter
    LOADED = 1 << 6  # loaded from memory
    POINTER = 1 << 7
    BLOCK = 1 << 8  # block pointer
    FLOAT = 1 << 9  # may be floating point


T = Trait
Traits = int
_NOTHING: Traits = 0
_CARRIED = T.INDEX | T.PROGRAM | T.EXTENT | T.LOADED  # what a cast keeps from its operand
_WIDTHS = T.WIDE | T.NARROW

_NONE_OPEN = 1 << 30
_MAX_DEPTH = 60  # nested definitions followed recursively before evaluating all definitions in order


class _TooDeep(Exception):
    pass


_REGISTRY: weakref.WeakKeyDictionary[ModuleFacts, dict[int, KernelAnalysis]] = weakref.WeakKeyDictionary()


class KernelAnalysis:
    """Facts about the values of one kernel (or jit helper), computed lazily and cached for every rule."""

    def __init__(self, kernel: Kernel, facts: ModuleFacts, index: NodeIndex) -> None:
        self.kernel = kernel
        self.facts = facts
        self.index = index
        self.nodes = index.subtree(kernel.node)
        _REGISTRY.setdefault(facts, {})[id(kernel.node)] = self
        self.assignments: dict[str, list] = {}  # flow-insensitive: every expression ever bound to a name
        self.loops: list[cst.For] = []
        self._definitions: dict[int, list[tuple[str, Definition]]] = {}
        self._all_definitions: dict[str, list[Definition]] = {}
        self._targets: set[int] = set()
        for node in self.nodes:
            kind = type(node)
            if kind is cst.Assign or kind is cst.AugAssign or kind is cst.AnnAssign:
                self._record(node)
            elif kind is cst.For:
                self.loops.append(node)
                self._record_loop(node)
            elif kind is cst.NamedExpr and isinstance(node.target, cst.Name):
                self.assignments.setdefault(node.target.value, []).append(node.value)
        self._params = {name: Definition(name, "param") for name in kernel.params}
        solver = FlowSolver(self._transfer, self._bind_loop)
        self._before = solver.run(kernel.node, {name: frozenset((d,)) for name, d in self._params.items()})
        self._traits: dict[int, Traits] = {}
        self._definition_traits: dict[int, Traits] = {}
        self._open: dict[int, int] = {}  # definitions being computed -> their depth (cycle detection)
        self._lowest_open = _NONE_OPEN
        self._warmed = False
        self._statement_cache: dict[int, cst.CSTNode | None] = {}

    @classmethod
    def of(cls, kernel: Kernel, facts: ModuleFacts, index: NodeIndex) -> KernelAnalysis:
        """The analysis of ``kernel``, shared with ``FileContext.analysis`` (built at most once per kernel)."""
        found = _REGISTRY.get(facts, {}).get(id(kernel.node))
        return found if found is not None else cls(kernel, facts, index)

    # -- building ----------------------------------------------------------------------------------------------
    def _record(self, statement) -> None:
        found = []
        for target, value in bound_names(statement):
            self._targets.add(id(target))
            name = target.value
            if isinstance(statement, cst.AugAssign):
                definition = Definition(name, "augmented", statement, value, statement.operator)
                combined = cst.BinaryOperation(left=target, operator=_binary_of(statement.operator), right=value)
                self.assignments.setdefault(name, []).append(combined)
            else:
                definition = Definition(name, "assign", statement, value)
                if value is not None:
                    self.assignments.setdefault(name, []).append(value)
            found.append((name, definition))
            self._all_definitions.setdefault(name, []).append(definition)
        self._definitions[id(statement)] = found

    def _record_loop(self, loop: cst.For) -> None:
        found = []
        for target in loop_targets(loop):
            self._targets.add(id(target))
            definition = Definition(target.value, "loop", loop, loop.iter)
            found.append((target.value, definition))
            self._all_definitions.setdefault(target.value, []).append(definition)
            self.assignments.setdefault(target.value, []).append(_LOOP)
        self._definitions[id(loop)] = found

    def _transfer(self, statement: cst.CSTNode, state: State) -> State:
        found = self._definitions.get(id(statement))
        if not found:
            return state
        state = dict(state)
        for name, definition in found:
            state[name] = frozenset((definition,))
        return state

    def _bind_loop(self, loop: cst.For, state: State) -> State:
        return self._transfer(loop, state)

    # -- definitions and reads ---------------------------------------------------------------------------------
    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement, or compound header (``if``/``for``/``while``), that evaluates ``node``."""
        cache = self._statement_cache
        key = id(node)
        if key in cache:
            return cache[key]
        found = None
        path = [key]  # every node on the way up shares the answer
        child = node
        for ancestor in self.index.ancestors(node):
            is_statement = isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.FunctionDef))
            if not is_statement and id(ancestor) in cache:
                found = cache[id(ancestor)]
                break
            if isinstance(ancestor, cst.BaseSmallStatement):
                found = ancestor
                break
            if isinstance(ancestor, (cst.If, cst.While)) and child is ancestor.test:
                found = ancestor
                break
            if isinstance(ancestor, cst.For) and child is ancestor.iter:
                found = ancestor
                break
            if isinstance(ancestor, (cst.BaseCompoundStatement, cst.FunctionDef)):
                break
            path.append(id(ancestor))
            child = ancestor
        for visited in path:
            cache[visited] = found
        return found

    def definitions(self, read: cst.Name) -> tuple[Definition, ...]:
        """The definitions of ``read``'s name that can reach this read."""
        statement = self.statement_of(read)
        state = self._before.get(id(statement)) if statement is not None else None
        name = read.value
        if state is not None:
            return tuple(state.get(name, ()))
        found = list(self._all_definitions.get(name, ()))
        if name in self._params:
            found.append(self._params[name])
        return tuple(found)

    def is_read(self, node: cst.Name) -> bool:
        """A Name node that reads a variable (not an assignment target, attribute name or keyword)."""
        if id(node) in self._targets and not isinstance(self.index.parent(node), cst.AugAssign):
            return False
        parent = self.index.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return False
        return not isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName))

    @cached_property
    def reads(self) -> dict[str, list[cst.Name]]:
        """Every read of every name in the kernel body, in source order."""
        found: dict[str, list[cst.Name]] = {}
        body_start = self.index.order(self.kernel.node.body)
        for node in self.nodes:
            if isinstance(node, cst.Name) and self.index.order(node) > body_start and self.is_read(node):
                found.setdefault(node.value, []).append(node)
        return found

    def later_reads(self, reads: list[cst.Name]) -> dict[int, list[cst.Name]]:
        """For each read (by id), the reads of the same name that can see the same value after its statement
        has run: later statements, later loop iterations (the read itself included), until a reassignment.
        Reads in the same statement are not included. One extra pass over the kernel for the whole batch."""
        by_statement: dict[int, list[Mark]] = {}
        for read in reads:
            statement = self.statement_of(read)
            if statement is not None:
                by_statement.setdefault(id(statement), []).append(Mark(read))

        def transfer(statement, state):
            placed = by_statement.get(id(statement))
            killed = self._definitions.get(id(statement)) if not isinstance(statement, cst.For) else None
            if not placed and not killed:
                return state
            state = dict(state)
            for mark in placed or ():
                state[mark.read.value] = state.get(mark.read.value, frozenset()) | {mark}
            for name, _ in killed or ():
                state[name] = frozenset()
            return state

        def bind_loop(loop, state):
            found = self._definitions.get(id(loop))
            if not found:
                return state
            state = dict(state)
            for name, _ in found:
                state[name] = frozenset()
            return state

        before = FlowSolver(transfer, bind_loop).run(self.kernel.node, {})
        result: dict[int, list[cst.Name]] = {id(read): [] for read in reads}
        names = {read.value for read in reads}
        for name in names:
            for candidate in self.reads.get(name, ()):
                statement = self.statement_of(candidate)
                state = before.get(id(statement)) if statement is not None else None
                for mark in (state or {}).get(name, ()):
                    result[id(mark.read)].append(candidate)
        return result

    def are_exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """True when the two nodes sit in different branches of one ``if`` (at most one of them runs)."""
        branch_of = {}
        child = first
        for ancestor in self.index.ancestors(first):
            if isinstance(ancestor, (cst.If, cst.IfExp)):
                branch_of[id(ancestor)] = _branch(ancestor, child)
            child = ancestor
        child = second
        for ancestor in self.index.ancestors(second):
            side = branch_of.get(id(ancestor))
            if side is not None:
                other = _branch(ancestor, child)
                return side != other and "test" not in (side, other)
            child = ancestor
        return False

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The ``for``/``while`` loops whose body holds ``node``, innermost first (inside the kernel)."""
        found = []
        child = node
        for ancestor in self.index.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)) and child is ancestor.body:
                found.append(ancestor)
            if ancestor is self.kernel.node:
                break
            child = ancestor
        return found

    def defined_inside(self, definition: Definition, region: cst.CSTNode) -> bool:
        """Whether ``definition`` is made inside ``region`` (a loop, ``if`` or function node)."""
        statement = definition.statement
        if statement is None:
            return False
        return statement is region or any(a is region for a in self.index.ancestors(statement))

    # -- traits ------------------------------------------------------------------------------------------------
    def traits(self, expr: cst.BaseExpression) -> Traits:
        """Everything ``expr`` may be, over all paths (see ``Trait``)."""
        found = self._traits.get(id(expr), -1)
        if found >= 0:
            return found
        return self._entry(self._expression_traits, expr)

    def definition_traits(self, definition: Definition) -> Traits:
        """Everything the value bound by ``definition`` may be."""
        found = self._definition_traits.get(id(definition), -1)
        if found >= 0:
            return found
        return self._entry(self._traits_of_definition, definition)

    def _entry(self, compute, subject) -> Traits:
        """Top-level requests retry once after evaluating every definition in source order when a chain of
        definitions is too deep to follow recursively (each is then cheap: its inputs are already known)."""
        if self._open or self._warmed:
            return compute(subject)
        try:
            return compute(subject)
        except _TooDeep:
            self._open.clear()
            self._lowest_open = _NONE_OPEN
            self._warmed = True
            ordered = sorted(
                (d for found in self._all_definitions.values() for d in found), key=lambda d: self.index.order(d.statement)
            )
            for definition in ordered:
                self.definition_traits(definition)
            return compute(subject)

    def _expression_traits(self, expr: cst.BaseExpression) -> Traits:
        key = id(expr)
        if isinstance(expr, cst.BinaryOperation):
            self._left_spine_first(expr)
        depth = len(self._open)
        saved, self._lowest_open = self._lowest_open, _NONE_OPEN
        result = self._compute(expr)
        complete = self._lowest_open >= depth  # no cycle back into a definition still being computed
        self._lowest_open = min(saved, self._lowest_open)
        if complete and self.index.parent(expr) is not None:  # a node of the module, not a temporary
            self._traits[key] = result
        return result

    def _left_spine_first(self, expr: cst.BinaryOperation) -> None:
        """Long sums nest to the left (`a + b + c + ...`): computing the innermost first keeps recursion shallow."""
        spine = []
        node = expr.left
        while isinstance(node, cst.BinaryOperation) and id(node) not in self._traits and len(spine) < 10_000:
            spine.append(node)
            node = node.left
        for node in reversed(spine[1:]):
            self.traits(node)

    def _traits_of_definition(self, definition: Definition) -> Traits:
        key = id(definition)
        if key in self._open:  # a loop-carried cycle: contributes nothing new on this path
            self._lowest_open = min(self._lowest_open, self._open[key])
            return _NOTHING
        depth = len(self._open)
        if depth >= _MAX_DEPTH:
            if not self._warmed:
                raise _TooDeep
            self._lowest_open = 0  # unknown: cache nothing that depends on it
            return T.DYNAMIC | T.NARROW
        self._open[key] = depth
        saved, self._lowest_open = self._lowest_open, _NONE_OPEN
        try:
            result = self._definition(definition)
        finally:
            del self._open[key]
        complete = self._lowest_open >= depth
        self._lowest_open = min(saved, self._lowest_open)
        if complete:
            self._definition_traits[key] = result
        return result

    def _definition(self, definition: Definition) -> Traits:
        kind = definition.kind
        if kind == "param":
            name = definition.name
            if self.kernel.is_constexpr_param(name):
                return T.NARROW
            if name in self.pointer_params:
                return T.DYNAMIC | T.POINTER
            return T.DYNAMIC | T.NARROW | T.EXTENT
        if kind == "loop":
            return self._loop_variable(definition.value)
        if kind == "augmented":
            statement = definition.statement
            previous = self._before.get(id(statement), {}).get(definition.name)
            if previous is None:
                previous = self._all_definitions.get(definition.name, ())
            left = _union(self.definition_traits(d) for d in previous)
            return _combine(_binary_of(definition.operator), left, self.traits(definition.value))
        if definition.value is None:
            return T.DYNAMIC
        return self.traits(definition.value)

    def _loop_variable(self, iterable: cst.BaseExpression) -> Traits:
        if isinstance(iterable, cst.Call):
            name = self.facts.qualname(iterable.func) or _builtin(iterable.func)
            if name in _COMPILE_TIME_LOOP_CALLS:
                return T.NARROW
            if name in _LOOP_CALLS:
                bounds = [self.traits(a.value) for a in iterable.args if a.keyword is None]
                width = _combined_width(bounds) or T.NARROW
                carried = _union(b & (T.PROGRAM | T.EXTENT | T.LOADED) for b in bounds)
                return (T.DYNAMIC | T.INDEX) | width | carried
        return T.DYNAMIC | T.INDEX | T.NARROW

    def _compute(self, expr: cst.BaseExpression) -> Traits:
        if isinstance(expr, cst.Integer):
            return T.NARROW
        if isinstance(expr, (cst.Float, cst.Imaginary)):
            return T.FLOAT
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return _NOTHING
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return _NOTHING
            definitions = self.definitions(expr)
            if not definitions:
                return T.DYNAMIC | T.NARROW
            return _union(self.definition_traits(d) for d in definitions)
        if isinstance(expr, cst.BinaryOperation):
            return _combine(expr.operator, self.traits(expr.left), self.traits(expr.right))
        if isinstance(expr, cst.UnaryOperation):
            inner = self.traits(expr.expression)
            if isinstance(expr.operator, cst.Not):
                return (inner & T.DYNAMIC) | T.NARROW
            return inner
        if isinstance(expr, cst.Comparison):
            return self._comparison(expr)
        if isinstance(expr, cst.BooleanOperation):
            return ((self.traits(expr.left) | self.traits(expr.right)) & T.DYNAMIC) | T.NARROW
        if isinstance(expr, cst.IfExp):
            test = self.traits(expr.test) & T.DYNAMIC
            return self.traits(expr.body) | self.traits(expr.orelse) | test
        if isinstance(expr, cst.Subscript):
            return self.traits(expr.value) & ~T.BLOCK
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return _union(self.traits(e.value) for e in expr.elements)
        return T.DYNAMIC

    def _comparison(self, expr: cst.Comparison) -> Traits:
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in expr.comparisons) and any(
            isinstance(o, cst.Name) and o.value == "None" for o in operands
        ):
            return T.NARROW  # `ptr is None` is decided when the kernel is specialised
        return (_union(self.traits(o) for o in operands) & T.DYNAMIC) | T.NARROW

    def _call(self, call: cst.Call) -> Traits:
        cast = self.cast_target(call)
        if cast is not None:
            value, dtype = cast
            carried = (self.traits(value) & _CARRIED) | T.DYNAMIC
            target = self.facts.qualname(dtype) or ""
            if target in _INT64:
                return carried | T.WIDE
            if target in _NARROW_INTS:
                return carried | T.NARROW
            if target.startswith(("tl.float", "tl.bfloat")):
                return carried | T.FLOAT
            return self.traits(value) | T.DYNAMIC
        name = self.facts.qualname(call.func) or _builtin(call.func)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if name == "tl.constexpr":
            return T.NARROW
        if name == "tl.program_id":
            return T.DYNAMIC | T.NARROW | T.INDEX | T.PROGRAM
        if name == "tl.num_programs":
            return T.DYNAMIC | T.NARROW | T.EXTENT
        if name == "tl.load":
            return T.DYNAMIC | T.NARROW | T.INDEX | T.LOADED | T.FLOAT
        if name in ("tl.make_block_ptr", "tl.advance"):
            return T.DYNAMIC | T.BLOCK
        if name in _TRANSPARENT_CALLS and positional:
            return self.traits(positional[0])
        if name == "tl.where" and len(positional) == 3:
            values = [self.traits(p) for p in positional[1:]]
            width = _combined_width(values)
            return (_union(values) & ~_WIDTHS) | width | T.DYNAMIC | (self.traits(positional[0]) & T.DYNAMIC)
        if name in _COMBINING_CALLS and positional:
            parts = [self.traits(p) for p in positional]
            width = _combined_width(parts) or T.NARROW
            return (_union(parts) & ~(_WIDTHS | T.POINTER | T.BLOCK)) | width | T.DYNAMIC
        if name in ("tl.zeros", "tl.full"):
            dtype_node = argument(call, 1 if name == "tl.zeros" else 2, "dtype")
            dtype = (self.facts.qualname(dtype_node) if dtype_node is not None else None) or ""
            if dtype in _INT64:
                return T.DYNAMIC | T.WIDE
            return T.DYNAMIC | T.NARROW | T.FLOAT
        if name == "tl.arange":
            return T.DYNAMIC | T.NARROW
        helper = self.facts.kernels.get(name or "") if name and "." not in name else None
        if helper is not None and helper is not self.kernel:
            returned = self._helper_returns(helper)
            if returned is not None:
                return returned
        result = T.DYNAMIC | T.NARROW
        if name in _FLOAT_CALLS or any(self.traits(p) & T.FLOAT for p in positional[:1]):
            result |= T.FLOAT
        return result

    def _helper_returns(self, helper: Kernel) -> Traits | None:
        analysis = KernelAnalysis.of(helper, self.facts, self.index)
        return analysis.returned_traits

    @cached_property
    def returned_traits(self) -> Traits | None:
        """What this kernel (used as a jit helper) returns; None while it is being computed (recursion)."""
        self.__dict__["returned_traits"] = None
        values = [n.value for n in self.nodes if isinstance(n, cst.Return) and n.value is not None]
        if not values:
            return T.DYNAMIC
        kept = T.WIDE | T.NARROW | T.POINTER | T.BLOCK | T.FLOAT
        return (_union(self.traits(v) for v in values) & kept) | T.DYNAMIC

    # -- names -------------------------------------------------------------------------------------------------
    def is_param(self, name: str) -> bool:
        return name in self.kernel.params and name not in self.assignments

    @cached_property
    def pointer_params(self) -> set[str]:
        """Parameters that are the base of pointer arithmetic reaching a load, store, atomic, block pointer,
        distributed call, or a pointer parameter of a jit helper."""
        self.__dict__["pointer_params"] = set()  # a recursive helper sees no pointers while this is computed
        pending: list[cst.BaseExpression] = []
        for node in self.nodes:
            if not isinstance(node, cst.Call) or not node.args:
                continue
            name = self.facts.qualname(node.func) or _builtin(node.func)
            if name in _POINTER_SINKS or name.startswith(("tl.atomic_", "dl.", "shmem.")):
                base = argument(node, 0, "base") if name == "tl.make_block_ptr" else node.args[0].value
                if base is not None:
                    pending.append(base)
            helper = self.facts.kernels.get(name) if "." not in name else None
            if helper is not None and helper is not self.kernel:
                pending.extend(self._pointer_arguments(node, helper))
        bases: set[str] = set()
        seen: set[str] = set()
        while pending:
            base = _pointer_base(pending.pop())
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
        found = []
        for position, arg in enumerate(a for a in call.args if not a.star):
            if arg.keyword is not None:
                param = arg.keyword.value
            else:
                param = helper.params[position] if position < len(helper.params) else None
            if param in pointers:
                found.append(arg.value)
        return found

    def is_pointer_name(self, name: str) -> bool:
        return name in self.pointer_params

    # -- expression properties ---------------------------------------------------------------------------------
    def is_constexpr(self, expr: cst.BaseExpression) -> bool:
        """Known at compile time on every path: literals, constexpr parameters and arithmetic on them."""
        return not self.traits(expr) & T.DYNAMIC

    def is_int64(self, expr: cst.BaseExpression) -> bool:
        """Widened to 64 bits on every path: an explicit cast, or arithmetic with any 64-bit operand."""
        found = self.traits(expr)
        return found & _WIDTHS == T.WIDE

    def may_be_int64(self, expr: cst.BaseExpression) -> bool:
        """Widened to 64 bits on at least one path."""
        return bool(self.traits(expr) & T.WIDE)

    def maybe_float(self, expr: cst.BaseExpression) -> bool:
        """Could hold floating-point data (float literals, loads not narrowed to an integer type)."""
        return bool(self.traits(expr) & T.FLOAT)

    def is_runtime_index(self, expr: cst.BaseExpression) -> bool:
        """Derived from a program id, a loop variable or a loaded value."""
        return bool(self.traits(expr) & T.INDEX)

    def is_runtime_extent(self, expr: cst.BaseExpression) -> bool:
        """A runtime size (integer parameter, or computed from them) that is not also an index."""
        found = self.traits(expr)
        return found & (T.EXTENT | T.INDEX | T.DYNAMIC) == T.EXTENT | T.DYNAMIC

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
        if not isinstance(expr, cst.Name):
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
        if annotation is not None and not (isinstance(annotation, cst.Name) and annotation.value == "int"):
            return None
        return name

    def cast_target(self, call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(value, dtype) of ``value.to(dtype)`` or ``tl.cast(value, dtype)``."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "to" and call.args:
            dtype = argument(call, 0, "dtype")
            return (func.value, dtype) if dtype is not None else None
        if self.facts.qualname(func) == "tl.cast" and len(call.args) >= 2:
            dtype = argument(call, 1, "dtype")
            return (call.args[0].value, dtype) if dtype is not None else None
        return None

    def is_widening_cast(self, call: cst.Call) -> bool:
        cast = self.cast_target(call)
        return cast is not None and self.facts.qualname(cast[1]) in _INT64

    def is_narrowing_cast(self, call: cst.Call) -> bool:
        """``.to(tl.int32)`` / ``tl.cast(x, tl.int32)`` and the narrower integer types."""
        cast = self.cast_target(call)
        return cast is not None and self.facts.qualname(cast[1]) in _NARROW_INTS

    # -- pointer arithmetic ------------------------------------------------------------------------------------
    @cached_property
    def pointer_expressions(self) -> list[tuple[cst.CSTNode, list[cst.BaseExpression]]]:
        """Each outermost pointer arithmetic (``q + off``, ``p += off``) with its integer offset operands."""
        found = []
        for node in self.nodes:
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
                if isinstance(node.target, cst.Name) and self.is_pointer(node.target):
                    found.append((node, [node.value]))
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
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

    def offset_nodes(self, offsets: list[cst.BaseExpression], stop=None) -> list[cst.BaseExpression]:
        """Every expression an offset is computed from: through arithmetic, subscripts, ``tl.multiple_of``-style
        hints and, for names, the expressions of their reaching definitions. Other calls are leaves, and so is
        any node for which ``stop(node)`` is true."""
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
            if isinstance(node, cst.BinaryOperation):
                stack.extend((node.right, node.left))
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif isinstance(node, cst.Subscript):
                stack.append(node.value)
            elif isinstance(node, cst.IfExp):
                stack.extend((node.orelse, node.body))
            elif isinstance(node, cst.Call) and (self.facts.qualname(node.func) in _TRANSPARENT_CALLS) and node.args:
                stack.append(node.args[0].value)
            elif self.facts.is_call_to(node, "tl.where") and len(node.args) == 3:
                stack.extend((node.args[2].value, node.args[1].value))
            elif isinstance(node, cst.Name):
                for definition in self.definitions(node):
                    if definition.kind == "assign" and definition.value is not None:
                        stack.append(definition.value)
                    elif definition.kind == "augmented":
                        stack.append(definition.value)
                        stack.append(definition.statement.target)
        return found


_LOOP = object()  # marker in ``assignments``: the name is a loop variable


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` or passed as ``keyword``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


_argument = argument


def _builtin(func: cst.BaseExpression) -> str:
    return func.value if isinstance(func, cst.Name) else ""


def _is_sum(node) -> bool:
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract))


def _union(parts) -> Traits:
    result = 0
    for part in parts:
        result |= part
    return result


def _combined_width(parts: list[Traits]) -> Traits:
    """Integer width of an arithmetic result: wide if any operand may be wide, narrow if all may be narrow."""
    sized = [p & _WIDTHS for p in parts if p & _WIDTHS]
    if not sized:
        return _NOTHING
    width = 0
    if any(s & T.WIDE for s in sized):
        width |= T.WIDE
    if all(s & T.NARROW for s in sized):
        width |= T.NARROW
    return width


def _combine(operator: cst.BaseBinaryOp, left: Traits, right: Traits) -> Traits:
    if not isinstance(operator, _ARITHMETIC):
        return ((left | right) & T.DYNAMIC) | T.NARROW
    result = (left | right) & ~(_WIDTHS | T.POINTER | T.BLOCK)
    result |= _combined_width([left, right])
    if isinstance(operator, (cst.Add, cst.Subtract)) and (left | right) & T.POINTER:
        result |= T.POINTER
    if isinstance(operator, cst.Divide):
        result |= T.FLOAT
    return result


def _branch(node: cst.CSTNode, child: cst.CSTNode) -> str:
    if child is node.test:
        return "test"
    return "body" if child is node.body else "orelse"


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


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    mapping = {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.DivideAssign: cst.Divide,
        cst.PowerAssign: cst.Power, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
        cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    }
    return mapping.get(type(operator), cst.Add)()
