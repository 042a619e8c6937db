"""Which ``tl.make_block_ptr`` calls a kernel value comes from, shared by the block-pointer rules.

Follows the reaching definitions of the shared kernel analysis through ``tl.advance``, through jit helpers that
return block pointers (also as one element of a returned tuple) and into a jit helper's parameter from the
calling kernels.
"""

from __future__ import annotations

import libcst as cst

from .syntax import argument
from .values import KernelAnalysis
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


# -- across modules: what a jit helper returns, for the modules that import it ------------------------------------
def returned_blocks(context) -> dict[str, dict]:
    """Jit functions of the module that return a block pointer on every path, by name: ``{"rank": r or None,
    "dims": [{"fits": bool, "model": bool}, ...] or None}``. A dimension *fits* when its block extent equals the
    tensor extent at offset 0 and no ``tl.advance`` moves the block in the helper; *model* when the tensor extent
    is a model dimension's name (``K``, ``D``). ``dims`` is None when the parts are not literal tuples of one rank.
    An importer checks a load or store of such a helper's result as if the helper were its own (ASC303)."""
    found = {}
    for name, kernel in context.facts.kernels.items():
        resolver = block_pointer_origins(context, kernel)
        returns = [node.value for node in resolver.analysis.nodes if type(node) is cst.Return]
        if not returns or any(value is None or type(value) is cst.Tuple for value in returns):
            continue
        origins = [origin for value in returns for origin in (resolver.of(value) or [None])]
        if not origins or None in origins:
            continue
        moved = any(type(n) is cst.Call and context.facts.qualname(n.func) == "tl.advance"
                    for n in resolver.analysis.nodes)
        ranks = {block_rank(origin) for origin in origins}
        described = [_dims(context, origin, moved) for origin in origins]
        dims = None
        if None not in described and len({len(d) for d in described}) == 1:
            dims = [{"fits": all(d[i]["fits"] for d in described), "model": all(d[i]["model"] for d in described)}
                    for i in range(len(described[0]))]
        found[name] = {"rank": ranks.pop() if len(ranks) == 1 else None, "dims": dims}
    return found


def _dims(context, block: cst.Call, moved: bool) -> list[dict] | None:
    from .grid_names import is_model_dimension_name

    parts = [argument(block, 1, "shape"), argument(block, 3, "offsets"), argument(block, 4, "block_shape")]
    if any(type(p) not in (cst.Tuple, cst.List) for p in parts) or len({len(p.elements) for p in parts}) != 1:
        return None
    code = context.module.code_for_node
    found = []
    for extent, offset, size in zip(*(p.elements for p in parts)):
        extent, offset, size = extent.value, offset.value, size.value
        zero = type(offset) is cst.Integer and offset.evaluated_value == 0
        found.append({"fits": not moved and zero and code(extent) == code(size),
                      "model": type(extent) is cst.Name and is_model_dimension_name(extent.value)})
    return found


def imported_block(analysis: KernelAnalysis, expr: cst.BaseExpression | None) -> dict | None:
    """The ``returned_blocks`` entry of the imported helper whose result ``expr`` is (the call itself, or a name
    every reaching definition of which assigns such a call), or None."""
    facts = analysis.facts
    if expr is None or not facts.imported_helpers:
        return None
    if type(expr) is cst.Call:
        if type(expr.func) is not cst.Name:
            return None
        summary = facts.imported_helpers.get(expr.func.value)
        return summary.blocks if summary is not None else None
    if type(expr) is not cst.Name:
        return None
    found = []
    for definition in analysis.definitions(expr):
        if definition.kind != "assign" or definition.value is None or type(definition.statement) is not cst.Assign:
            return None
        if any(type(t.target) is not cst.Name for t in definition.statement.targets):
            return None
        found.append(imported_block(analysis, definition.value) if type(definition.value) is cst.Call else None)
    if not found or None in found or any(f != found[0] for f in found):
        return None
    return found[0]
