"""Facts about Triton-distributed kernels that the ASC4xx rules share.

Built once per kernel, on the first request of any ASC4xx rule: which distributed calls the kernel makes and
where values come from: the program id, a kernel argument (a symmetric pointer), or a pointer mapped to a peer by
``dl.symm_at`` / ``remote_ptr``. Values are followed through the definitions that reach each read (the shared
kernel analysis), so a name reused in two branches keeps the two meanings apart. Loop iterables count as sources
of their loop variables: ``for pe in range(pid, n, step)`` makes ``pe`` depend on the program id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from .values import KernelAnalysis
from .context import FileContext
from .module_facts import Kernel, ModuleFacts
from .flow import Definition
from .walk import NodeIndex
from ..text.lazy_regex import lazy

WAIT = "dl.wait"
NOTIFY = "dl.notify"
# The libshmem_device (aclshmem) dialect of the same protocol: `signal_op(slot, value, SET/ADD, pe)` writes a
# signal, `signal_wait_until(slot, cmp, value)` waits for one, `putmem_signal(_nbi)` writes data and then a signal
# in one request. `SIGNAL_WRITES` / `SIGNAL_WAITS` are what every ASC4xx rule reads as "notify" and "wait".
SIGNAL_OP = "shmem.signal_op"
SIGNAL_WAIT_UNTIL = "shmem.signal_wait_until"
FUSED_PUTS = frozenset({"shmem.putmem_signal", "shmem.putmem_signal_nbi"})
SIGNAL_WRITES = frozenset({NOTIFY, SIGNAL_OP})
SIGNAL_WAITS = frozenset({WAIT, SIGNAL_WAIT_UNTIL})
QUIET = "shmem.quiet"
NONBLOCKING_PUTS = frozenset({"shmem.putmem_nbi", "shmem.putmem_signal_nbi"})
CONSUME_TOKEN = "dl.consume_token"
MAPPING_CALLS = frozenset({"dl.symm_at", "shmem.remote_ptr"})
PUT_CALLS = frozenset({"shmem.putmem", "shmem.putmem_nbi", "shmem.putmem_signal", "shmem.putmem_signal_nbi"})
GET_CALLS = frozenset({"shmem.getmem", "shmem.getmem_nbi"})
UDMA_CALLS = PUT_CALLS | GET_CALLS
BARRIERS = frozenset({"shmem.barrier_all", "shmem.barrier_all_vec"})
FENCE = "shmem.fence"
SYNCHRONOUS_PUT = "shmem.putmem"
PROGRAM_ID = "tl.program_id"
RANK_COUNTS = frozenset({"dl.num_ranks", "shmem.n_pes"})
# Calls that block until other programs (or ranks) have done something.
PROGRAM_WAITS = frozenset({WAIT, "shmem.signal_wait_until", "gpu.shmem.signal_wait_until"}) | BARRIERS
# Calls that synchronise per iteration: a transfer in such a loop is a pipeline step, not a per-tile copy.
PIPELINE_SYNC = PROGRAM_WAITS | {NOTIFY, "shmem.signal_op"}
_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.If)  # NodeIndex.subtree works
_RANGES = frozenset({"local.range", "tl.range", "tl.static_range"})
_INDEXING_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply)
_PASS_THROUGH_CALLS = frozenset({"tl.cast", CONSUME_TOKEN})

# Positions and keyword spellings of the pointer, size and pe arguments of the UDMA calls.
_UDMA_PE_POSITION = {"shmem.putmem_signal": 6, "shmem.putmem_signal_nbi": 6}
_UDMA_KEYWORDS = {
    "dest": ("dest", "dst", "dest_ptr"),
    "source": ("source", "src", "source_ptr"),
    "bytes": ("bytes", "nbytes", "size"),
    "pe": ("pe",),
}


def call_argument(call: cst.Call, position: int, *keywords: str) -> cst.BaseExpression | None:
    """The argument passed at ``position`` or under any of ``keywords``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


def udma_argument(call: cst.Call, qualname: str, role: str) -> cst.BaseExpression | None:
    """``dest``, ``source``, ``bytes`` or ``pe`` of a putmem/getmem-family call."""
    position = {"dest": 0, "source": 1, "bytes": 2, "pe": _UDMA_PE_POSITION.get(qualname, 3)}[role]
    return call_argument(call, position, *_UDMA_KEYWORDS[role])


