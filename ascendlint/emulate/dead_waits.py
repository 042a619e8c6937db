"""Which ``dl.wait`` calls the compiler would delete (``drop_unconsumed_waits``).

``dl.wait`` only produces a token; nothing depends on the wait unless that token flows into
something with an effect, which is what ``dl.consume_token(value, token)`` is for. The compiler's
dead-code elimination removes a wait whose token has no effectful use, so the kernel runs on without
waiting. This module finds such waits by a small liveness analysis of the function's source, the way
DCE sees it: a value is live when it reaches, through assignments, an argument of a call with an
effect (a store, an atomic, a signal or transfer call, a call of another function), a ``return``, or
the condition or iterable of an ``if``/``while``/``for``. Calls of pure ``tl``/``dl`` functions
(``tl.load``, ``tl.cast``, ``dl.consume_token``, arithmetic) pass liveness on to their arguments only
when their own result is live. The emulator looks a running wait up by its position in the source.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types

# Calls into `triton.language` with an effect of their own; every other `tl.*` function is pure.
_TL_EFFECTS = frozenset({"store", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or",
                         "atomic_xchg", "atomic_xor", "debug_barrier", "device_print", "device_assert",
                         "static_print", "static_assert", "print", "compile_hint", "sync_block_all",
                         "sync_block_set", "sync_block_wait"})
# Functions of the Triton-distributed language without an effect (pure value computations).
_DIST_PURE = frozenset({"consume_token", "rank", "num_ranks", "symm_at", "my_pe", "n_pes", "remote_ptr"})
_BUILTINS_PURE = frozenset({"range", "min", "max", "int", "float", "bool", "len", "abs", "isinstance", "getattr"})

_cache: dict = {}


_decisions: dict = {}


def wait_is_dead(frame: types.FrameType) -> bool:
    """Whether the ``dl.wait`` call the frame is executing has a token no effectful code uses."""
    key = (id(frame.f_code), frame.f_lasti)
    decision = _decisions.get(key)
    if decision is None:
        analysis = _analysis_for(frame.f_code)
        decision = analysis is not None and analysis.dead_at(frame.f_lineno, _call_position(frame))
        _decisions[key] = decision
    return decision


class _FunctionLiveness:
    def __init__(self, function: ast.FunctionDef, namespace: dict) -> None:
        self.namespace = namespace
        self.parents: dict[int, ast.AST] = {}
        for node in ast.walk(function):
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        self.live_nodes = self._live_expressions(function)
        self.calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]

    def dead_at(self, line: int, position: tuple | None) -> bool:
        candidates = [c for c in self.calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
        if position is not None:
            exact = [c for c in candidates if (c.lineno, c.col_offset) == position]
            candidates = exact or candidates
        waits = [c for c in candidates if _attribute_name(c.func) == "wait"]
        if not waits:
            return False
        return all(id(c) not in self.live_nodes for c in waits)

    # -- liveness ----------------------------------------------------------------------------------------
    def _live_expressions(self, function: ast.FunctionDef) -> set[int]:
        """ids of expression nodes whose value reaches an effect, following the definitions that reach each read."""
        flow = _ReachingDefinitions()
        flow.block(function.body, {})
        roots: list[ast.AST] = []
        for node in ast.walk(function):
            if isinstance(node, ast.Return) and node.value is not None:
                roots.append(node.value)
            elif isinstance(node, (ast.If, ast.While)):
                roots.append(node.test)
            elif isinstance(node, ast.For):
                roots.append(node.iter)
            elif isinstance(node, ast.Call) and self._has_effect(node):
                roots.extend(node.args)
                roots.extend(k.value for k in node.keywords)
                roots.append(node.func)
        live: set[int] = set()
        live_definitions: set[int] = set()
        pending = list(roots)
        while pending:
            expr = pending.pop()
            if id(expr) in live:
                continue
            live.add(id(expr))
            if isinstance(expr, ast.Name):
                for definition in flow.reaching.get(id(expr), ()):
                    if id(definition) not in live_definitions:
                        live_definitions.add(id(definition))
                        pending.extend(definition.sources)
                continue
            pending.extend(ast.iter_child_nodes(expr))
        return live

    def _has_effect(self, call: ast.Call) -> bool:
        owner, name = _split_callee(call.func)
        if owner is None:
            if name in _BUILTINS_PURE:
                return False
            target = self.namespace.get(name)
            module = getattr(target, "__module__", "") or ""
            if module.startswith("triton.language"):
                return name in _TL_EFFECTS
            if _is_dist_function(target):
                return name not in _DIST_PURE and name != "wait"
            return True  # a helper, or anything unknown
        root = self.namespace.get(owner) if owner else None
        if not isinstance(root, types.ModuleType):
            # a method of a value (`x.to(...)`, `acc.reshape(...)`) is pure; another global object is unknown
            return root is not None
        module_name = root.__name__
        if module_name.startswith("triton.language"):
            return name in _TL_EFFECTS
        if module_name.startswith("triton_dist"):
            return name not in _DIST_PURE and name != "wait"
        return True


class _Definition:
    """One binding of a name: the expressions its value comes from (the assigned value; for ``x += v`` also
    the earlier bindings of ``x``, as the reads of ``x`` there)."""

    __slots__ = ("sources",)

    def __init__(self, sources: list) -> None:
        self.sources = sources


class _ReachingDefinitions:
    """A forward pass over a function body: which bindings of a name reach each read of it."""

    def __init__(self) -> None:
        self.reaching: dict[int, frozenset] = {}

    def block(self, statements: list, state: dict) -> dict:
        for statement in statements:
            state = self.statement(statement, state)
        return state

    def reads(self, expr: ast.AST | None, state: dict) -> None:
        if expr is None:
            return
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reaching[id(node)] = state.get(node.id, frozenset())

    def bind(self, target: ast.AST, sources: list, state: dict) -> dict:
        state = dict(state)
        for name in _target_names(target):
            state[name] = frozenset({_Definition(sources)})
        return state

    def statement(self, node: ast.stmt, state: dict) -> dict:
        if isinstance(node, ast.Assign):
            self.reads(node.value, state)
            for target in node.targets:
                state = self.bind(target, [node.value], state)
            return state
        if isinstance(node, ast.AnnAssign):
            self.reads(node.value, state)
            return self.bind(node.target, [node.value], state) if node.value is not None else state
        if isinstance(node, ast.AugAssign):
            self.reads(node.value, state)
            target = ast.Name(id=node.target.id, ctx=ast.Load()) if isinstance(node.target, ast.Name) else None
            if target is not None:
                self.reaching[id(target)] = state.get(target.id, frozenset())
            return self.bind(node.target, [node.value] + ([target] if target is not None else []), state)
        if isinstance(node, ast.If):
            self.reads(node.test, state)
            return _merge(self.block(node.body, state), self.block(node.orelse, state))
        if isinstance(node, (ast.For, ast.While)):
            head = node.iter if isinstance(node, ast.For) else node.test
            self.reads(head, state)
            entry = self.bind(node.target, [node.iter], state) if isinstance(node, ast.For) else state
            end = entry
            for _ in range(2):  # twice: what the body binds reaches the next iteration's reads
                end = self.block(node.body, _merge(entry, end))
            return self.block(node.orelse, _merge(state, end))
        if isinstance(node, (ast.With, ast.Try)):
            for item in getattr(node, "items", ()):
                self.reads(item.context_expr, state)
            return self.block(node.body, state)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return state
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.reads(child, state)
        return state


def _merge(a: dict, b: dict) -> dict:
    merged = dict(a)
    for name, definitions in b.items():
        merged[name] = merged.get(name, frozenset()) | definitions
    return merged


def _is_dist_function(target) -> bool:
    module = getattr(target, "__module__", "") or ""
    return module.startswith("triton_dist") or "ascendlint.emulate.stand_ins" in module


def _split_callee(func: ast.AST) -> tuple[str | None, str | None]:
    """(owner name, attribute) of ``owner.attr(...)`` / ``a.b.attr(...)``, or (None, name) of ``name(...)``."""
    if isinstance(func, ast.Name):
        return None, func.id
    if isinstance(func, ast.Attribute):
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name):
            return base.id, func.attr
        return "", func.attr  # a method of a computed value, e.g. `x.to(...)`: pure
    return "", None


def _attribute_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _analysis_for(code: types.CodeType) -> _FunctionLiveness | None:
    key = id(code)
    if key not in _cache:
        _cache[key] = (code, _build(code))  # keep the code alive so its id is not reused
    return _cache[key][1]


def _build(code: types.CodeType) -> _FunctionLiveness | None:
    original = _original_function(code)
    if original is None:
        return None
    try:
        lines, _ = inspect.getsourcelines(original)
        first_line = original.__code__.co_firstlineno
    except (OSError, TypeError):
        return None
    def_index = max(i for i, line in enumerate(lines) if line.strip().startswith("def ")) if any(
        line.strip().startswith("def ") for line in lines) else 0
    source = textwrap.dedent("".join(lines[def_index:]))
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    ast.increment_lineno(tree, first_line + def_index - 1)
    function = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    return None if function is None else _FunctionLiveness(function, original.__globals__)


def _original_function(code: types.CodeType):
    """The Python function a rewritten (interpreted) kernel or helper was made from."""
    from .environment import import_triton

    _, _, interpreter = import_triton()
    for original, rewritten in interpreter.InterpretedFunction.rewritten_fn.items():
        if getattr(rewritten, "__code__", None) is code:
            return original
    return None


def _call_position(frame: types.FrameType) -> tuple | None:
    """(line, column) where the call being executed starts (Python 3.11+), else None."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None:
        return None
    for index, position in enumerate(positions()):
        if index == frame.f_lasti // 2:
            line, _end_line, column, _end_column = position
            return None if line is None or column is None else (line, column)
    return None
