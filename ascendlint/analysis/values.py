"""The shared intra-kernel value analysis: what each name and expression inside a kernel can be.

Built once per kernel (on first request, see ``FileContext.analysis``) and shared by every rule.

One forward data-flow pass over the kernel's control-flow graph (``cfg.py``, solved by ``flow.solve``) carries an
abstract value for every name; every expression is evaluated against the state that reaches its statement and its
value is kept, so a rule's question is a dictionary look-up. The pass runs each point once plus once per change of
its input (the lattice is small and magnitudes are widened at loop heads), so its cost grows linearly with the
kernel. An abstract value is ``(bits, magnitude, divisors)``:

- *bits* (``Trait``) are "may" facts united over all paths: ``DYNAMIC`` (not known at compile time), ``TENSOR``
  (a tensor when the compiler reaches it, not a ``constexpr`` object: plain assignment, runtime calls and
  arithmetic on tensors make tensors; constexpr parameters, annotated ``x: tl.constexpr`` locals, ``static_range``
  variables and literals stay constexprs), integer widths ``WIDE``/``NARROW``, kinds ``INT``/``FLOAT``, and where a
  value comes from: ``INDEX`` (program id, loop variable, loaded value), ``PROGRAM``, ``EXTENT`` (an integer
  parameter), ``LOADED``, ``POINTER``, ``BLOCK`` (block pointer). An expression is int64 when some path makes it
  ``WIDE`` and none leaves it ``NARROW``; an integer result is wide if any operand is wide.
- *magnitude* is the number of bits the value plausibly needs (``magnitudes.py`` states the model);
- *divisors* are the constexpr parameters the value was divided by (``i_t`` counts tiles of ``BT`` when it ranges
  over ``tl.cdiv(T, BT)``), so that ``i_t * BT`` is bounded by ``T`` again.

Reaching definitions (``flow.ReachingDefinitions``) answer which bindings a read can see; they are solved on the
same graph, only when a rule asks.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from . import magnitudes as mag
from .cfg import BIND, ENTRY, HEAD, ITERABLE, STATEMENT, TEST, WITH, Graph, Point
from .flow import Definition, Mark, ReachingDefinitions, binding_key, bound_names, loop_targets, solve, with_targets
from .host_dtypes import pointer_dtype
from .module_facts import Kernel, ModuleFacts, integer_value
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
    TENSOR = 1 << 10  # a tensor when the compiler reaches it (else a constexpr object)
    INT = 1 << 11  # may be an integer
    TOKENS = 1 << 12  # a token count or a token offset: bounded by the tokens of one launch, about 2**20
    SEQUENCE = 1 << 13  # the index of a sequence, batch element or request
    TILE = 1 << 14  # a vector of offsets built from tl.arange
    # a per-row extent the launching host code shows to be large (a row stride of an activation, vocab-sized logits
    # or a KV cache), or one of a kernel no launch of this module shows (the magnitude model decides alone)
    HOSTED = 1 << 15


T = Trait
Traits = int
Value = tuple  # (bits, magnitude, divisors)
_NO_DIVISORS: frozenset = frozenset()
_NOTHING: Value = (0, 0, _NO_DIVISORS)
_CARRIED = T.INDEX | T.PROGRAM | T.EXTENT | T.LOADED  # what a cast keeps from its operand
_WIDTHS = T.WIDE | T.NARROW
_RUNTIME = T.DYNAMIC | T.TENSOR
# What a helper's caller may rely on about its returned value: width, kind, and where it comes from.
_RETURNED = (T.WIDE | T.NARROW | T.POINTER | T.BLOCK | T.FLOAT | T.INT | T.INDEX | T.PROGRAM | T.LOADED | T.TOKENS
             | T.TILE)
_UNKNOWN: Value = (T.DYNAMIC | T.TENSOR | T.NARROW | T.INT, mag.EXTENT_BITS, _NO_DIVISORS)


def join(first: Value, second: Value) -> Value:
    if first is second:
        return first
    bits = first[0] | second[0]
    size = first[1] if first[1] >= second[1] else second[1]
    divisors = first[2] & second[2] if first[2] or second[2] else _NO_DIVISORS
    return (bits, size, divisors)


def _named_index(name: str, value: Value) -> Value:
    """A runtime index bound to a name that says what it counts (``i_h``, ``req_idx``) is bounded by that count."""
    if value[0] & T.INDEX:
        bound = mag.index_name_bits(name)
        bits = value[0] | (T.SEQUENCE if mag.names_sequence(name) else 0)
        if bound is not None and bound < value[1]:
            return (bits, bound, _NO_DIVISORS)
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


def _per_token_name(name: str, bits: int) -> bool:
    """A name that says it is a per-row extent: a head dim, hidden size or vocabulary, a row stride, a token
    count (a row of ``T`` elements)."""
    return bits in (mag.FEATURE_BITS, mag.VOCAB_BITS, mag.TOKEN_BITS) or "stride" in name.lower()


def _widen(old: Value, new: Value) -> Value:
    return (old[0] | new[0], mag.widen(old[1], new[1]), old[2] & new[2])


def _registry(facts: ModuleFacts) -> dict[int, "KernelAnalysis"]:
    """Analyses live on the module facts they belong to, and die with them."""
    return facts.memo("kernel_analyses", dict)


class KernelAnalysis:
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

    # -- building ----------------------------------------------------------------------------------------------
    def _record(self, statement) -> None:
        found = []
        if type(statement) is cst.AnnAssign and self._is_constexpr_annotation(statement.annotation.annotation):
            self._annotated_constexpr.add(id(statement))
        for target, value in bound_names(statement):
            self._targets.add(id(target))
            name = target.value
            if type(statement) is cst.AugAssign:
                definition = Definition(name, "augmented", statement, value, statement.operator)
                combined = cst.BinaryOperation(left=target, operator=_binary_of(statement.operator), right=value)
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

    @cached_property
    def graph(self) -> Graph:
        return Graph(self.kernel.node)

    @cached_property
    def _reaching(self) -> ReachingDefinitions:
        return ReachingDefinitions(self.graph, self._params, self._bindings)

    # -- definitions and reads ---------------------------------------------------------------------------------
    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The small statement, or compound header (``if``/``for``/``while``/``with``), that evaluates ``node``."""
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
            if type(ancestor) in (cst.If, cst.While) and child is ancestor.test:
                found = ancestor
                break
            if type(ancestor) is cst.For and child is ancestor.iter:
                found = ancestor
                break
            if type(ancestor) is cst.With and child is not ancestor.body:
                found = ancestor
                break
            if isinstance(ancestor, (cst.BaseCompoundStatement, cst.FunctionDef)):
                break
            path.append(id(ancestor))
            child = ancestor
        for visited in path:
            cache[visited] = found
        return found

    def _point(self, node: cst.CSTNode) -> Point | None:
        statement = self.statement_of(node)
        return self.graph.point_of(statement) if statement is not None else None

    def definitions(self, read: cst.Name) -> tuple[Definition, ...]:
        """The definitions of ``read``'s name that can reach this read."""
        point = self._point(read)
        name = read.value
        if point is not None:
            state = self._reaching.before[point.index]
            if state is not None:
                return tuple(sorted(state.get(name, ()), key=_creation))
        found = list(self._all_definitions.get(name, ()))
        if name in self._params:
            found.append(self._params[name])
        return tuple(found)

    def is_read(self, node: cst.Name) -> bool:
        """A Name node that reads a variable (not an assignment target, attribute name or keyword)."""
        if id(node) in self._targets and not isinstance(self.index.parent(node), cst.AugAssign):
            return False
        parent = self.index.parent(node)
        if type(parent) is cst.Attribute and parent.attr is node:
            return False
        if type(parent) is cst.Arg and parent.keyword is node:
            return False
        return type(parent) not in (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)

    @cached_property
    def reads(self) -> dict[str, list[cst.Name]]:
        """Every read of every name in the kernel body, in source order."""
        found: dict[str, list[cst.Name]] = {}
        body_start = self.index.order(self.kernel.node.body)
        for node in self.nodes:
            if type(node) is cst.Name and self.index.order(node) > body_start and self.is_read(node):
                found.setdefault(node.value, []).append(node)
        return found

    def later_reads(self, reads: list[cst.Name]) -> dict[int, list[cst.Name]]:
        """For each read (by id), the reads of the same name that can see the same value after its statement
        has run: later statements, later loop iterations (the read itself included), until a reassignment.
        Reads in the same statement are not included. One extra pass over the kernel for the whole batch."""
        placed_at: dict[int, list[Mark]] = {}
        for read in reads:
            point = self._point(read)
            if point is not None:
                placed_at.setdefault(point.index, []).append(Mark(read))

        def transfer(point: Point, state: dict) -> dict:
            placed = placed_at.get(point.index)
            killed = self._bindings.get(binding_key(point)) if point.kind != ITERABLE else None
            if not placed and not killed:
                return state
            state = dict(state)
            for mark in placed or ():
                state[mark.read.value] = state.get(mark.read.value, frozenset()) | {mark}
            for name, _ in killed or ():
                state[name] = frozenset()
            return state

        before = solve(self.graph, {}, transfer, lambda a, b: a | b)
        result: dict[int, list[cst.Name]] = {id(read): [] for read in reads}
        names = {read.value for read in reads}
        for name in names:
            for candidate in self.reads.get(name, ()):
                point = self._point(candidate)
                state = before[point.index] if point is not None else None
                for mark in (state or {}).get(name, ()):
                    result[id(mark.read)].append(candidate)
        return result

    def are_exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """True when the two nodes sit in different branches of one ``if`` (at most one of them runs)."""
        branch_of = {}
        child = first
        for ancestor in self.index.ancestors(first):
            if type(ancestor) in (cst.If, cst.IfExp):
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

    def compile_time_exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """True when the two nodes sit in different arms of one ``if`` (or conditional expression) whose test the
        compiler folds (a constexpr test, arithmetic on constexprs): only one arm exists in any compiled kernel, so
        neither node runs after the other, not even on a later iteration of a loop around the ``if``."""
        branch_of = {}
        child = first
        for ancestor in self.index.ancestors(first):
            if type(ancestor) in (cst.If, cst.IfExp):
                branch_of[id(ancestor)] = _branch(ancestor, child)
            child = ancestor
        child = second
        for ancestor in self.index.ancestors(second):
            side = branch_of.get(id(ancestor))
            if side is not None:
                other = _branch(ancestor, child)
                if side == other or "test" in (side, other):
                    return False
                return self.is_compile_time(ancestor.test)
            child = ancestor
        return False

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The ``for``/``while`` loops whose body holds ``node``, innermost first (inside the kernel)."""
        found = []
        child = node
        for ancestor in self.index.ancestors(node):
            if type(ancestor) in (cst.For, cst.While) and child is ancestor.body:
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

    # -- the value pass ----------------------------------------------------------------------------------------
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
            combined = self._binary(_binary_of(node.operator), left, right, node.target, node.value)
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

    # -- expressions -------------------------------------------------------------------------------------------
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
                return (T.INT | T.NARROW, 1, _NO_DIVISORS)
            return self._global(name)
        if kind is cst.Integer:
            return (T.INT | T.NARROW, mag.of_int(integer_value(node)), _NO_DIVISORS)
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
                return (T.INT | T.NARROW, mag.CONSTEXPR_BITS, _NO_DIVISORS)
            return base
        if kind is cst.Float or kind is cst.Imaginary:
            return (T.FLOAT, 0, _NO_DIVISORS)
        if kind in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            return _NOTHING
        if kind is cst.UnaryOperation:
            inner = values[id(node.expression)]
            if type(node.operator) is cst.Not:
                return ((inner[0] & _RUNTIME) | T.INT | T.NARROW, 1, _NO_DIVISORS)
            return inner
        if kind is cst.Comparison:
            return self._comparison(node, values)
        if kind is cst.BooleanOperation:
            bits = (values[id(node.left)][0] | values[id(node.right)][0]) & _RUNTIME
            return (bits | T.INT | T.NARROW, 1, _NO_DIVISORS)
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
        return (T.DYNAMIC | T.TENSOR, 0, _NO_DIVISORS)

    def _comparison(self, expr: cst.Comparison, values: dict) -> Value:
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        if all(type(c.operator) in (cst.Is, cst.IsNot) for c in expr.comparisons) and any(
            type(o) is cst.Name and o.value == "None" for o in operands
        ):
            return (T.INT | T.NARROW, 1, _NO_DIVISORS)  # `ptr is None` is decided when the kernel is specialised
        bits = 0
        for operand in operands:
            bits |= values[id(operand)][0]
        return ((bits & _RUNTIME) | T.INT | T.NARROW, 1, _NO_DIVISORS)

    def _binary(self, operator, left: Value, right: Value, left_node, right_node) -> Value:
        lbits, rbits = left[0], right[0]
        if not isinstance(operator, _ARITHMETIC):
            return (((lbits | rbits) & _RUNTIME) | T.INT | T.NARROW, mag.UNBOUNDED, _NO_DIVISORS)
        if type(operator) in (cst.FloorDivide, cst.Modulo, cst.RightShift) and lbits & T.INDEX:
            rbits &= ~(T.EXTENT | T.INDEX)  # an index divided or reduced by a size is still an index
            if type(operator) is cst.FloorDivide:
                rbits &= ~T.TOKENS  # `i_chk // tl.cdiv(T, BT)` counts sequences, not tokens
        bits = (lbits | rbits) & ~(_WIDTHS | T.POINTER | T.BLOCK)
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
            return mag.product(self._factor_bits(left, left_node), self._factor_bits(right, right_node)), (
                left[2] | right[2])
        if type(operator) in (cst.Add, cst.Subtract):
            divisors = left[2] & right[2] if left[2] and right[2] else _NO_DIVISORS
            return mag.total(left[1], right[1]), divisors
        if type(operator) is cst.FloorDivide:
            symbol = self._symbol(right_node)
            if symbol is not None:
                return left[1], left[2] | {symbol}
            return mag.quotient(left[1], _integer(right_node)), left[2]
        if type(operator) is cst.Modulo:
            return min(left[1], right[1]), _NO_DIVISORS
        if type(operator) is cst.LeftShift:
            shift = _integer(right_node)
            return (min(left[1] + shift, mag.UNBOUNDED) if shift is not None else mag.UNBOUNDED), _NO_DIVISORS
        if type(operator) is cst.RightShift:
            shift = _integer(right_node)
            return (max(left[1] - shift, 0) if shift is not None else left[1]), left[2]
        if type(operator) is cst.BitAnd:
            return min(left[1], right[1]), _NO_DIVISORS
        if type(operator) in (cst.BitOr, cst.BitXor):
            return max(left[1], right[1]), _NO_DIVISORS
        if type(operator) is cst.Power:
            return mag.UNBOUNDED, _NO_DIVISORS
        return max(left[1], right[1]), _NO_DIVISORS

    def _factor_bits(self, value: Value, node) -> int:
        """What a factor adds to a product: a constant ``c`` scales by ``c``, so it adds ``ceil(log2(c))`` bits
        (``x * 16`` needs four more bits than ``x``); anything else adds its magnitude."""
        constant = _integer(node)
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
            if target in _INT64:
                return (carried | T.INT | T.WIDE, found[1], found[2])
            if target in _NARROW_INTS:
                return (carried | T.INT | T.NARROW, min(found[1], mag.INT32_BITS), found[2])
            if target.startswith(("tl.float", "tl.bfloat")):
                return (carried | T.FLOAT, 0, _NO_DIVISORS)
            return (found[0] | T.DYNAMIC | T.TENSOR, found[1], found[2])
        name = self.facts.qualname(call.func) or _builtin(call.func)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        arguments = [values[id(p)] for p in positional]
        if name == "tl.constexpr":
            inner = arguments[0] if arguments else _NOTHING
            return (inner[0] & ~_RUNTIME, inner[1], inner[2])
        if name == "tl.program_id":
            axis = _integer(positional[0]) if positional else 0
            tokens = T.TOKENS if axis in self._token_axes else 0
            return (T.DYNAMIC | T.TENSOR | T.INT | T.NARROW | T.INDEX | T.PROGRAM | tokens,
                    *self._program_id(positional))
        if name == "tl.num_programs":
            return (T.DYNAMIC | T.TENSOR | T.INT | T.NARROW | T.EXTENT, *self._program_id(positional))
        if name == "tl.load":
            table = _pointer_base(positional[0]) if positional else None
            size = mag.GRID_AXIS_BITS if table is not None and mag.names_index_table(table) else mag.LOADED_BITS
            # an index loaded from a tensor every launch passes as int64 is int64 already (dtypes, not spellings)
            width = T.WIDE if table is not None and table in self.kernel.params and pointer_dtype(
                self.facts, self.kernel, table) == "int64" else T.NARROW
            return (T.DYNAMIC | T.TENSOR | width | T.INDEX | T.LOADED | T.FLOAT | T.INT, size, _NO_DIVISORS)
        if name in ("tl.make_block_ptr", "tl.advance"):
            return (T.DYNAMIC | T.TENSOR | T.BLOCK, 0, _NO_DIVISORS)
        if name in _TRANSPARENT_CALLS and arguments:
            return arguments[0]
        if name == "tl.where" and len(arguments) == 3:
            chosen = join(arguments[1], arguments[2])
            bits = (chosen[0] & ~_WIDTHS) | _combined_width(arguments[1][0], arguments[2][0])
            return (bits | T.DYNAMIC | T.TENSOR | (arguments[0][0] & T.DYNAMIC), chosen[1], chosen[2])
        if name in _COMBINING_CALLS and arguments:
            return self._combining(name, positional, arguments)
        if name in ("tl.zeros", "tl.full"):
            dtype_node = argument(call, 1 if name == "tl.zeros" else 2, "dtype")
            dtype = (self.facts.qualname(dtype_node) if dtype_node is not None else None) or ""
            fill = argument(call, 1, "value") if name == "tl.full" else None
            size = values[id(fill)][1] if fill is not None and id(fill) in values else 0
            if dtype in _INT64:
                return (T.DYNAMIC | T.TENSOR | T.INT | T.WIDE, size, _NO_DIVISORS)
            return (T.DYNAMIC | T.TENSOR | T.NARROW | T.FLOAT | T.INT, size, _NO_DIVISORS)
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
            return (imported.returned[0] | T.DYNAMIC | T.TENSOR, imported.returned[1], _NO_DIVISORS)
        bits = T.DYNAMIC | T.TENSOR | T.NARROW | T.INT
        if name in _FLOAT_CALLS or any(a[0] & T.FLOAT for a in arguments[:1]):
            bits |= T.FLOAT
        size = max((a[1] for a in arguments), default=mag.EXTENT_BITS)
        if type(call.func) is cst.Attribute and id(call.func.value) in values and not name:
            receiver = values[id(call.func.value)]  # a method of a tensor: x.reshape(...), x.trans()
            return (receiver[0] | T.DYNAMIC | T.TENSOR, receiver[1], receiver[2])
        return (bits, size, _NO_DIVISORS)

    def _combining(self, name: str, positional: list, arguments: list[Value]) -> Value:
        union = 0
        for found in arguments:
            union |= found[0]
        width = _combined_width(*(a[0] for a in arguments)) or T.NARROW
        bits = (union & ~(_WIDTHS | T.POINTER | T.BLOCK)) | width
        if name == "tl.cdiv" and not union & T.TENSOR:
            bits &= ~T.DYNAMIC  # folded while compiling: the result is a constexpr
        else:
            bits |= T.TENSOR | (union & T.DYNAMIC)  # the builtin min and max are tl.minimum and tl.maximum
        if name == "tl.cdiv" and len(arguments) == 2:
            symbol = self._symbol(positional[1])
            top = arguments[0]
            if symbol is not None:
                return (bits, top[1], top[2] | {symbol})
            return (bits, mag.quotient(top[1], _integer(positional[1])), top[2])
        if name in ("min", "tl.minimum"):
            smallest = min(arguments, key=lambda a: a[1])
            return (bits, smallest[1], smallest[2])
        largest = max(arguments, key=lambda a: a[1])
        return (bits, largest[1], largest[2])

    def _loop_variable(self, iterable: cst.BaseExpression, state: dict) -> Value:
        if type(iterable) is cst.Call:
            name = self.facts.qualname(iterable.func) or _builtin(iterable.func)
            values = self._values
            bounds = [values.get(id(a.value), _UNKNOWN) for a in iterable.args if a.keyword is None][:2]
            size = max((b[1] for b in bounds), default=0)
            divisors = bounds[-1][2] if bounds else _NO_DIVISORS
            if name in _COMPILE_TIME_LOOP_CALLS:
                return (T.INT | T.NARROW, size, divisors)
            if name in _LOOP_CALLS:
                bits = 0
                for bound in bounds:
                    bits |= bound[0]
                width = _combined_width(*(b[0] for b in bounds)) or T.NARROW
                carried = bits & (T.PROGRAM | T.LOADED | T.TOKENS)  # bounded by its extents, not one itself
                return (T.DYNAMIC | T.TENSOR | T.INDEX | T.INT | width | carried, size, divisors)
        return (T.DYNAMIC | T.TENSOR | T.INDEX | T.NARROW | T.INT, mag.LOADED_BITS, _NO_DIVISORS)

    def _global(self, name: str) -> Value:
        """A name the kernel does not bind: a module constant, an imported name or a builtin."""
        constant = self.facts.module_constants.get(name)
        if constant is not None:
            return (T.INT | T.NARROW, mag.of_int(constant), _NO_DIVISORS)
        return _UNKNOWN

    # -- sources -----------------------------------------------------------------------------------------------
    def _parameter(self, name: str) -> Value:
        kernel = self.kernel
        if kernel.is_constexpr_param(name):
            default = kernel.defaults.get(name)
            if type(default) is cst.Float:
                return (T.FLOAT, 0, _NO_DIVISORS)
            known = self.constexpr_values.get(name)
            size = mag.of_int(max(known)) if known else mag.constexpr_bits(name)
            hosted = 0
            if not known:  # ROW_STRIDE=logits.stride(0): a constexpr factor leaves the product int32
                host = self._host_argument(name)
                if host is not None and host[2]:
                    size = host[0]
                    hosted = T.HOSTED if host[0] >= mag.FEATURE_BITS else 0
                elif not self._module_launches and _per_token_name(name, mag.name_bits(name)):
                    hosted = T.HOSTED  # no host code: a head dim or hidden size by its name
            return (T.INT | T.NARROW | hosted, size, _NO_DIVISORS)
        if name in self.pointer_params:
            return (T.DYNAMIC | T.TENSOR | T.POINTER, 0, _NO_DIVISORS)
        if name in self.constexpr_helper_params:
            return (T.INT | T.NARROW, mag.name_bits(name), _NO_DIVISORS)
        annotation = kernel.annotations.get(name)
        qualified = self.facts.qualname(annotation) if annotation is not None else None
        bits = T.DYNAMIC | T.TENSOR | T.EXTENT | T.INT
        size = mag.name_bits(name)
        tokens = mag.counts_tokens(name)
        host = self._host_argument(name)
        if host is not None and (host[0] < size or size == mag.EXTENT_BITS or host[2]):
            # the launch says more: `x.stride(-1)` is 1, `n_rows` rows, `logits.stride(0)` a vocabulary
            size, tokens = host[0], tokens or host[1]
        if host is not None and host[2] and host[0] >= mag.FEATURE_BITS or (
                not self._module_launches and _per_token_name(name, size)):
            # no host code: a per-token size by its name (K, V, D, hidden, a row stride) decides
            bits |= T.HOSTED
        if tokens:
            bits |= T.TOKENS
        elif mag.counts_sequences(name):
            bits |= T.SEQUENCE  # ``B * T`` is the token count of the launch
        if qualified in _INT64:
            bits |= T.WIDE
        elif type(annotation) is cst.Name and annotation.value == "float" or isinstance(
            kernel.defaults.get(name), cst.Float
        ):
            bits = (bits | T.FLOAT | T.NARROW) & ~T.INT
        else:
            bits |= T.NARROW
        return (bits, size, _NO_DIVISORS)

    @cached_property
    def _module_launches(self) -> bool:
        """The module launches some kernel: its host code can be read. A module of kernels only (launched from
        elsewhere) is judged by the magnitude model alone."""
        return bool(self.facts.launches)

    def _host_argument(self, name: str) -> tuple[int, bool, bool] | None:
        from .host_arguments import host_argument_bits

        return host_argument_bits(self.facts, self.kernel, name)

    @cached_property
    def constexpr_values(self) -> dict[str, list[int]]:
        """Integer values the module's launches and autotune configs give each constexpr parameter."""
        from .host_arguments import constexpr_values  # launch reasoning needs the module's host code

        return constexpr_values(self.facts, self.kernel)

    @cached_property
    def constexpr_helper_params(self) -> set[str]:
        """Parameters of a jit helper that every call in this module passes a constexpr (a literal, a constexpr
        parameter of the caller, an annotated constexpr local, a ``static_range`` variable, or the default)."""
        return self.facts.helper_constexpr_params(self.kernel)

    @cached_property
    def _program_bits(self) -> dict[int, Value]:
        from .host_arguments import program_id_magnitudes

        return program_id_magnitudes(self.facts, self.kernel, self.is_core_grid_kernel)

    @cached_property
    def _token_axes(self) -> set[int]:
        from .host_arguments import token_axes

        return token_axes(self.facts, self.kernel)

    def _program_id(self, positional: list) -> tuple[int, frozenset]:
        axis = _integer(positional[0]) if positional else 0
        found = self._program_bits.get(axis if axis is not None else -1)
        if found is None:
            bits = mag.CORE_PROGRAM_BITS if self.is_core_grid_kernel else mag.GRID_AXIS_BITS
            return bits, _NO_DIVISORS
        return found

    @cached_property
    def is_core_grid_kernel(self) -> bool:
        """Programs stride over the work (``for task in range(pid, n, step)``): one program per core."""
        for loop in self.loops:
            call = loop.iter
            if not (type(call) is cst.Call and (self.facts.qualname(call.func) or _builtin(call.func)) in
                    _LOOP_CALLS):
                continue
            args = [a.value for a in call.args if a.keyword is None]
            if len(args) == 3 and _mentions_program_id(self.facts, args[0]) and _integer(args[2]) != 1:
                return True
        return False

    def _imported_helper(self, func: cst.BaseExpression):
        """The summary of a jit helper imported from another linted module (``from .utils import pid64``)."""
        if type(func) is cst.Name and func.value not in self.assignments:
            return self.facts.imported_helpers.get(func.value)
        return None

    def _helper_returns(self, helper: Kernel) -> Value | None:
        analysis = KernelAnalysis.of(helper, self.facts, self.index)
        return analysis.returned

    @property
    def returned(self) -> Value | None:
        """What this kernel (used as a jit helper) returns: a tensor; None while it is being computed."""
        if self._running:
            return None
        if self._values is None:
            self._run()
        found = self._returned
        if found is None:
            return (T.DYNAMIC | T.TENSOR, 0, _NO_DIVISORS)
        return ((found[0] & _RETURNED) | T.DYNAMIC | T.TENSOR, found[1], _NO_DIVISORS)

    @property
    def returned_traits(self) -> Traits | None:
        found = self.returned
        return found[0] if found is not None else None

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
            if type(node) is not cst.Call or not node.args:
                continue
            name = self.facts.qualname(node.func) or _builtin(node.func)
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
                    base = _pointer_base(node.args[0].value)
                    if base in self.pointer_params:
                        found.add(base)
        for _, offsets in self.pointer_expressions:
            for part in self.offset_nodes(offsets):
                loaded = _loaded_pointer(facts, part)
                if loaded is not None:
                    found.add(loaded)
        return {name for name in found if name in self.pointer_params}

    # -- expression properties ---------------------------------------------------------------------------------
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
        return found & _WIDTHS == T.WIDE

    def may_be_int64(self, expr: cst.BaseExpression) -> bool:
        """Widened to 64 bits on at least one path."""
        return bool(self.traits(expr) & T.WIDE)

    def maybe_float(self, expr: cst.BaseExpression) -> bool:
        """Could hold floating-point data (float literals, loads not narrowed to an integer type)."""
        return bool(self.traits(expr) & T.FLOAT)

    def surely_float(self, expr: cst.BaseExpression) -> bool:
        """Floating point on every path (a float cast or literal, arithmetic that only floats reach)."""
        found = self.traits(expr)
        return bool(found & T.FLOAT) and not found & (T.INT | _WIDTHS | T.POINTER | T.BLOCK)

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
            if type(node) is cst.BinaryOperation:
                stack.extend((node.right, node.left))
            elif type(node) is cst.UnaryOperation:
                stack.append(node.expression)
            elif type(node) is cst.Subscript:
                stack.append(node.value)
            elif type(node) is cst.IfExp:
                stack.extend((node.orelse, node.body))
            elif type(node) is cst.Call and (self.facts.qualname(node.func) in _TRANSPARENT_CALLS) and node.args:
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
        return found