def udma_remote_operand(call: cst.Call, qualname: str) -> cst.BaseExpression | None:
    """The operand that names the peer's memory: putmem's ``dest``, getmem's ``source``."""
    return udma_argument(call, qualname, "dest" if qualname in PUT_CALLS else "source")


def is_integer(expr: cst.BaseExpression | None, value: int) -> bool:
    return type(expr) is cst.Integer and expr.evaluated_value == value


# Where each signal call keeps its slot, value, operation and target: (position, keywords) per role.
_SIGNAL_ARGUMENTS = {
    NOTIFY: {"slot": (0, ("ptr",)), "value": (2, ("signal",)), "op": (3, ("sig_op",)), "pe": (1, ("rank",))},
    SIGNAL_OP: {"slot": (0, ("sig_addr",)), "value": (1, ("signal",)), "op": (2, ("sig_op",)), "pe": (3, ("pe",))},
    "shmem.putmem_signal": {"slot": (3, ("sig_addr",)), "value": (4, ("signal",)), "op": (5, ("sig_op",)),
                            "pe": (6, ("pe",))},
    WAIT: {"slot": (0, ("barrierPtrs",)), "value": (4, ("waitValue",)), "count": (1, ("numBarriers",))},
    SIGNAL_WAIT_UNTIL: {"slot": (0, ("sig_addr",)), "value": (2, ("cmp_val",)), "cmp": (1, ("cmp_", "cmp"))},
}
_SIGNAL_ARGUMENTS["shmem.putmem_signal_nbi"] = _SIGNAL_ARGUMENTS["shmem.putmem_signal"]


def signal_argument(call: cst.Call, qualname: str | None, role: str) -> cst.BaseExpression | None:
    """``slot``, ``value``, ``op``, ``pe`` (writes) or ``cmp``, ``count`` (waits) of a signal call of either
    dialect; None when the call has no such argument."""
    spec = _SIGNAL_ARGUMENTS.get(qualname or "", {}).get(role)
    return call_argument(call, spec[0], *spec[1]) if spec else None


def signal_operation(call: cst.Call, qualname: str | None) -> str | None:
    """"set" or "add" for a signal write (``sig_op="set"``, ``ACLSHMEM_SIGNAL_SET``, ``SIGNAL_ADD``...); None when
    the operation is not spelled so that it can be read. ``dl.notify`` without ``sig_op`` sets."""
    op = signal_argument(call, qualname, "op")
    if op is None:
        return "set" if qualname == NOTIFY else None
    if type(op) is cst.SimpleString:
        text = op.evaluated_value.lower()
        return text if text in ("set", "add") else None
    name = op.attr.value if type(op) is cst.Attribute else op.value if type(op) is cst.Name else None
    if name is not None:
        upper = name.upper()
        if upper.endswith("SET"):
            return "set"
        if upper.endswith("ADD"):
            return "add"
    return None


def signal_is_zero_set(call: cst.Call, qualname: str | None = NOTIFY) -> bool:
    """A credit return: ``dl.notify(slot, rank, 0)`` with the default ``sig_op="set"``, or
    ``signal_op(slot, 0, SIGNAL_SET, pe)``."""
    return is_integer(signal_argument(call, qualname, "value"), 0) and signal_operation(call, qualname) == "set"


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


def for_kernel(context: FileContext, kernel: Kernel) -> DistAnalysis:
    """The shared ``DistAnalysis`` of ``kernel`` in this file (built on first request)."""
    return context.memo(
        ("dist", id(kernel.node)),
        lambda: DistAnalysis(kernel, context.facts, context.index, context.analysis(kernel),
                             context.memo(("dist-gpu-backend",), lambda: targets_other_backend(context))),
    )


def distributed_kernels(context: FileContext) -> list[DistAnalysis]:
    """Analyses of the kernels that call Triton-distributed or libshmem_device functions (others are skipped)."""
    facts = context.facts
    if not imports_distributed(facts):
        return []
    found = [for_kernel(context, kernel) for kernel in facts.kernels.values()]
    context.memo(("dist-program-params",), lambda: _link_program_params(context, found))
    return [d for d in found if any(n.startswith(("dl.", "shmem.")) for n in d.calls)]


