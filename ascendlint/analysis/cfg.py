"""The control-flow graph of one function body, the skeleton every forward data-flow pass runs on.

A *point* is one place where the program evaluates or binds something: a small statement, the test of an ``if`` or
``while``, the iterable of a ``for`` (evaluated once), the binding of a ``for`` target (every iteration), a ``with``
header. Loops get a *head* point where the entry and the back edges meet.

Points are numbered in creation order, which is source order with every loop head before its body: every edge that
is not a back edge goes from a lower number to a higher one, so the numbering is a reverse post-order and a solver
that always takes the lowest pending point visits each point once per change of its input.

The builder is iterative over ``elif`` chains and recursive only in the nesting depth of compound statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

ENTRY = "entry"
STATEMENT = "statement"  # a small statement
TEST = "test"  # the test of an ``if`` / ``while``
ITERABLE = "iterable"  # a ``for`` loop's iterable, evaluated once before the loop
HEAD = "head"  # where a loop's entry and back edges meet (binds nothing)
BIND = "bind"  # a ``for`` loop binding its target, once per iteration
WITH = "with"  # a ``with`` header: evaluates the items, binds the ``as`` names


@dataclass(eq=False)
class Point:
    index: int
    kind: str
    node: cst.CSTNode | None
    successors: list[int] = field(default_factory=list)  # indices into the graph's points: a loop's back edge
    # held as a reference would make every graph a reference cycle, and keep its function's tree alive until the
    # cyclic collector runs

    @property
    def is_loop_head(self) -> bool:
        return self.kind == HEAD

    def __repr__(self) -> str:
        return f"Point({self.index}, {self.kind}, {type(self.node).__name__})"


@dataclass
class _Loop:
    head: Point
    breaks: list[Point] = field(default_factory=list)


class Graph:
    """Points of one function body; ``point_of`` maps a statement (or compound header node) to its point."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.points: list[Point] = []
        self._by_node: dict[int, Point] = {}
        self._loops: list[_Loop] = []
        self.entry = self._new(ENTRY, None)
        self._suite(function.body, [self.entry])

    def point_of(self, node: cst.CSTNode, kind: str | None = None) -> Point | None:
        """The point of a small statement, an ``if``/``while`` test, a ``with`` header, or a ``for`` loop's
        iterable (``kind=BIND`` for the point that binds its target)."""
        if kind == BIND:
            return self._by_node.get(-id(node))
        return self._by_node.get(id(node))

    # -- building ----------------------------------------------------------------------------------------------
    def _new(self, kind: str, node: cst.CSTNode | None) -> Point:
        point = Point(len(self.points), kind, node)
        self.points.append(point)
        if node is not None and kind != HEAD:
            self._by_node[-id(node) if kind == BIND else id(node)] = point
        return point

    @staticmethod
    def _link(sources: list[Point], target: Point) -> None:
        for source in sources:
            source.successors.append(target.index)

    def _suite(self, suite: cst.BaseSuite, incoming: list[Point]) -> list[Point]:
        if type(suite) is cst.SimpleStatementSuite:
            return self._small_statements(suite.body, incoming)
        for statement in suite.body:
            incoming = self._statement(statement, incoming)
        return incoming

    def _small_statements(self, smalls, incoming: list[Point]) -> list[Point]:
        for small in smalls:
            point = self._new(STATEMENT, small)
            self._link(incoming, point)
            incoming = [point]
            if type(small) in (cst.Return, cst.Raise):
                incoming = []
            elif type(small) is cst.Break:
                if self._loops:
                    self._loops[-1].breaks.append(point)
                incoming = []
            elif type(small) is cst.Continue:
                if self._loops:
                    self._link([point], self._loops[-1].head)
                incoming = []
        return incoming

    def _statement(self, statement: cst.BaseStatement, incoming: list[Point]) -> list[Point]:
        if type(statement) is cst.SimpleStatementLine:
            return self._small_statements(statement.body, incoming)
        if type(statement) is cst.If:
            return self._if(statement, incoming)
        if type(statement) is cst.For:
            return self._for(statement, incoming)
        if type(statement) is cst.While:
            return self._while(statement, incoming)
        if type(statement) is cst.With:
            point = self._new(WITH, statement)
            self._link(incoming, point)
            return self._suite(statement.body, [point])
        if type(statement) is cst.Try:
            return self._try(statement, incoming)
        if type(statement) is cst.Match:
            exits: list[Point] = list(incoming)
            for case in statement.cases:
                exits += self._suite(case.body, incoming)
            return exits
        return incoming  # nested functions and classes have their own scope

    def _if(self, node: cst.If, incoming: list[Point]) -> list[Point]:
        exits: list[Point] = []
        while True:  # an elif chain nests in ``orelse``: walk it without recursing
            test = self._new(TEST, node)
            self._link(incoming, test)
            exits += self._suite(node.body, [test])
            orelse = node.orelse
            if type(orelse) is cst.If:
                node, incoming = orelse, [test]
                continue
            if orelse is None:
                exits.append(test)
            else:
                exits += self._suite(orelse.body, [test])
            return exits

    def _for(self, node: cst.For, incoming: list[Point]) -> list[Point]:
        iterable = self._new(ITERABLE, node)
        self._link(incoming, iterable)
        head = self._new(HEAD, node)
        self._link([iterable], head)
        bind = self._new(BIND, node)
        self._link([head], bind)
        return self._loop_body(node, head, [bind], head)

    def _while(self, node: cst.While, incoming: list[Point]) -> list[Point]:
        head = self._new(HEAD, node)
        self._link(incoming, head)
        test = self._new(TEST, node)
        self._link([head], test)
        return self._loop_body(node, head, [test], test)

    def _loop_body(self, node, head: Point, body_entry: list[Point], exit_from: Point) -> list[Point]:
        loop = _Loop(head)
        self._loops.append(loop)
        ends = self._suite(node.body, body_entry)
        self._loops.pop()
        self._link(ends, head)
        done = [exit_from]
        if node.orelse is not None:
            done = self._suite(node.orelse.body, done)
        return done + loop.breaks

    def _try(self, node: cst.Try, incoming: list[Point]) -> list[Point]:
        body = self._suite(node.body, incoming)
        handlers: list[Point] = []
        for handler in node.handlers:  # an exception may leave the body anywhere: before it or after it
            handlers += self._suite(handler.body, incoming + body)
        if node.orelse is not None:
            body = self._suite(node.orelse.body, body)
        ends = body + handlers
        if node.finalbody is not None:
            ends = self._suite(node.finalbody.body, ends or incoming)
        return ends
