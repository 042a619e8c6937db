"""Exact-shape evidence in host code: where the host states the shapes a launch can see.

Host code often restricts a fast path to shapes it knows: a predicate function whose body checks them
(``if not _supports_fast_path(x): return fallback(x)``), membership in a literal set of shapes
(``if (H, W) in _TUNED_SHAPES:``), a lookup in a literal table keyed by shape (``cfg = _CONFIGS[(M, N)]``), a
divisibility check (``assert x.shape[0] % BM == 0``). This module reads those forms once, for every rule that
asks what the host guarantees at a launch: the size rules (ASC105, ASC110, ASC304) read bounds from them, ASC303
reads divisibility (a block that divides every shape the launch can see never overshoots).

Three pieces, each a pure reading of the module: the conditions that a shape predicate's ``True`` states
(``predicate_conditions``), the literal values an expression takes under a membership test (``membership``), and
the membership tests that table lookups before a site imply (``lookups_before``). ``canonical`` spells a size the
same way wherever the host writes it (``M`` bound by ``M, N = x.shape`` and ``x.size(0)`` are both
``x.shape[0]``), so facts stated in one spelling match a launch that passes the other. Nothing is imported or run.
"""

from __future__ import annotations

import libcst as cst

from . import host_facts as hf
from .module_facts import ModuleFacts
from .syntax import block_exits, target_names

_MAX_DEPTH = 12
_MAX_SHAPES = 4096  # a literal set larger than this is data, not a list of tuned shapes


def shape_predicate(facts: ModuleFacts, test: cst.BaseExpression) -> tuple[cst.FunctionDef, cst.Call] | None:
    """``(function, call)`` when ``test`` calls a module-level function of this module that checks shapes."""
    if type(test) is not cst.Call or type(test.func) is not cst.Name:
        return None
    function = _module_functions(facts).get(test.func.value)
    if function is None or not predicate_conditions(facts, function):
        return None
    return function, test


def predicate_conditions(facts: ModuleFacts, function: cst.FunctionDef) -> list[cst.BaseExpression]:
    """What holds inside ``function`` when it returns True, as conditions read in its own scope: its body is a run
    of ``if C: return False`` (each giving ``not C``), optional plain assignments, and a last ``return E`` (giving
    ``E``); anything else (a loop, ``return True`` early, several returns of data) gives nothing. Only functions
    whose conditions read a shape or a size count (``x.shape``, ``x.size(0)``, ``x.numel()``, ``len(...)``)."""
    return facts.memo(("shape-predicate", id(function)), lambda: _predicate_conditions(facts, function))


def _predicate_conditions(facts: ModuleFacts, function: cst.FunctionDef) -> list[cst.BaseExpression]:
    if type(function.body) is not cst.IndentedBlock or function.asynchronous is not None:
        return []
    found: list[cst.BaseExpression] = []
    statements = list(function.body.body)
    for position, statement in enumerate(statements):
        last = position == len(statements) - 1
        if type(statement) is cst.SimpleStatementLine:
            small = statement.body[-1] if len(statement.body) == 1 else None
            if type(small) is cst.Return and last and small.value is not None:
                if _is_bool_literal(small.value):
                    if small.value.value == "False":
                        return []  # never true
                    continue  # `return True` after the `if C: return False` checks: they are the conditions
                found.append(small.value)
            elif type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString):
                continue  # the docstring
            elif type(small) in (cst.Assign, cst.AnnAssign):
                continue
            else:
                return []
        elif type(statement) is cst.If and statement.orelse is None and _returns_false(statement.body):
            found.append(cst.UnaryOperation(cst.Not(), statement.test))
        else:
            return []
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)}
    if not found or not any(_reads_a_shape(facts, condition) or _bounds_a_parameter(condition, params)
                            for condition in found):
        return []
    return found


def membership(test: cst.Comparison, literal_collection) -> list[tuple[cst.BaseExpression, tuple[int, ...]]]:
    """For ``X in C`` with ``C`` a literal collection (``literal_collection(expr)`` gives its items as ints or
    tuples of ints, possibly beside strings, or None): each expression of ``X`` with the values it can take (``(H, W) in {(56, 56),
    (28, 28)}`` gives ``H`` -> (56, 28) and ``W`` -> (56, 28)); empty when the test is not such a membership."""
    if len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.In:
        return []
    items = literal_collection(test.comparisons[0].comparator)
    if not items:
        return []
    left = test.left
    tensor = hf.whole_shape(left)
    if tensor is not None:  # `tuple(x.shape) in {(4096, 128), ...}`: one part per dimension the items spell
        ranks = {len(item) for item in items if isinstance(item, tuple)}
        if len(ranks) != 1:
            return []
        parts = [_entry(tensor, i) for i in range(ranks.pop())]
    elif type(left) in (cst.Tuple, cst.List):
        parts = [e.value for e in left.elements]
    else:
        parts = [left]
    if any(type(e) is cst.StarredElement for e in parts):
        return []
    columns: list[list[int]] = [[] for _ in parts]
    for item in items:
        values = item if isinstance(item, tuple) else (item,)
        if len(values) != len(parts):
            return []
        for column, value in zip(columns, values):
            column.append(value)
    return [(part, tuple(column)) for part, column in zip(parts, columns)
            if all(isinstance(value, int) for value in column)]  # a column of dtype strings says nothing of sizes