_PROGRAM_ID_NAME = lazy(r"^(pid|program_id|\w+_pid)$")


def _link_program_params(context: FileContext, analyses: list[DistAnalysis]) -> bool:
    """Mark the helper parameters that receive a program id from some call in this module.

    `helper(pid, ...)` with `pid = tl.program_id(0)` makes `pid` a program id inside `helper` too, so a helper
    looping `for task in range(pid, n, n_programs)` is as partitioned as the kernel that calls it. A helper that
    this module neither calls nor launches is assumed to take a program id in a parameter named `pid` (or `*_pid`).
    """
    by_name = {d.kernel.name: d for d in analyses}
    called = {launch.kernel.name for launch in context.facts.launches if launch.kernel is not None}
    for dist in analyses:
        called.update(name[len("local."):] for name in dist.calls if name.startswith("local."))
    for name, dist in by_name.items():
        if name not in called:
            dist.program_params.update(p for p in dist.kernel.params if _PROGRAM_ID_NAME.match(p))
    changed = True
    while changed:
        changed = False
        for caller in analyses:
            for name, calls in caller.calls.items():
                helper = by_name.get(name[len("local."):]) if name.startswith("local.") else None
                if helper is None or helper is caller:
                    continue
                for call in calls:
                    for param, value in _bound_arguments(helper.kernel, call):
                        if param not in helper.program_params and caller.depends_on_program_id(value):
                            helper.program_params.add(param)
                            changed = True
    _link_single_program_helpers(context, analyses, by_name)
    return True


def _link_single_program_helpers(context: FileContext, analyses: list, by_name: dict) -> None:
    """Mark the helpers that only ever run on one program: every call of them in this module sits under a guard
    that selects single programs (``if (sub_vec_id() == 0) & (pid == 0):``) or in a function that does.
    A launched kernel runs on one program when every launch of it does (``kernels_launched_on_one_program``)."""
    launched = {launch.kernel.name for launch in context.facts.launches if launch.kernel is not None}
    for name in kernels_launched_on_one_program(context.facts):
        if name in by_name:
            by_name[name].single_program = True
    sites: dict[str, list[tuple[DistAnalysis, cst.Call]]] = {}
    for caller in analyses:
        for name, calls in caller.calls.items():
            if name.startswith("local.") and name[len("local."):] in by_name:
                sites.setdefault(name[len("local."):], []).extend((caller, call) for call in calls)
    changed = True
    while changed:
        changed = False
        for name, calls in sites.items():
            helper = by_name[name]
            if helper.single_program or name in launched:
                continue
            if all(caller is not helper and (caller.single_program or any(
                    caller.selects_single_programs(g.test) for g in caller.guards(call))) for caller, call in calls):
                helper.single_program = True
                changed = True


def bound_arguments(kernel: Kernel, call: cst.Call) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of a call of the jit function ``kernel``, positional and keyword."""
    return _bound_arguments(kernel, call)


def _bound_arguments(kernel: Kernel, call: cst.Call) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(parameter, argument) pairs of a call of `kernel`, positional and keyword."""
    position = 0
    for arg in call.args:
        if arg.star:
            return
        if arg.keyword is not None:
            if arg.keyword.value in kernel.params:
                yield arg.keyword.value, arg.value
        elif position < len(kernel.params):
            yield kernel.params[position], arg.value
            position += 1


def imports_distributed(facts: ModuleFacts) -> bool:
    """The module imports Triton-distributed or libshmem_device under some name."""
    return any(full.startswith("triton_dist") or "libshmem_device" in full for full in facts.aliases.values())


def kernels_launched_on_one_program(facts: ModuleFacts) -> set[str]:
    """Kernels that this module launches, always on a grid of one program (`(1,)`, `[1]`, `1`, or a name the
    launching function refuses to hold anything else: `if n != 1: raise ...` before `kernel[(n, 1, 1)]`)."""
    grids: dict[str, list[bool]] = {}
    for launch in facts.launches:
        if launch.kernel is not None:
            grids.setdefault(launch.kernel.name, []).append(_one_program(facts, launch))
    return {name for name, ones in grids.items() if all(ones)}


