"""Reaching definitions over the statements of one kernel (the flow part of the shared kernel analysis).

A *definition* binds a name: a parameter on entry, an assignment (plain, annotated, augmented) or a loop target.
The solver records, for every statement (a small statement, or the header of an ``if``/``for``/``while``), which
definitions of each name can reach it:

- straight code: a definition replaces the earlier ones of its name;
- ``if``/``else``: each branch starts from the state before the ``if``; the states are merged after it, so a name
  may come from either branch, and two branches never see each other's definitions;
- loops: the body is re-run until the state at its top stops changing, so a value assigned late in the body reaches
  the top of the next iteration (loop-carried); the state after a loop merges "never ran" with "ran";
- ``return``, ``break`` and ``continue`` end a path (``break`` joins the loop's exit, ``continue`` its top).

The same solver carries *marks* instead of definitions to answer "is the value read here read again later":
a mark is placed after the statement holding a read and travels forward until its name is reassigned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import libcst as cst

State = dict[str, frozenset]
_MAX_PASSES = 12  # the state lattice is finite; loops settle in two or three passes in practice


@dataclass(eq=False)
class Definition:
    """One binding of ``name``. ``value`` is the assigned expression, the right operand of an augmented
    assignment, or the iterable of a loop; ``statement`` is the binding statement (None for parameters)."""

    name: str
    kind: str  # "param" | "assign" | "augmented" | "loop"
    statement: cst.CSTNode | None = None
    value: cst.BaseExpression | None = None
    operator: cst.BaseAugOp | None = None

    def __repr__(self) -> str:
        return f"Definition({self.name!r}, {self.kind!r})"


@dataclass(eq=False)
class Mark:
    """A read whose value is followed forward."""

    read: cst.Name


def bound_names(statement: cst.CSTNode) -> list[tuple[cst.Name, cst.BaseExpression | None]]:
    """(target name, the expression bound to it when known) for an assignment statement, pairing tuple elements."""
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    if isinstance(statement, cst.Assign):
        for target in statement.targets:
            _pair(target.target, statement.value, pairs)
    elif isinstance(statement, cst.AnnAssign) and statement.value is not None:
        _pair(statement.target, statement.value, pairs)
    elif isinstance(statement, cst.AugAssign) and isinstance(statement.target, cst.Name):
        pairs.append((statement.target, statement.value))
    elif isinstance(statement, cst.Del):
        _pair(statement.target, None, pairs)
    return pairs


def loop_targets(loop: cst.For) -> list[cst.Name]:
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    _pair(loop.target, None, pairs)
    return [name for name, _ in pairs]


def _pair(target, value, pairs) -> None:
    if isinstance(target, cst.Name):
        pairs.append((target, value))
    elif isinstance(target, (cst.Tuple, cst.List)):
        values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
        for i, element in enumerate(target.elements):
            sub = values[i].value if values is not None and i < len(values) else value
            _pair(element.value, sub, pairs)
    elif isinstance(target, cst.StarredElement):
        _pair(target.value, None, pairs)


def merge(*states: State | None) -> State | None:
    """Union of the states of several paths (None is a path that ended)."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    merged = dict(live[0])
    for state in live[1:]:
        for name, items in state.items():
            present = merged.get(name)
            merged[name] = items if present is None else present | items
    return merged


@dataclass
class _LoopFrame:
    breaks: list[State] = field(default_factory=list)
    continues: list[State] = field(default_factory=list)


class FlowSolver:
    """Runs a forward may-analysis over a function body; ``before[id(statement)]`` is the state entering it.

    ``transfer(statement, state)`` returns the state after a small statement or a compound header (it must not
    mutate its argument); ``bind_loop(loop, state)`` the state after a ``for`` binds its target.
    """

    def __init__(
        self,
        transfer: Callable[[cst.CSTNode, State], State],
        bind_loop: Callable[[cst.For, State], State],
    ) -> None:
        self.transfer = transfer
        self.bind_loop = bind_loop
        self.before: dict[int, State] = {}
        self._loops: list[_LoopFrame] = []

    def run(self, function: cst.FunctionDef, entry: State) -> dict[int, State]:
        self._suite(function.body, entry)
        return self.before

    def _suite(self, suite: cst.BaseSuite, state: State | None) -> State | None:
        if isinstance(suite, cst.SimpleStatementSuite):
            return self._small_statements(suite.body, state)
        return self._statements(suite.body, state)

    def _statements(self, statements: Iterable[cst.BaseStatement], state: State | None) -> State | None:
        for statement in statements:
            if state is None:
                return None
            state = self._statement(statement, state)
        return state

    def _small_statements(self, smalls, state: State | None) -> State | None:
        for small in smalls:
            if state is None:
                return None
            self.before[id(small)] = state
            if isinstance(small, cst.Return):
                return None
            if isinstance(small, (cst.Break, cst.Continue)):
                if self._loops:
                    frame = self._loops[-1]
                    (frame.breaks if isinstance(small, cst.Break) else frame.continues).append(state)
                return None
            state = self.transfer(small, state)
        return state

    def _statement(self, statement: cst.BaseStatement, state: State) -> State | None:
        if isinstance(statement, cst.SimpleStatementLine):
            return self._small_statements(statement.body, state)
        if isinstance(statement, cst.If):
            return self._if(statement, state)
        if isinstance(statement, cst.For):
            return self._for(statement, state)
        if isinstance(statement, cst.While):
            return self._while(statement, state)
        if isinstance(statement, cst.With):
            self.before[id(statement)] = state
            return self._suite(statement.body, self.transfer(statement, state))
        if isinstance(statement, cst.Try):
            body = self._suite(statement.body, state)
            handlers = [self._suite(h.body, merge(state, body)) for h in statement.handlers]
            if statement.orelse is not None:
                body = self._suite(statement.orelse.body, body)
            end = merge(body, *handlers)
            if statement.finalbody is not None:
                end = self._suite(statement.finalbody.body, end if end is not None else state)
            return end
        return state  # nested functions and classes have their own scope

    def _if(self, node: cst.If, state: State) -> State | None:
        self.before[id(node)] = state
        state = self.transfer(node, state)
        body = self._suite(node.body, state)
        if node.orelse is None:
            other = state
        elif isinstance(node.orelse, cst.If):
            other = self._if(node.orelse, state)
        else:
            other = self._suite(node.orelse.body, state)
        return merge(body, other)

    def _for(self, node: cst.For, state: State) -> State | None:
        self.before[id(node)] = state
        entry = self.transfer(node, state)
        head = entry
        for _ in range(_MAX_PASSES):
            frame = _LoopFrame()
            self._loops.append(frame)
            end = self._suite(node.body, self.bind_loop(node, head))
            self._loops.pop()
            new_head = merge(entry, end, *frame.continues)
            if new_head == head:
                break
            head = new_head
        return self._loop_exit(node, head, frame)

    def _while(self, node: cst.While, state: State) -> State | None:
        head = state
        for _ in range(_MAX_PASSES):
            self.before[id(node)] = head
            tested = self.transfer(node, head)
            frame = _LoopFrame()
            self._loops.append(frame)
            end = self._suite(node.body, tested)
            self._loops.pop()
            new_head = merge(state, end, *frame.continues)
            if new_head == head:
                break
            head = new_head
        return self._loop_exit(node, self.transfer(node, head), frame)

    def _loop_exit(self, node, head: State, frame: _LoopFrame) -> State | None:
        done = head
        if node.orelse is not None:
            done = self._suite(node.orelse.body, head)
        return merge(done, *frame.breaks)