def literal_items(expr: cst.BaseExpression) -> list | None:
    """The items of a literal set, tuple, list or frozenset of ints or tuples of ints, or of a dict's keys."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("set", "frozenset", "tuple",
                                                                                     "list") and len(expr.args) == 1:
        expr = expr.args[0].value
    if type(expr) is cst.Dict:
        elements = [getattr(e, "key", None) for e in expr.elements]
    elif type(expr) in (cst.Set, cst.Tuple, cst.List):
        elements = [e.value if type(e) is cst.Element else None for e in expr.elements]
    else:
        return None
    if not elements or len(elements) > _MAX_SHAPES:
        return None
    items = []
    for element in elements:
        value = _literal_item(element)
        if value is None:
            return None
        items.append(value)
    return items


def lookups_before(facts: ModuleFacts, site: cst.CSTNode, is_table) -> list[cst.Comparison]:
    """Membership tests that lookups before ``site`` in its host function imply: ``cfg = TABLE[(M, N)]`` fails
    unless ``(M, N)`` is a key, and ``cfg = TABLE.get((M, N))`` followed by ``if cfg is None: return ...`` (or
    ``raise``) too. ``is_table(name_node)`` says whether a name is a literal table. Each test is built around the
    source's own key expression (``(M, N) in TABLE``), so names in it keep their positions."""
    function = next((a for a in facts.index.ancestors(site) if type(a) is cst.FunctionDef), None)
    if function is None:
        return []
    position = facts.index.order(site)
    found = []
    for node in facts.index.subtree(function):
        if facts.index.order(node) >= position:
            break
        if type(node) is cst.Subscript and type(node.value) is cst.Name and len(node.slice) == 1 \
                and type(node.slice[0].slice) is cst.Index and _unconditional(facts, node, function) \
                and not _is_store_target(facts, node) and is_table(node.value):
            found.append(_in(node.slice[0].slice.value, node.value))
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "get" \
                and type(node.func.value) is cst.Name and len(node.args) == 1 and is_table(node.func.value):
            bound = _assigned_name(facts, node)
            if bound is not None and _none_exits_after(facts, function, bound, node, position):
                found.append(_in(node.args[0].value, node.func.value))
    return found


def canonical(resolver, expr: cst.BaseExpression, site: cst.CSTNode, depth: int = 0) -> str | None:
    """One spelling for a size wherever the host writes it: an int literal (``"64"``), a shape entry
    (``"x.shape[0]"`` for ``x.shape[0]``, ``x.size(0)`` and a name bound to either, ``M, N = x.shape`` included), a
    numel (``"x.numel()"``), or a plain name that is none of these. None when ``expr`` is something else."""
    if type(expr) is cst.Integer:
        return str(expr.evaluated_value)
    tensor, dim, numel = hf.shape_part(expr)
    if tensor is not None:
        return f"{tensor.value}.numel()" if numel else f"{tensor.value}.shape[{dim}]"
    if type(expr) is not cst.Name:
        return None
    if depth < _MAX_DEPTH:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression) and value is not expr:
            shaped = resolver.shape_items.get(id(value))
            if shaped is not None:  # an item of `M, N = x.shape`
                name, i, rank = shaped
                return f"{name}.shape[{i}]"
            if type(value) in (cst.Name, cst.Integer) or hf.shape_part(value)[0] is not None:
                return canonical(resolver, value, site, depth + 1)
    return expr.value


def rebased(key: str, mapping: dict[str, str]) -> str | None:
    """``key`` (a canonical spelling in a predicate's scope) in the caller's terms: its root name replaced by what
    the caller passes for that parameter (``x.shape[0]`` with ``x`` -> ``a`` is ``a.shape[0]``); a literal stays;
    None when the root is not a parameter the caller passes as a plain name."""
    if key.isdigit():
        return key
    root, dot, rest = key.partition(".")
    target = mapping.get(root)
    if target is None:
        return None
    return target + dot + rest


def _entry(tensor: cst.Name, index: int) -> cst.Subscript:
    """``x.shape[index]`` built around the source's own ``x`` (so that its binding can be looked up)."""
    return cst.Subscript(cst.Attribute(tensor, cst.Name("shape")), [cst.SubscriptElement(cst.Index(cst.Integer(str(index))))])


def _module_functions(facts: ModuleFacts) -> dict[str, cst.FunctionDef]:
    return facts.memo("module-functions", lambda: {
        s.name.value: s for s in facts.module.body if type(s) is cst.FunctionDef
    })