def _one_program(facts: ModuleFacts, launch) -> bool:
    grid = launch.grid
    axes = [element.value for element in grid.elements] if type(grid) in (cst.Tuple, cst.List) else [grid]
    return all(is_integer(axis, 1) or _pinned_to_one(facts, launch.call, axis) for axis in axes)


def _pinned_to_one(facts: ModuleFacts, call: cst.Call, axis: cst.BaseExpression) -> bool:
    """``axis`` is a name the host function holding the launch raises on unless it is 1 (`if n != 1: raise`,
    earlier in the function's own body)."""
    if type(axis) is not cst.Name:
        return False
    function = next((a for a in facts.index.ancestors(call) if type(a) is cst.FunctionDef), None)
    if function is None or type(function.body) is not cst.IndentedBlock:
        return False
    for statement in function.body.body:
        if facts.index.order(statement) > facts.index.order(call):
            break
        if type(statement) is not cst.If or statement.orelse is not None:
            continue
        test = statement.test
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            continue
        if type(test.comparisons[0].operator) is not cst.NotEqual:
            continue
        sides = (test.left, test.comparisons[0].comparator)
        names = [side for side in sides if type(side) is cst.Name and side.value == axis.value]
        if len(names) != 1 or not any(is_integer(side, 1) for side in sides):
            continue
        body = statement.body.body if type(statement.body) is cst.IndentedBlock else [statement.body]
        if any(type(small) is cst.Raise for line in body if type(line) is cst.SimpleStatementLine
               for small in line.body):
            return True
    return False


# -- producer / consumer protocol facts shared by ASC402, ASC404, ASC409-ASC414 ------------------------------------

STORE = "tl.store"
LOAD = "tl.load"
RANK_IDS = frozenset({"dl.rank", "shmem.my_pe"})
# Kernel parameters whose names say they hold the calling rank (`rank`, `my_pe`, `local_rank`...).
# Either case: constexpr spellings (`LOCAL_RANK`, `WORLD_SIZE: tl.constexpr`) say the same.
_RANK_PARAM = lazy(r"^(rank|my_rank|my_pe|pe_id|rank_id|local_rank|cur_rank|this_rank)$", re.IGNORECASE)
_RANK_COUNT_PARAM = lazy(
    r"^(n_?ranks|num_ranks|world_size|world|rank_size|n_?pes|npes|num_pes|nranks)$", re.IGNORECASE)


def statement_of(dist: DistAnalysis, node: cst.CSTNode) -> cst.CSTNode:
    """The statement (simple line or compound statement) that holds ``node`` directly in a block."""
    child = node
    for ancestor in dist.index.ancestors(node):
        if type(ancestor) in (cst.IndentedBlock, cst.Module):
            return child
        child = ancestor
    return child


def credit_return_slot(dist: DistAnalysis, call: cst.Call) -> cst.BaseExpression | None:
    """The slot pointer of a credit return: ``dl.notify(slot, rank, 0)``, ``signal_op(slot, 0, SET, pe)`` or
    ``tl.store(slot, 0)``; else None."""
    name = dist.qualname_of(call)
    if name in SIGNAL_WRITES:
        return signal_argument(call, name, "slot") if signal_is_zero_set(call, name) else None
    if name == STORE and is_integer(call_argument(call, 1, "value"), 0):
        return call_argument(call, 0, "pointer")
    return None


def credit_returns_in(dist: DistAnalysis, node: cst.CSTNode) -> list[tuple[cst.Call, cst.BaseExpression]]:
    """(call, slot pointer) of every credit return below ``node``."""
    found = []
    for call in dist.calls_in(node, SIGNAL_WRITES | {STORE}):
        slot = credit_return_slot(dist, call)
        if slot is not None:
            found.append((call, slot))
    return found


def signal_writes_in(dist: DistAnalysis, node: cst.CSTNode) -> list[cst.Call]:
    """``dl.notify`` and ``signal_op`` calls below ``node`` (the fused ``putmem_signal`` is a data put)."""
    return list(dist.calls_in(node, SIGNAL_WRITES))


