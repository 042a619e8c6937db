"""Which ``tl.make_block_ptr`` calls a kernel value comes from, shared by the block-pointer rules.

Follows the reaching definitions of the shared kernel analysis through ``tl.advance``, through jit helpers that
return block pointers (also as one element of a returned tuple) and into a jit helper's parameter from the
calling kernels.
"""

from __future__ import annotations

import libcst as cst

from .values import KernelAnalysis, argument
from .module_facts import Kernel

_DEPTH = 8


class BlockPointerOrigins:
    """Which ``tl.make_block_ptr`` calls a kernel value comes from: directly, through the definitions that reach
    a name, ``tl.advance`` and jit helpers that return block pointers (also as one element of a returned tuple)."""

    def __init__(self, analysis: KernelAnalysis, context) -> None:
        self.analysis = analysis
        self.facts = analysis.facts
        self.context = context
        self._params: dict[str, list[cst.Call]] = {}

    def of(self, expr: cst.BaseExpression | None) -> list[cst.Call]:
        """The block pointers ``expr`` is made from; empty unless it is a block pointer on every path."""
        return self._must(expr, 0, frozenset()) or []

    def _must(self, expr, depth: int, seen: frozenset) -> list[cst.Call] | None:
        """Origins, ``[]`` when some path gives something else, None for a definition reached through itself."""
        if expr is None or depth > _DEPTH:
            return []
        if type(expr) is cst.Call:
            name = self.facts.qualname(expr.func)
            if name == "tl.make_block_ptr":
                return [expr]
            if name == "tl.advance":
                return self._must(argument(expr, 0, "base"), depth + 1, seen)
            return self._returned_by(expr, None, depth)
        if type(expr) is not cst.Name:
            return []
        sources: list[list[cst.Call] | None] = []
        for definition in self.analysis.definitions(expr):
            if id(definition) in seen:
                sources.append(None)  # p = tl.advance(p, ...): the loop-carried value is what p was before
                continue
            if definition.kind == "param":
                if expr.value not in self._params:
                    self._params[expr.value] = []  # a helper reached again through its own callers sees nothing
                    self._params[expr.value] = self._passed_to(expr.value, depth)
                sources.append(self._params[expr.value])
                continue
            if definition.kind != "assign" or definition.value is None:
                return []  # a loop variable or an augmented assignment
            position = _unpacked_position(definition.statement, expr.value, definition.value)
            if position is not None:
                sources.append(self._returned_by(definition.value, position, depth))
            else:
                sources.append(self._must(definition.value, depth + 1, seen | {id(definition)}))
        return _all_paths(sources)

    def _passed_to(self, param: str, depth: int) -> list[cst.Call]:
        """Block pointers every call site in this module passes for a jit helper's parameter (none for a kernel
        that is launched, whose arguments come from the host)."""
        helper = self.analysis.kernel
        if helper.name not in self.facts.helpers or param not in helper.params:
            return []
        position = helper.params.index(param)
        sources: list[list[cst.Call] | None] = []
        for caller, node in _jit_calls_by_name(self.facts, self.context.index).get(helper.name, ()):
            if caller is helper:
                continue
            passed = argument(node, position, param)
            if passed is None:
                return []
            sources.append(block_pointer_origins(self.context, caller)._must(passed, depth + 1, frozenset()))
        return _all_paths(sources) or []

    def _returned_by(self, call: cst.Call, position: int | None, depth: int) -> list[cst.Call]:
        """Block pointers a jit helper returns on every path (at ``position`` of a returned tuple when given)."""
        helper = self._helper(call)
        if helper is None:
            return []
        origins = block_pointer_origins(self.context, helper)
        sources: list[list[cst.Call] | None] = []
        for node in origins.analysis.nodes:
            if type(node) is not cst.Return or node.value is None:
                continue
            value = node.value
            if position is not None:
                if type(value) is not cst.Tuple or position >= len(value.elements):
                    return []
                value = value.elements[position].value
            sources.append(origins._must(value, depth + 1, frozenset()))
        return _all_paths(sources) or []

    def _helper(self, call: cst.Call) -> Kernel | None:
        if type(call.func) is cst.Name:
            return self.facts.kernels.get(call.func.value)
        return None


def _all_paths(sources: list) -> list[cst.Call] | None:
    """Join per-assignment answers: every non-cyclic source must be a block pointer."""
    found: list[cst.Call] = []
    if any(source == [] for source in sources):
        return []
    for source in sources:
        found += source or []
    return found if found else (None if sources else [])


def _unpacked_position(statement, name: str, value) -> int | None:
    """``i`` when ``statement`` is ``a, b = helper(...)`` and ``name`` is its i-th target."""
    if type(statement) is not cst.Assign or type(value) is not cst.Call:
        return None
    for target in statement.targets:
        if type(target.target) in (cst.Tuple, cst.List):
            for position, element in enumerate(target.target.elements):
                if type(element.value) is cst.Name and element.value.value == name:
                    return position
    return None


def block_rank(call: cst.Call) -> int | None:
    """Rank of a ``tl.make_block_ptr``: the length of its block_shape (or shape/order) tuple."""
    for position, keyword in ((4, "block_shape"), (1, "shape"), (5, "order")):
        value = argument(call, position, keyword)
        if type(value) in (cst.Tuple, cst.List):
            return len(value.elements)
    return None


def block_pointer_origins(context, kernel: Kernel) -> BlockPointerOrigins:
    """The resolver of ``kernel``, built once per file and shared by every rule that asks."""
    return context.memo(("block-pointers", id(kernel.node)), lambda: BlockPointerOrigins(context.analysis(kernel), context))


def _jit_calls_by_name(facts, index) -> dict[str, list[tuple[Kernel, cst.Call]]]:
    """Calls ``name(...)`` inside every jit function of the module, by the called name: (caller, call) in
    source order. Found once per module; asking per helper parameter used to rescan every kernel each time."""
    return facts.memo("jit_calls_by_name", lambda: _collect_jit_calls(facts, index))


def _collect_jit_calls(facts, index) -> dict[str, list[tuple[Kernel, cst.Call]]]:
    found: dict[str, list[tuple[Kernel, cst.Call]]] = {}
    for caller in facts.kernels.values():
        for node in index.subtree(caller.node):
            if type(node) is cst.Call and type(node.func) is cst.Name:
                found.setdefault(node.func.value, []).append((caller, node))
    return found
