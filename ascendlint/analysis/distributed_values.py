"""Distributed calls, value sources and pointer provenance inside one kernel (``DistAnalysis``).

Which distributed calls the kernel makes and where values come from: the program id, a kernel argument (a
symmetric pointer), or a pointer mapped to a peer by ``dl.symm_at`` / ``remote_ptr``. Values are followed through
the definitions that reach each read (the shared kernel analysis), so a name reused in two branches keeps the two
meanings apart. Loop iterables count as sources of their loop variables: ``for pe in range(pid, n, step)`` makes
``pe`` depend on the program id. Built by ``distributed.for_kernel``; read by the ASC4xx rules.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from .values import KernelAnalysis
from .module_facts import Kernel, ModuleFacts
from .flow import Definition
from .walk import NodeIndex
from .distributed_calls import CONSUME_TOKEN, MAPPING_CALLS, PROGRAM_ID, SIGNAL_OP, SIGNAL_WAIT_UNTIL


_LOOPS = (cst.For, cst.While)


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.If)  # NodeIndex.subtree works


_RANGES = frozenset({"local.range", "tl.range", "tl.static_range"})


_INDEXING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply)


_PASS_THROUGH_CALLS = frozenset({"tl.cast", CONSUME_TOKEN})


class DistAnalysis:
    """Distributed calls, value sources and pointer provenance of one kernel."""

    def __init__(self, kernel: Kernel, facts: ModuleFacts, index: NodeIndex, values: KernelAnalysis,
                 gpu_backend: bool = False) -> None:
        self.kernel = kernel
        self.facts = facts
        self.index = index
        self.values = values
        self.nodes = index.subtree(kernel.node)
        self.calls: dict[str, list[cst.Call]] = {}
        # Parameters through which callers pass a program id (filled for the module by `distributed_kernels`).
        self.program_params: set[str] = set()
        # A helper whose every call in this module runs on one program only (`if pid == 0:` around the call in the
        # caller, or a caller that itself runs on one program): filled by `distributed_kernels`.
        self.single_program = False
        self.qualnames: dict[int, str] = {}
        self._below: dict[int, list[cst.CSTNode]] = {}
        self._reads: dict[int, list[cst.Name]] = {}
        for node in self.nodes:
            if type(node) is cst.Call:
                name = facts.qualname(node.func) or _local_call_name(node)
                if gpu_backend and name in _ASCEND_SIGNAL_CALLS:
                    name = "gpu." + name  # NVSHMEM's / ROCSHMEM's own signal API: not the aclshmem semantics
                if name:
                    self.qualnames[id(node)] = name
                    self.calls.setdefault(name, []).append(node)

    # -- calls ---------------------------------------------------------------------------------------------------
    def qualname_of(self, call: cst.Call) -> str | None:
        return self.qualnames.get(id(call))

    def calls_to(self, *qualnames: str) -> list[cst.Call]:
        found = [call for name in qualnames for call in self.calls.get(name, ())]
        return sorted(found, key=self.index.order) if len(qualnames) > 1 else found

    def is_range(self, expr: cst.BaseExpression) -> bool:
        """``range(...)``, ``tl.range(...)`` or ``tl.static_range(...)``."""
        return type(expr) is cst.Call and self.qualnames.get(id(expr)) in _RANGES

    def has_call(self, *qualnames: str) -> bool:
        return any(name in self.calls for name in qualnames)

    def below(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The nodes under ``node`` in source order (computed once per node)."""
        found = self._below.get(id(node))
        if found is None:
            if isinstance(node, _SCOPES):
                found = self.index.subtree(node)[1:]
            else:
                found = list(self.index.descendants(node))
            self._below[id(node)] = found
        return found

    def calls_in(self, node: cst.CSTNode, qualnames: frozenset | set) -> Iterator[cst.Call]:
        """Calls below ``node`` (a loop, ``if`` or statement) whose qualified name is one of ``qualnames``."""
        qualname = self.qualnames.get
        for child in self.below(node):
            if type(child) is cst.Call and qualname(id(child)) in qualnames:
                yield child

    def reads_in(self, expr: cst.BaseExpression) -> list[cst.Name]:
        """Name nodes of ``expr`` that read a variable (not attribute names or keywords)."""
        found = self._reads.get(id(expr))
        if found is None:
            found = [n for n in (expr, *self.below(expr)) if type(n) is cst.Name and _is_read(self.index, n)]
            self._reads[id(expr)] = found
        return found

    # -- value sources ---------------------------------------------------------------------------------------------
    def definitions_reaching(self, expr: cst.BaseExpression, through_loops: bool = True) -> list[Definition]:
        """Every definition whose value can flow into ``expr``, transitively (loop iterables included unless
        ``through_loops`` is False: then a loop variable is where the search stops)."""
        pending = list(self.reads_in(expr))
        seen: set[int] = set()
        found: list[Definition] = []
        while pending:
            read = pending.pop()
            for definition in self.values.definitions(read):
                if id(definition) in seen or (definition.kind == "loop" and not through_loops):
                    continue
                seen.add(id(definition))
                found.append(definition)
                if definition.value is not None:
                    pending.extend(self.reads_in(definition.value))
                if definition.kind == "augmented":
                    pending.append(definition.statement.target)
        return found

    def names_feeding(self, expr: cst.BaseExpression) -> set[str]:
        """The names read in ``expr`` and the names of every definition that flows into it."""
        names = {read.value for read in self.reads_in(expr)}
        names.update(d.name for d in self.definitions_reaching(expr))
        return names

    def depends_on(self, expr: cst.BaseExpression, names: set[str]) -> bool:
        return bool(self.names_feeding(expr) & names)

    def _expressions_reaching(
        self, expr: cst.BaseExpression, through_loops: bool = True
    ) -> Iterator[cst.BaseExpression]:
        yield expr
        for definition in self.definitions_reaching(expr, through_loops):
            if definition.value is not None:
                yield definition.value

    def derives_from_call(
        self, expr: cst.BaseExpression, qualnames: frozenset | set, through_loops: bool = True
    ) -> bool:
        for source in self._expressions_reaching(expr, through_loops):
            for node in (source, *self.below(source)):
                if type(node) is cst.Call and self.qualnames.get(id(node)) in qualnames:
                    return True
        return False

    def modulo_operands(self, expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
        """(x, n) of every ``x % n`` that indexes ``expr`` directly, e.g. a ring index ``i % buffer_num``.

        Only sums, differences and products lead from the modulo to ``expr`` (through names and casts): a
        remainder that is divided again (``(i % G) // W``) or passed to a helper is a tile coordinate of a
        swizzle, not a ring index.
        """
        found: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        pending, seen = [expr], set()
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is cst.BinaryOperation:
                if type(node.operator) is cst.Modulo:
                    found.append((node.left, node.right))
                elif isinstance(node.operator, _INDEXING_OPERATORS):
                    pending.extend((node.left, node.right))
            elif type(node) is cst.UnaryOperation:
                pending.append(node.expression)
            elif type(node) is cst.Subscript:
                pending.append(node.value)
            elif type(node) is cst.Call:
                pending.extend(self._cast_operands(node))
            elif type(node) is cst.Name:
                pending.extend(self.assigned_values(node) or ())
        return found

    def _cast_operands(self, call: cst.Call) -> list[cst.BaseExpression]:
        """What a cast, a token consumption or a symmetric mapping passes through: ``x`` of ``tl.cast(x, ..)``,
        ``x.to(..)``, ``dl.consume_token(x, t)``, ``dl.symm_at(x, pe)``."""
        name = self.qualnames.get(id(call))
        if name in _PASS_THROUGH_CALLS or name in MAPPING_CALLS:
            return [call.args[0].value] if call.args else []
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "to":
            return [func.value]
        return []

    def depends_on_program_id(self, expr: cst.BaseExpression) -> bool:
        """Derived from `tl.program_id`, here or in a caller that passes it in as an argument."""
        if self.derives_from_call(expr, {PROGRAM_ID}):
            return True
        if not self.program_params:
            return False
        return any(d.kind == "param" and d.name in self.program_params for d in self.definitions_reaching(expr))

    def assigned_values(self, read: cst.Name) -> list[cst.BaseExpression] | None:
        """The values a name can hold at ``read``: None for an untouched kernel argument.

        ``p += off`` contributes ``p + off``; a loop variable contributes nothing (it is no pointer).
        """
        definitions = self.values.definitions(read)
        if definitions and all(d.kind == "param" for d in definitions):
            return None
        values: list[cst.BaseExpression] = []
        for definition in definitions:
            if definition.kind == "assign" and definition.value is not None:
                values.append(definition.value)
            elif definition.kind == "augmented":
                statement = definition.statement
                values.append(cst.BinaryOperation(left=statement.target, operator=cst.Add(), right=statement.value))
        return values

    def partitioned_by_program(self, node: cst.CSTNode, key: cst.BaseExpression, loop_feeds_key: bool = False) -> bool:
        """Different programs run ``node`` for different ``key`` values (a pe, a slot).

        True when ``key`` depends on the program id, when an enclosing loop's iterable does
        (``for pe in range(pid, n, n_programs)``), or when an enclosing ``if`` on the program id selects single
        programs (``pid == 0``) or tests a variable of ``key`` (``if pe < pid``). ``if pid < n_producers`` alone only
        splits roles: every program of the role still runs ``node``. With ``loop_feeds_key``, a loop split by
        program id counts only when ``key`` comes from its variable: a tile loop split by program id around a
        loop over every pe still has every program drive every pe.
        """
        if self.single_program or self.depends_on_program_id(key):
            return True
        key_names = self.names_feeding(key) - set(self.kernel.params)  # the key's own variables
        for loop in self.enclosing_loops(node):
            if type(loop) is cst.For and self.depends_on_program_id(loop.iter):
                targets = {n.value for n in (loop.target, *self.below(loop.target)) if type(n) is cst.Name}
                if not loop_feeds_key or targets & key_names:
                    return True
        for guard in self.guards(node):
            if self.selects_single_programs(guard.test):
                return True
            if self.names_feeding(guard.test) & key_names and self.depends_on_program_id(guard.test):
                return True
        return False

    def selects_single_programs(self, test: cst.BaseExpression) -> bool:
        """``test`` holds for single programs only: ``pid == k``, also as one side of ``and`` / ``&``
        (``(sub_vec_id() == 0) & (pid == 0)``), or on both sides of ``or`` / ``|``."""
        while type(test) is cst.UnaryOperation and type(test.operator) is not cst.Not:
            test = test.expression
        if type(test) is cst.Comparison:
            return any(type(t.operator) is cst.Equal for t in test.comparisons) and self.depends_on_program_id(test)
        if type(test) is cst.BooleanOperation or (
            type(test) is cst.BinaryOperation and type(test.operator) in (cst.BitAnd, cst.BitOr)
        ):
            left, right = self.selects_single_programs(test.left), self.selects_single_programs(test.right)
            both = type(test.operator) in (cst.Or, cst.BitOr)
            return (left and right) if both else (left or right)
        return False

    # -- pointer provenance --------------------------------------------------------------------------------------
    def is_mapped_pointer(self, expr: cst.BaseExpression) -> bool:
        """The pointer is a peer's mapped address (from ``dl.symm_at`` / ``remote_ptr``), not a symmetric one."""
        return self.mapping_call(expr) is not None

    def mapping_call(self, expr: cst.BaseExpression, _seen: frozenset = frozenset()) -> cst.Call | None:
        """The ``dl.symm_at`` / ``remote_ptr`` call a pointer was mapped by, following offsets and definitions."""
        if type(expr) is cst.Call:
            name = self.qualnames.get(id(expr))
            if name in MAPPING_CALLS:
                return expr
            if name == CONSUME_TOKEN and expr.args:
                return self.mapping_call(expr.args[0].value, _seen)
            return None
        if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
            return self.mapping_call(expr.left, _seen) or self.mapping_call(expr.right, _seen)
        if type(expr) is cst.Subscript:
            return self.mapping_call(expr.value, _seen)
        if type(expr) is cst.Name and id(expr) not in _seen:
            seen = _seen | {id(expr)}
            for value in self.assigned_values(expr) or ():
                found = self.mapping_call(value, seen)
                if found is not None:
                    return found
        return None

    def symmetric_form(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """``expr`` with every mapping undone (``dl.symm_at(p, pe)`` -> ``p``), or None when it cannot be done.

        A name is replaced by its value only when exactly one assignment reaches it.
        """
        rewritten = _Unmapper(self).rewrite(expr, frozenset())
        return None if rewritten is None else _bare(rewritten)

    def pointer_root(self, expr: cst.BaseExpression, _seen: frozenset = frozenset()) -> str | None:
        """The kernel argument a pointer is offset from (through definitions, mappings and token consumption)."""
        if type(expr) is cst.Call:
            name = self.qualnames.get(id(expr))
            if (name in MAPPING_CALLS or name == CONSUME_TOKEN) and expr.args:
                return self.pointer_root(expr.args[0].value, _seen)
            return None
        if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
            return self.pointer_root(expr.left, _seen) or self.pointer_root(expr.right, _seen)
        if type(expr) is cst.Subscript:
            return self.pointer_root(expr.value, _seen)
        if type(expr) is cst.Name and id(expr) not in _seen:
            values = self.assigned_values(expr)
            if values is None:
                return expr.value if expr.value in self.kernel.params else None
            for value in values:
                root = self.pointer_root(value, _seen | {id(expr)})
                if root is not None:
                    return root
        return None

    # -- loops and branches --------------------------------------------------------------------------------------
    def enclosing_loops(self, node: cst.CSTNode) -> list:
        """``for``/``while`` loops whose body holds ``node``, innermost first (an iterable does not count)."""
        loops, child = [], node
        for ancestor in self.index.ancestors(node):
            if ancestor is self.kernel.node:
                break
            if isinstance(ancestor, _LOOPS) and child is ancestor.body:
                loops.append(ancestor)
            child = ancestor
        return loops

    def guards(self, node: cst.CSTNode) -> list[cst.If]:
        """``if`` statements whose body or ``else`` holds ``node``, innermost first."""
        found, child = [], node
        for ancestor in self.index.ancestors(node):
            if ancestor is self.kernel.node:
                break
            if type(ancestor) is cst.If and child is not ancestor.test:
                found.append(ancestor)
            child = ancestor
        return found


class _Unmapper:
    """Rewrites a mapped pointer expression into the symmetric pointer it was mapped from."""

    def __init__(self, dist: DistAnalysis) -> None:
        self.dist = dist

    def rewrite(self, expr: cst.BaseExpression, seen: frozenset) -> cst.BaseExpression | None:
        dist = self.dist
        if not dist.is_mapped_pointer(expr):
            return expr
        if type(expr) is cst.Call:
            if dist.qualname_of(expr) in MAPPING_CALLS:
                return _parenthesised(expr.args[0].value) if expr.args else None
            inner = self.rewrite(expr.args[0].value, seen)  # consume_token(mapped, token)
            if inner is None:
                return None
            return expr.with_changes(args=[expr.args[0].with_changes(value=_bare(inner)), *expr.args[1:]])
        if type(expr) is cst.BinaryOperation:
            left, right = self.rewrite(expr.left, seen), self.rewrite(expr.right, seen)
            if left is None or right is None:
                return None
            return expr.with_changes(left=left, right=right)
        if type(expr) is cst.Subscript:
            value = self.rewrite(expr.value, seen)
            return None if value is None else expr.with_changes(value=value)
        if type(expr) is cst.Name:
            values = dist.assigned_values(expr) or []
            if len(values) != 1 or id(expr) in seen or type(values[0]) is not cst.Call:
                return None  # several reaching values or an in-place update: left to the user
            value = self.rewrite(values[0], seen | {id(expr)})
            return None if value is None else _parenthesised(value)
        return None


def _parenthesised(expr: cst.BaseExpression) -> cst.BaseExpression:
    if type(expr) in (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


def _bare(expr: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(expr, "lpar", None):
        return expr.with_changes(lpar=[], rpar=[])
    return expr


def _local_call_name(call: cst.Call) -> str | None:
    """A call of a function by plain name (``helper(...)``), recorded so helpers can be looked up."""
    return f"local.{call.func.value}" if type(call.func) is cst.Name else None


def _is_read(index: NodeIndex, name: cst.Name) -> bool:
    parent = index.parent(name)
    if type(parent) is cst.Attribute and parent.attr is name:
        return False
    return not (type(parent) is cst.Arg and parent.keyword is name)


# The aclshmem signal calls that the ASC4xx rules read as signal writes and waits. In a module written for a GPU
# backend the same names are NVSHMEM's or ROCSHMEM's, whose ordering rules differ: there they are left unread.
_ASCEND_SIGNAL_CALLS = frozenset({SIGNAL_OP, SIGNAL_WAIT_UNTIL})