def wait_slot(call: cst.Call, qualname: str | None = WAIT) -> cst.BaseExpression | None:
    """The slot a wait of either dialect polls."""
    return signal_argument(call, qualname, "slot")


def waits_for_zero(call: cst.Call, qualname: str | None = WAIT) -> bool:
    """A producer's wait for a free slot: ``dl.wait(..., waitValue=0)``, ``signal_wait_until(slot, CMP_EQ, 0)``."""
    if not is_integer(signal_argument(call, qualname, "value"), 0):
        return False
    if qualname != SIGNAL_WAIT_UNTIL:
        return True
    cmp = signal_argument(call, qualname, "cmp")
    name = cmp.attr.value if type(cmp) is cst.Attribute else cmp.value if type(cmp) is cst.Name else None
    return is_integer(cmp, 0) or (name is not None and name.upper().endswith("EQ"))


def iteration_names(dist: DistAnalysis, loops: list) -> set[str]:
    """Names that change from one iteration to the next: `for` targets and names assigned in `while` bodies."""
    names: set[str] = set()
    for loop in loops:
        if type(loop) is cst.For:
            names.update(n.value for n in (loop.target, *dist.below(loop.target)) if type(n) is cst.Name)
        else:
            for node in dist.below(loop.body):
                if type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign):
                    targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
                    names.update(t.value for t in targets if type(t) is cst.Name)
    return names


def loop_counters(dist: DistAnalysis, loop: cst.CSTNode) -> set[str]:
    """Names a loop's body steps with an augmented assignment (``msg += 1``): counters that advance with it."""
    return {node.target.value for node in dist.below(loop.body)
            if type(node) is cst.AugAssign and type(node.target) is cst.Name}


def advancing_names(dist: DistAnalysis, loop: cst.CSTNode) -> set[str]:
    """What changes from one iteration of ``loop`` to the next: its iteration names and its counters."""
    return iteration_names(dist, [loop]) | loop_counters(dist, loop)


def ring_loop(dist: DistAnalysis, node: cst.CSTNode, slot: cst.BaseExpression) -> cst.CSTNode | None:
    """The innermost loop around ``node`` that a ring index of ``slot`` advances with (``i % buffer_num``, or a
    counter stepped in the loop, ``msg % buffer_num`` with ``msg += 1``).

    A modulo by the rank count picks a peer, not a buffer, and does not count. None: ``slot`` is no ring slot.
    """
    rings = [index for index, size in dist.modulo_operands(slot) if not dist.derives_from_call(size, RANK_COUNTS)]
    if not rings:
        return None
    for loop in dist.enclosing_loops(node):
        advancing = advancing_names(dist, loop)
        if any(dist.depends_on(index, advancing) for index in rings):
            return loop
    return None


