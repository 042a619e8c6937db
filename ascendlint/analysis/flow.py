"""Forward data-flow over a function's control-flow graph (``cfg.py``): one solver, several analyses.

A state maps names to lattice elements; a path that binds nothing passes its state on unchanged (the same object),
a merge joins states name by name. The solver keeps one pending set ordered by point number (a reverse post-order)
and re-runs a point only when its input state grew, so every point runs once plus once per change of its input:
the cost is linear in the size of the function times the (small) height of the lattice, whatever the nesting of
loops and branches. A widening operator at loop heads keeps lattices with long chains (magnitudes) finite.

Two clients live here: *reaching definitions* (which bindings of a name can reach a read) and *marks* (is the value
read here read again later). The value analysis in ``values.py`` is the third.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from .cfg import BIND, Graph, Point

State = dict
steps_taken = 0  # transfer-function calls made by every solve so far: the analysis' unit of work, for tests
Transfer = Callable[[Point, State], State]
Join = Callable[[object, object], object]
Widen = Callable[[object, object], object]


_CREATED = itertools.count()


@dataclass(eq=False)
class Definition:
    """One binding of ``name``. ``value`` is the assigned expression, the right operand of an augmented
    assignment, or the iterable of a loop; ``statement`` is the binding statement (None for parameters).

    Definitions hash by identity, so a set of them iterates in memory order; ``created`` (the order in which the
    analysis made them, which follows the source) is what every list of definitions is sorted by, so that
    results never depend on where objects happen to live."""

    name: str
    kind: str  # "param" | "assign" | "augmented" | "loop"
    statement: cst.CSTNode | None = None
    value: cst.BaseExpression | None = None
    operator: cst.BaseAugOp | None = None
    created: int = field(default_factory=lambda: next(_CREATED), init=False, repr=False)

    def __repr__(self) -> str:
        return f"Definition({self.name!r}, {self.kind!r})"


@dataclass(eq=False)
class Mark:
    """A read whose value is followed forward."""

    read: cst.Name


def solve(graph: Graph, entry: State, transfer: Transfer, join: Join, widen: Widen | None = None) -> list:
    """The state entering every point (None for a point no path reaches from the entry: dead code after a
    ``return``, ``break`` or ``continue`` is left to the callers' fallbacks).

    ``transfer(point, state)`` returns the state after the point without mutating its argument; ``join`` and
    ``widen`` combine two lattice elements of one name (``widen(old, new)`` is applied at loop heads once a head
    has been entered more than twice).
    """
    global steps_taken
    points = graph.points
    before: list = [None] * len(points)
    entered = [0] * len(points)
    before[0] = entry
    pending = [0]
    queued = {0}
    while pending:
        index = heapq.heappop(pending)
        queued.discard(index)
        point = points[index]
        steps_taken += 1
        after = transfer(point, before[index])
        for target in point.successors:
            old = before[target]
            if old is None:
                new = after
            elif old is after:
                continue
            else:
                new = _join_states(old, after, join)
                if widen is not None and entered[target] > 2 and points[target].is_loop_head:
                    new = _join_states(old, new, widen)
                if new is old:  # the join added nothing
                    continue
            before[target] = new
            entered[target] += 1
            if target not in queued:
                queued.add(target)
                heapq.heappush(pending, target)
    return before


def _join_states(old: State, new: State, join: Join) -> State:
    """``old`` itself when joining ``new`` into it changes no name (most joins, once a loop has settled), so that
    the solver tells "nothing new" by identity; otherwise a new state. Only changed names are compared."""
    if new.items() <= old.items():  # every name already bound to an equal value: one loop in C, no change
        return old
    merged = None
    for name, value in new.items():
        present = old.get(name)
        if present is value:
            continue
        if present is None:
            combined = value
        elif present == value:
            continue
        else:
            combined = join(present, value)
            if combined is present or combined == present:
                continue
        if merged is None:
            merged = dict(old)
        merged[name] = combined
    return old if merged is None else merged


def union(first: frozenset, second: frozenset) -> frozenset:
    return first | second


# -- bindings ------------------------------------------------------------------------------------------------------
def bound_names(statement: cst.CSTNode) -> list[tuple[cst.Name, cst.BaseExpression | None]]:
    """(target name, the expression bound to it when known) for an assignment statement, pairing tuple elements."""
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    if type(statement) is cst.Assign:
        for target in statement.targets:
            _pair(target.target, statement.value, pairs)
    elif type(statement) is cst.AnnAssign and statement.value is not None:
        _pair(statement.target, statement.value, pairs)
    elif type(statement) is cst.AugAssign and type(statement.target) is cst.Name:
        pairs.append((statement.target, statement.value))
    elif type(statement) is cst.Del:
        _pair(statement.target, None, pairs)
    return pairs


def loop_targets(loop: cst.For) -> list[cst.Name]:
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    _pair(loop.target, None, pairs)
    return [name for name, _ in pairs]


def with_targets(statement: cst.With) -> list[tuple[cst.Name, cst.BaseExpression]]:
    pairs: list[tuple[cst.Name, cst.BaseExpression | None]] = []
    for item in statement.items:
        if item.asname is not None:
            _pair(item.asname.name, item.item, pairs)
    return pairs


def _pair(target, value, pairs) -> None:
    stack = [(target, value)]
    while stack:
        target, value = stack.pop()
        if type(target) is cst.Name:
            pairs.append((target, value))
        elif type(target) in (cst.Tuple, cst.List):
            values = value.elements if type(value) in (cst.Tuple, cst.List) else None
            for i, element in reversed(list(enumerate(target.elements))):
                sub = values[i].value if values is not None and i < len(values) else value
                stack.append((element.value, sub))
        elif type(target) is cst.StarredElement:
            stack.append((target.value, None))


# -- reaching definitions --------------------------------------------------------------------------------------
class ReachingDefinitions:
    """Which definitions of each name can reach each point."""

    def __init__(self, graph: Graph, entry: dict[str, Definition], bindings: dict[int, list[tuple[str, Definition]]]):
        self.graph = graph
        self._bindings = bindings

        def transfer(point: Point, state: State) -> State:
            found = bindings.get(_binding_key(point))
            if not found:
                return state
            state = dict(state)
            for name, definition in found:
                state[name] = frozenset((definition,))
            return state

        self.before = solve(graph, {name: frozenset((d,)) for name, d in entry.items()}, transfer, union)


def _binding_key(point: Point) -> int | None:
    """Bindings are recorded per statement; a ``for`` loop binds at its BIND point, not at its iterable."""
    if point.node is None:
        return None
    if type(point.node) is cst.For:
        return id(point.node) if point.kind == BIND else None
    if type(point.node) in (cst.If, cst.While):
        return None
    return id(point.node)


binding_key = _binding_key
