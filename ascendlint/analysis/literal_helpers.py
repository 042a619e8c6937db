"""Host helpers that return one of a few literals: ``def _block_for(n): return 64 if n < 4096 else 128``.

Launchers often pick a tile size through such a helper (``BLOCK = _block_for(n)``, ``BM, BN = _tiles(M, N)``).
What the helper can return is a small fixed set of literals, whatever the data, and so is a conditional expression
of literal tuples written inline (``BM, BN = (32, 32) if tiny else (64, 128)``), so every rule that reads a tile
size reads those literals: the grid analysis (a tile count over them, a block that is a literal), the block sizes
ASC303 checks divisibility against, the tile extents ASC304 and the Unified Buffer estimate read. A helper counts
when every ``return`` of it gives a literal, a conditional expression of literals, or a tuple of those (one tuple
length for all returns), or the variable of a loop over literal ints (``for b in (256, 128): if n % b == 0:
return b``); anything else (a computed value, another loop that returns, no return) makes it not one.
Nothing is imported or run; each function is read once per module.
"""

from __future__ import annotations

from itertools import product

import libcst as cst

from .module_facts import ModuleFacts

_MAX_CHOICES = 64  # more combinations than this is not "a few literals"

Choices = tuple  # tuple[int, ...] for a scalar helper, tuple[tuple[int, ...], ...] for a tuple-returning one


def helper_literals(facts: ModuleFacts, call: cst.BaseExpression) -> Choices | None:
    """The values a call to a literal-returning helper of this module can give (ints, or tuples of ints for a
    helper returning tuples), or None when ``call`` is not such a call."""
    if type(call) is not cst.Call or type(call.func) is not cst.Name:
        return None
    function = _functions(facts).get(call.func.value)
    if function is None:
        return None
    return facts.memo(("literal-helper", id(function)), lambda: _returned(function))


def helper_item_literals(facts: ModuleFacts, expr: cst.BaseExpression) -> tuple[int, ...] | None:
    """The values of item ``i`` of a tuple-returning helper's result: ``_tiles(M, N)[0]``, which is also what a
    name unpacked from it holds (``BM, BN = _tiles(M, N)``); the same for tuples of literals picked inline by a
    conditional expression (``BM, BN = (32, 32) if tiny else (64 if m <= 512 else 128, 128)``)."""
    if type(expr) is not cst.Subscript or len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
        return None
    index = expr.slice[0].slice.value
    if type(index) is not cst.Integer:
        return None
    found = helper_literals(facts, expr.value) or inline_literals(expr.value)
    if not found or not isinstance(found[0], tuple):
        return None
    position = int(index.value, 0)
    if not all(-len(item) <= position < len(item) for item in found):
        return None
    return tuple(sorted({item[position] for item in found}))


def inline_literals(expr: cst.BaseExpression) -> Choices | None:
    """The values a conditional expression of literals can take, read like a helper's ``return`` (``(32, 32) if
    tiny else (64, 128)``); None when it is not one. A bare literal or tuple is not a choice and gives None."""
    if type(expr) is not cst.IfExp:
        return None
    return _choices(_literals(expr))


def _functions(facts: ModuleFacts) -> dict[str, cst.FunctionDef]:
    return facts.memo("module-functions", lambda: {
        s.name.value: s for s in facts.module.body if type(s) is cst.FunctionDef
    })


def _returned(function: cst.FunctionDef) -> Choices | None:
    if function.asynchronous is not None:
        return None
    values: set = set()
    returns = 0
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) is cst.For and _holds_return(node):
            picked = _loop_returns(node)
            if picked is None:
                return None  # a return from inside a loop: what it returns depends on the run
            values |= set(picked)
            returns += 1
            if node.orelse is not None:
                stack.append(node.orelse)
            continue
        if type(node) in (cst.For, cst.While, cst.Try, cst.With):
            if _holds_return(node):
                return None  # a return from inside a loop or a handler: what it returns depends on the run
            continue
        if type(node) is cst.Return:
            returns += 1
            choices = _literals(node.value)
            if choices is None:
                return None
            values |= set(choices)
            continue
        if type(node) in (cst.Yield, cst.Await):
            return None
        if not isinstance(node, cst.BaseExpression):
            stack.extend(node.children)
    return _choices(values) if returns else None


def _choices(values) -> Choices | None:
    """A few literals of one shape (all ints, or all tuples of one length), sorted; None otherwise."""
    if not values or len(set(values)) > _MAX_CHOICES:
        return None
    if len({len(v) if isinstance(v, tuple) else -1 for v in values}) != 1:
        return None
    return tuple(sorted(set(values)))


def _loop_returns(loop: cst.For) -> list | None:
    """What the returns inside ``for b in (256, 128, 64): if n % b == 0: return b`` can give: the loop's literals
    for a return of its variable, a literal for a literal; None for anything else (a nested loop that returns, a
    computed value)."""
    if type(loop.target) is not cst.Name or type(loop.iter) not in (cst.Tuple, cst.List) or not loop.iter.elements:
        return None
    items = [e.value for e in loop.iter.elements]
    if not all(type(e) is cst.Integer for e in items):
        return None
    values: list = []
    stack: list[cst.CSTNode] = [loop.body]
    while stack:
        node = stack.pop()
        if type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if type(node) in (cst.For, cst.While, cst.Try, cst.With) and _holds_return(node):
            return None
        if type(node) is cst.Return:
            if type(node.value) is cst.Name and node.value.value == loop.target.value:
                values += [int(e.value, 0) for e in items]
                continue
            found = _literals(node.value)
            if found is None:
                return None
            values += found
            continue
        if not isinstance(node, cst.BaseExpression):
            stack.extend(node.children)
    return values or None


def _holds_return(node: cst.CSTNode) -> bool:
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if type(child) is cst.Return:
            return True
        if type(child) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda) and not isinstance(child,
                                                                                             cst.BaseExpression):
            stack.extend(child.children)
    return False


def _literals(expr: cst.BaseExpression | None) -> list | None:
    """Every value ``expr`` can be: an int literal, either side of a conditional expression, a tuple of those."""
    if expr is None:
        return None
    if type(expr) is cst.Integer:
        return [int(expr.value, 0)]
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus and type(expr.expression) is cst.Integer:
        return [-int(expr.expression.value, 0)]
    if type(expr) is cst.IfExp:
        body, orelse = _literals(expr.body), _literals(expr.orelse)
        return None if body is None or orelse is None else body + orelse
    if type(expr) in (cst.Tuple, cst.List) and expr.elements \
            and all(type(e) is cst.Element for e in expr.elements):
        columns = [_literals(e.value) for e in expr.elements]
        if any(c is None or any(isinstance(v, tuple) for v in c) for c in columns):
            return None
        combos = 1
        for column in columns:
            combos *= len(column)
        if combos > _MAX_CHOICES:
            return None
        return [tuple(items) for items in product(*columns)]
    return None