def is_rank_identity(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """``expr`` is the calling rank: ``dl.rank()``, ``my_pe()``, a name bound only to those, or a kernel
    parameter named like ``rank``/``my_pe``."""
    if type(expr) is cst.Call:
        return dist.qualname_of(expr) in RANK_IDS
    if type(expr) is cst.Name:
        values = dist.assigned_values(expr)
        if values is None:
            return bool(_RANK_PARAM.match(expr.value)) and expr.value in dist.kernel.params
        return bool(values) and all(is_rank_identity(dist, value) for value in values)
    return False


def counts_ranks(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """``expr`` is (derived from) the number of ranks: ``dl.num_ranks()``, ``n_pes()`` or a parameter named so."""
    if dist.derives_from_call(expr, RANK_COUNTS):
        return True
    return any(
        d.kind == "param" and _RANK_COUNT_PARAM.match(d.name)
        for d in dist.definitions_reaching(expr)
    ) or (type(expr) is cst.Name and bool(_RANK_COUNT_PARAM.match(expr.value)))


def depends_on_rank(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """Derived from the calling rank (``dl.rank()``, ``my_pe()`` or a rank-named kernel parameter)."""
    if dist.derives_from_call(expr, RANK_IDS):
        return True
    return any(d.kind == "param" and _RANK_PARAM.match(d.name) for d in dist.definitions_reaching(expr)) or (
        type(expr) is cst.Name and expr.value in dist.kernel.params and bool(_RANK_PARAM.match(expr.value)))


def varies_per_program(dist: DistAnalysis, expr: cst.BaseExpression) -> bool:
    """Different programs or ranks compute different values: derived from the program id, the rank, or a loop
    whose iterable is partitioned by program id."""
    if dist.depends_on_program_id(expr) or depends_on_rank(dist, expr):
        return True
    for definition in dist.definitions_reaching(expr):
        if definition.kind == "loop" and definition.value is not None and dist.depends_on_program_id(definition.value):
            return True
    return False


def symmetric_params(dist: DistAnalysis) -> set[str]:
    """Kernel parameters used as symmetric memory: mapped by ``symm_at``/``remote_ptr`` or moved by UDMA."""
    found: set[str] = set()
    for call in dist.calls_to(*MAPPING_CALLS, *UDMA_CALLS):
        name = dist.qualname_of(call)
        operand = call.args[0].value if name in MAPPING_CALLS and call.args else None
        if name in UDMA_CALLS:
            operand = udma_remote_operand(call, name)
        root = dist.pointer_root(operand) if operand is not None else None
        if root is not None:
            found.add(root)
    return found


def same_code(dist: DistAnalysis, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """The two expressions are spelled the same (whitespace aside)."""
    code = dist.facts.module.code_for_node
    return "".join(code(a).split()) == "".join(code(b).split())


def consumed_pointers(dist: DistAnalysis, scope: cst.CSTNode, slot: cst.BaseExpression) -> list[cst.Call]:
    """``dl.consume_token(value, token)`` calls in ``scope`` whose token comes from a wait (not for 0) on
    ``slot`` (the same expression): the reads these calls order are what the slot guards."""
    waits = [
        w for w in dist.calls_in(scope, {WAIT})
        if not waits_for_zero(w) and wait_slot(w) is not None and same_code(dist, wait_slot(w), slot)
    ]
    if not waits:
        return []
    wait_ids = {id(w) for w in waits}
    found = []
    for call in dist.calls_in(scope, {CONSUME_TOKEN}):
        token = call_argument(call, 1, "token")
        if token is None:
            continue
        sources = [token, *(d.value for d in dist.definitions_reaching(token) if d.value is not None)]
        if any(id(n) in wait_ids for source in sources for n in (source, *dist.below(source))):
            found.append(call)
    return found


def reads_through(dist: DistAnalysis, scope: cst.CSTNode, consumed: list[cst.Call]) -> list[cst.Call]:
    """Loads in ``scope`` whose pointer comes from one of the ``consumed`` calls: ``tl.load``, or a call of a
    helper (any function outside ``tl``/``dl``/``libshmem_device``) that is handed such a pointer."""
    consumed_ids = {id(c) for c in consumed}
    targets: set[str] = set()
    for call in consumed:
        statement = statement_of(dist, call)
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign:
                    targets.update(t.target.value for t in small.targets if type(t.target) is cst.Name)
    helpers = {n for n in dist.calls if not n.startswith(("tl.", "dl.", "shmem.", "local.range"))}
    found = []
    for call in dist.calls_in(scope, {LOAD} | helpers):
        if dist.qualname_of(call) == LOAD:
            pointers = [call_argument(call, 0, "pointer")]
        else:
            pointers = [a.value for a in call.args]
        for pointer in pointers:
            if pointer is None:
                continue
            nodes = (pointer, *dist.below(pointer))
            if any(id(n) in consumed_ids for n in nodes) or (targets and dist.names_feeding(pointer) & targets):
                found.append(call)
                break
    return found


def untokened_reads(dist: DistAnalysis, scope: cst.CSTNode, slot: cst.BaseExpression) -> list[cst.Call]:
    """Loads that a ``signal_wait_until`` on ``slot`` guards in ``scope``: the shmem dialect has no token, so a
    guarded read is a ``tl.load`` after the wait whose address shares a variable of ``scope`` with the slot (the
    ring index ``buf`` of ``sig + buf * 16`` and ``inbox + buf * BLOCK``), off another buffer than the slot's."""
    waits = [
        w for w in dist.calls_in(scope, {SIGNAL_WAIT_UNTIL})
        if not waits_for_zero(w, SIGNAL_WAIT_UNTIL) and wait_slot(w, SIGNAL_WAIT_UNTIL) is not None
        and same_code(dist, wait_slot(w, SIGNAL_WAIT_UNTIL), slot)
    ]
    if not waits:
        return []
    first = min(dist.index.order(w) for w in waits)
    root = dist.pointer_root(slot)
    params = set(dist.kernel.params)
    shared = dist.names_feeding(slot) - params - {root}
    found = []
    for call in dist.calls_in(scope, {LOAD}):
        pointer = call_argument(call, 0, "pointer")
        if pointer is None or dist.index.order(call) < first or dist.pointer_root(pointer) in (root, None):
            continue
        if dist.names_feeding(pointer) & shared:
            found.append(call)
    return found


_OTHER_BACKEND = lazy(
    r"(^|[._/\\])(cuda|nvidia|nvshmem|hip|amd|rocshmem|pyrocshmem|maca|metax|mxshmem)([._/\\]|$)")


def targets_other_backend(context: FileContext) -> bool:
    """The module is written for a GPU backend of Triton-distributed (CUDA/NVSHMEM, HIP/ROCSHMEM, MACA), by its
    imports or its path: rules about Ascend hardware facts do not apply to it."""
    if any(_OTHER_BACKEND.search(full) for full in context.facts.aliases.values()):
        return True
    return bool(_OTHER_BACKEND.search(context.filename.replace("\\", "/")))


_SPIN_ATOMICS = frozenset({"tl.atomic_cas", "tl.atomic_xchg", "tl.atomic_add"})


def waiting_kernels(context: FileContext) -> set[str]:
    """Kernels that wait on other programs themselves or through the `triton.jit` helpers they call."""
    kernels = context.facts.kernels
    if not kernels or not imports_distributed(context.facts) and not context.index.of_type(cst.While):
        return set()
    analyses = {name: for_kernel(context, kernel) for name, kernel in kernels.items()}
    waiting = {name for name, dist in analyses.items() if dist.has_call(*PROGRAM_WAITS) or _spins_on_memory(dist)}
    changed = True
    while changed:
        changed = False
        for name, dist in analyses.items():
            if name not in waiting and any(f"local.{helper}" in dist.calls for helper in waiting):
                waiting.add(name)
                changed = True
    return waiting


def _spins_on_memory(dist: DistAnalysis) -> bool:
    """A `while` loop that polls memory other programs write (volatile load or atomic in its test or body)."""
    for loop in dist.nodes:
        if type(loop) is not cst.While:
            continue
        for node in dist.below(loop):
            if type(node) is not cst.Call:
                continue
            name = dist.qualname_of(node)
            if name in _SPIN_ATOMICS:
                return True
            volatile = call_argument(node, 99, "volatile")
            if name == "tl.load" and type(volatile) is cst.Name and volatile.value == "True":
                return True
    return False


def read_after_credit_return(dist: DistAnalysis, reset: cst.Call, slot: cst.BaseExpression) -> cst.CSTNode | None:
    """The first read of the buffer a slot guards that comes after the slot's credit return ``reset`` (ASC410):
    the producer may overwrite the buffer before it is read. None when every read comes first."""
    position = dist.index.order(reset)
    for scope in dist.enclosing_loops(reset) or [dist.kernel.node]:
        consumed = consumed_pointers(dist, scope, slot)
        reads = reads_through(dist, scope, consumed) if consumed else []
        reads += untokened_reads(dist, scope, slot)
        if not reads:
            continue
        later = sorted((r for r in reads if dist.index.order(r) > position
                        and not dist.values.compile_time_exclusive(reset, r)), key=dist.index.order)
        return later[0] if later else None
    return None


def credits_returned_early(dist: DistAnalysis) -> set[int]:
    """Ids of the credit returns that come before a read of the buffer they free (``read_after_credit_return``)."""
    if not dist.has_call(CONSUME_TOKEN, SIGNAL_WAIT_UNTIL):
        return set()
    return {id(reset) for reset, slot in credit_returns_in(dist, dist.kernel.node)
            if read_after_credit_return(dist, reset, slot) is not None}