def _reads_a_shape(facts: ModuleFacts, condition: cst.BaseExpression) -> bool:
    stack: list[cst.CSTNode] = [condition]
    while stack:
        node = stack.pop()
        if type(node) is cst.Attribute and node.attr.value in ("shape", "numel", "size", "ndim"):
            return True
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "len":
            return True
        if type(node) is cst.Name and node.value not in ("True", "False", "None"):
            function = next((a for a in facts.index.ancestors(node) if type(a) is cst.FunctionDef), None) \
                if facts.index.parent(node) is not None else None
            if function is not None and _assigned_from_shape(facts, function, node.value):
                return True
        stack.extend(node.children)
    return False


def _bounds_a_parameter(condition: cst.BaseExpression, params: set[str]) -> bool:
    """The condition compares a parameter with an int literal (``rows <= 4096``, ``n in (64, 128)``, ``not n >
    4096``): a predicate over sizes the caller passes."""
    stack: list[cst.CSTNode] = [condition]
    while stack:
        node = stack.pop()
        if type(node) is cst.Comparison and len(node.comparisons) == 1:
            sides = (node.left, node.comparisons[0].comparator)
            if any(type(a) is cst.Name and a.value in params for a in sides) and any(
                    type(b) is cst.Integer or literal_items(b) is not None for b in sides):
                return True
        stack.extend(node.children)
    return False


def _assigned_from_shape(facts: ModuleFacts, function: cst.FunctionDef, name: str) -> bool:
    for node in facts.index.subtree(function):
        if type(node) is cst.Assign and any(name in target_names(t.target) for t in node.targets):
            text = facts.module.code_for_node(node.value)
            if ".shape" in text or ".size(" in text or ".numel(" in text or "len(" in text:
                return True
    return False


def _returns_false(body: cst.BaseSuite) -> bool:
    if type(body) is cst.SimpleStatementSuite:
        smalls = body.body
    elif type(body) is cst.IndentedBlock and len(body.body) == 1 and type(body.body[0]) is cst.SimpleStatementLine:
        smalls = body.body[0].body
    else:
        return False
    return len(smalls) == 1 and type(smalls[0]) is cst.Return and smalls[0].value is not None \
        and type(smalls[0].value) is cst.Name and smalls[0].value.value == "False"


def _is_bool_literal(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value in ("True", "False")


def _literal_item(expr) -> int | tuple[int | str, ...] | None:
    """An int, or a tuple of ints that may pair them with strings (``("float16", 1024, 1024)``: a dtype beside the
    sizes); ``membership`` keeps only the columns of ints."""
    if type(expr) is cst.Integer:
        return int(expr.value, 0)
    if type(expr) in (cst.Tuple, cst.List) and expr.elements and all(type(e) is cst.Element for e in expr.elements):
        values = [int(e.value.value, 0) if type(e.value) is cst.Integer
                  else e.value.evaluated_value if type(e.value) is cst.SimpleString else None for e in expr.elements]
        if None not in values and any(isinstance(v, int) for v in values):
            return tuple(values)
    return None


def _in(key: cst.BaseExpression, table: cst.Name) -> cst.Comparison:
    return cst.Comparison(key, [cst.ComparisonTarget(cst.In(), table)])


def _unconditional(facts: ModuleFacts, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    for ancestor in facts.index.ancestors(node):
        if ancestor is function:
            return True
        if type(ancestor) in (cst.If, cst.IfExp, cst.For, cst.While, cst.Try, cst.BooleanOperation, cst.Lambda,
                              cst.FunctionDef, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp):
            return False
    return False


def _is_store_target(facts: ModuleFacts, node: cst.Subscript) -> bool:
    parent = facts.index.parent(node)
    return type(parent) is cst.AssignTarget or (type(parent) in (cst.AugAssign, cst.AnnAssign)
                                                and parent.target is node)


def _assigned_name(facts: ModuleFacts, call: cst.Call) -> str | None:
    parent = facts.index.parent(call)
    if type(parent) is cst.Assign and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:
        return parent.targets[0].target.value
    return None


def _none_exits_after(facts: ModuleFacts, function: cst.FunctionDef, name: str, call: cst.Call,
                      position: int) -> bool:
    """``if name is None: return/raise ...`` (or ``if not name:``) between the lookup and the site."""
    start = facts.index.order(call)
    for node in facts.index.subtree(function):
        at = facts.index.order(node)
        if at <= start:
            continue
        if at >= position:
            break
        if type(node) is cst.If and node.orelse is None and block_exits(node.body) and _tests_none(node.test, name):
            return True
    return False


def _tests_none(test: cst.BaseExpression, name: str) -> bool:
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return type(test.expression) is cst.Name and test.expression.value == name
    return (type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.left) is cst.Name
            and test.left.value == name and type(test.comparisons[0].operator) is cst.Is
            and type(test.comparisons[0].comparator) is cst.Name and test.comparisons[0].comparator.value == "None")
