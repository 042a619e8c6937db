"""Reads and definitions inside a kernel: which bindings a read can see, which reads come later, and which two nodes
can never both run.

Reaching definitions (``flow.ReachingDefinitions``) are solved on the kernel's control-flow graph only when a rule
asks. Two nodes in different arms of one ``if`` are exclusive; in different arms of a compile-time ``if`` (a
constexpr test) only one arm exists in any compiled kernel. A mixin of ``values.KernelAnalysis``, serving the rules
that reason about reuse and ordering (ASC301, ASC306, the distributed rules).
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from .cfg import ITERABLE, Graph, Point
from .flow import Definition, Mark, ReachingDefinitions, binding_key, solve


def _branch(node: cst.CSTNode, child: cst.CSTNode) -> str:
    if child is node.test:
        return "test"
    return "body" if child is node.body else "orelse"


def _creation(definition: Definition) -> int:
    return definition.created


class KernelReads:
    """Reads, definitions and exclusive branches of one kernel (a part of ``KernelAnalysis``)."""

    @cached_property
    def graph(self) -> Graph:
        return Graph(self.kernel.node)

    @cached_property
    def _reaching(self) -> ReachingDefinitions:
        return ReachingDefinitions(self.graph, self._params, self._bindings)

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
        return self._dividing_if(first, second) is not None

    def compile_time_exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """True when the two nodes sit in different arms of one ``if`` (or conditional expression) whose test the
        compiler folds (a constexpr test, arithmetic on constexprs): only one arm exists in any compiled kernel, so
        neither node runs after the other, not even on a later iteration of a loop around the ``if``."""
        branch = self._dividing_if(first, second)
        return branch is not None and self.is_compile_time(branch.test)

    def _dividing_if(self, first: cst.CSTNode, second: cst.CSTNode) -> cst.If | cst.IfExp | None:
        """The innermost ``if`` (or conditional expression) around both nodes, when they sit in its two arms."""
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
                return ancestor if side != other and "test" not in (side, other) else None
            child = ancestor
        return None

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