class _Done:
    """A node whose children have been evaluated (a marker on the evaluation stack)."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


_LOOP = object()  # marker in ``assignments``: the name is a loop variable


def argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    """The argument at ``position`` or passed as ``keyword``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


_argument = argument


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
        return _pointer_base(expr.args[0].value)
    return None


def _is_index_value(bits: Traits) -> bool:
    return bool(bits & T.INT) and bool(bits & T.INDEX) and not bits & (T.FLOAT | T.POINTER | T.BLOCK)


def _builtin(func: cst.BaseExpression) -> str:
    return func.value if type(func) is cst.Name else ""


def _integer(node) -> int | None:
    if type(node) is cst.Integer:
        return integer_value(node)
    return None


def _mentions_program_id(facts: ModuleFacts, expr: cst.BaseExpression) -> bool:
    if facts.is_call_to(expr, "tl.program_id"):
        return True
    return type(expr) is cst.Name and expr.value.lower() in ("pid", "core_id", "program_id", "worker_id")


def _is_sum(node) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) in (cst.Add, cst.Subtract)


def _combined_width(*parts: Traits) -> Traits:
    """Integer width of an arithmetic result: wide if any operand may be wide, narrow if all may be narrow."""
    sized = [p & _WIDTHS for p in parts if p & _WIDTHS]
    if not sized:
        return 0
    width = 0
    if any(s & T.WIDE for s in sized):
        width |= T.WIDE
    if all(s & T.NARROW for s in sized):
        width |= T.NARROW
    return width


def _branch(node: cst.CSTNode, child: cst.CSTNode) -> str:
    if child is node.test:
        return "test"
    return "body" if child is node.body else "orelse"


def _pointer_base(expr: cst.BaseExpression) -> str | None:
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


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    mapping = {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo, cst.DivideAssign: cst.Divide,
        cst.PowerAssign: cst.Power, cst.LeftShiftAssign: cst.LeftShift, cst.RightShiftAssign: cst.RightShift,
        cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    }
    return mapping.get(type(operator), cst.Add)()


def _creation(definition: Definition) -> int:
    return definition.created
