"""The divisibility and equality facts that host code establishes wherever it launches a kernel.

``if T % BT == 0:``, ``assert K == BK``, early exits (``if S % BT: raise``), shape predicates of the module, and
membership of the shape in a literal set or table, read at every use of the kernel and at the callers of the host
function; a fact holds for the kernel when it holds at every use. The kernel's own compile-time asserts
(``tl.static_assert(M % BM == 0)``) state such facts too. Also the conditions that guard a site, which
``host_bounds`` reads for upper bounds. Serves ASC303 (exact block pointers) and the grid classifier.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from . import shape_evidence as se
from .module_facts import Kernel, ModuleFacts
from .host_resolver import MAX_DEPTH, host_resolver
from .launch_arguments import launch_argument
from .syntax import is_integer


@dataclass(frozen=True)
class HostGuards:
    """Facts the host code establishes wherever it launches (or hands on) a kernel: ``T % BT == 0`` gives
    ``("T", "BT")`` in ``divides``, ``K == BK`` gives ``("K", "BK")`` in ``equal``. Names are the kernel's
    parameter names (a launch passing ``T=seq_len`` maps the host name ``seq_len`` to ``T``)."""

    divides: frozenset[tuple[str, str]] = frozenset()
    equal: frozenset[tuple[str, str]] = frozenset()

    def is_multiple(self, extent: str, block: str) -> bool:
        return (extent, block) in self.divides or self.is_equal(extent, block)

    def is_equal(self, extent: str, block: str) -> bool:
        return extent == block or (extent, block) in self.equal or (block, extent) in self.equal

    def __or__(self, other: HostGuards) -> HostGuards:
        return HostGuards(self.divides | other.divides, self.equal | other.equal)


def host_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    """What every use of ``kernel`` in this module's host code is guarded by: the enclosing ``if`` conditions (through
    host names such as ``aligned = T % BT == 0 and K == BK``) and the asserts before it. A use is a launch or the
    kernel's name passed on (``launch_on_cores(kernel, ...)``); no use, no facts."""
    return _per_kernel(facts, "host_guards", kernel, _host_guards)


def _per_kernel(facts: ModuleFacts, key: str, kernel: Kernel, build) -> HostGuards:
    """``build(facts, kernel)``, computed once per kernel and kept on the module facts under ``key``."""
    cache = facts.memo(key, dict)
    found = cache.get(id(kernel.node))
    if found is None:
        found = cache[id(kernel.node)] = build(facts, kernel)
    return found


def static_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    """What the kernel itself asserts at compile time, in statements of its body that always run:
    ``tl.static_assert(M % BLOCK_M == 0)`` (a compile error otherwise, so every compiled kernel has it), read like a
    host condition."""
    return _per_kernel(facts, "static_guards", kernel, _static_guards)


def _static_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    resolver = host_resolver(facts)
    body = kernel.node.body
    divides: set[tuple[str, str]] = set()
    equal: set[tuple[str, str]] = set()
    for line in body.body if type(body) is cst.IndentedBlock else ():
        if type(line) is not cst.SimpleStatementLine:
            continue
        for small in line.body:
            call = small.value if type(small) is cst.Expr else None
            if type(call) is cst.Call and facts.qualname(call.func) == "tl.static_assert" and call.args:
                _collect_facts(resolver, call.args[0].value, call, divides, equal, 0)
    return HostGuards(frozenset(divides), frozenset(equal))


def _host_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    resolver = host_resolver(facts)
    kernel_nodes = {id(k.node) for k in facts.kernels.values()}
    uses = [
        node for node in facts.index.names(kernel.name)
        if not _inside(facts, node, kernel_nodes) and not _is_definition(facts, node)
    ]
    if not uses:
        return HostGuards()
    common: tuple[set, set] | None = None
    for use in uses:
        divides, equal, choices = _site_guards(resolver, facts, use)
        divides |= _dividing_blocks(facts, resolver, use, kernel, choices)
        renames = _launch_renames(facts, use, kernel)
        divides = {(renames.get(a, a), renames.get(b, b)) for a, b in divides}
        equal = {(renames.get(a, a), renames.get(b, b)) for a, b in equal}
        common = (divides, equal) if common is None else (common[0] & divides, common[1] & equal)
    return HostGuards(frozenset(common[0]), frozenset(common[1]))


def _inside(facts: ModuleFacts, node: cst.CSTNode, functions: set[int]) -> bool:
    """Is ``node`` inside one of the functions (given by their ids)?"""
    return any(id(ancestor) in functions for ancestor in facts.index.ancestors(node))


def _is_definition(facts: ModuleFacts, node: cst.Name) -> bool:
    parent = facts.index.parent(node)
    return type(parent) in (cst.FunctionDef, cst.ImportAlias, cst.AsName) or (
        type(parent) is cst.Attribute and parent.attr is node
    )


def guarding_conditions(facts: ModuleFacts, use: cst.CSTNode) -> list[cst.BaseExpression]:
    """Conditions that hold where ``use`` runs: ``if`` tests of the branches it sits in (the true side), and the
    tests of ``assert`` statements that precede it in the same host function, and the negated tests of early exits
    before it (``if S % BT != 0: raise ValueError(...)`` holds ``S % BT == 0`` afterwards), and the membership that
    a lookup in a literal table keyed by shape implies (``cfg = _CONFIGS[(M, N)]``: see ``shape_evidence``)."""
    found: list[cst.BaseExpression] = se.lookups_before(facts, use, lambda name: _literal_table(facts, name))
    child: cst.CSTNode = use
    function = None
    for ancestor in facts.index.ancestors(use):
        if type(ancestor) is cst.If and child is ancestor.body:
            found.append(ancestor.test)
        elif type(ancestor) is cst.IfExp and child is ancestor.body:
            found.append(ancestor.test)
        elif type(ancestor) is cst.FunctionDef:
            function = ancestor
            break
        child = ancestor
    if function is not None:
        position = facts.index.order(use)
        around = {id(ancestor) for ancestor in facts.index.ancestors(use)}
        for node in facts.index.subtree(function):
            if facts.index.order(node) >= position:
                break
            if type(node) is cst.Assert and not _conditional_in(facts, node, function):
                found.append(node.test)
            elif type(node) is cst.If and id(node) not in around and _exits(node) \
                    and not _conditional_in(facts, node, function):  # an early exit, not the branch holding `use`
                negated = negation_of(node.test)
                if negated is not None:
                    found.append(negated)
    return found


def _exits(branch: cst.If) -> bool:
    """An ``if`` without ``else`` whose body always raises or returns."""
    if branch.orelse is not None or type(branch.body) is not cst.IndentedBlock or not branch.body.body:
        return False
    last = branch.body.body[-1]
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) in (cst.Raise, cst.Return)


def negation_of(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``not test`` as a conjunction of the forms ``_collect_facts`` reads, or None when it is not one."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return test.expression
    if type(test) is cst.BinaryOperation and type(test.operator) is cst.Modulo:  # `if M % BM:` -> M % BM == 0
        return cst.Comparison(test, [cst.ComparisonTarget(cst.Equal(), cst.Integer("0"))])
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.Or:
        left, right = negation_of(test.left), negation_of(test.right)
        if left is None or right is None:
            return left or right  # not (a or b) holds both; keeping the one understood is still true
        return cst.BooleanOperation(left, cst.And(), right)
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        opposite = _OPPOSITE.get(type(target.operator))
        if opposite is not None:  # if n > 65535: raise  holds  n <= 65535  afterwards
            return test.with_changes(comparisons=[target.with_changes(operator=opposite())])
    return None


_OPPOSITE = {cst.NotEqual: cst.Equal, cst.GreaterThan: cst.LessThanEqual, cst.GreaterThanEqual: cst.LessThan,
             cst.LessThan: cst.GreaterThanEqual, cst.LessThanEqual: cst.GreaterThan, cst.NotIn: cst.In}


def _conditional_in(facts: ModuleFacts, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    for ancestor in facts.index.ancestors(node):
        if ancestor is function:
            return False
        if type(ancestor) in (cst.If, cst.For, cst.While, cst.Try, cst.FunctionDef):
            return True
    return False


def _collect_facts(resolver, test, site, divides: set, equal: set, depth: int,
                   choices: dict[str, tuple[int, ...]] | None = None) -> None:
    """Divisibility and equality facts a condition states (``T % BT == 0``, ``K == BK``), each side spelled the
    same way wherever the host writes it (``shape_evidence.canonical``), and in ``choices`` the literal values a
    membership test allows (``(M, N) in _SHAPES``); a call to a shape predicate of the module states what its
    ``True`` states, in the caller's terms."""
    if depth > MAX_DEPTH:
        return
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        _collect_facts(resolver, test.left, site, divides, equal, depth + 1, choices)
        _collect_facts(resolver, test.right, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        negated = negation_of(test.expression)
        if negated is not None and type(negated) is not cst.UnaryOperation:
            _collect_facts(resolver, negated, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.Name:
        status, value = resolver.lookup(test.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            _collect_facts(resolver, value, site, divides, equal, depth + 1, choices)
    elif type(test) is cst.Call:
        _predicate_facts(resolver, test, site, divides, equal, depth, choices)
    elif type(test) is cst.Comparison and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if type(operator) is cst.In:
            if choices is not None:
                for part, values in se.membership(test, lambda c: literal_collection(resolver, c, site)):
                    key = se.canonical(resolver, part, site)
                    if key is not None:
                        kept = set(values) & set(choices[key]) if key in choices else set(values)
                        choices[key] = tuple(sorted(kept))
            return
        if type(operator) is not cst.Equal:
            return
        for one, other in ((left, right), (right, left)):
            if (type(one) is cst.BinaryOperation and type(one.operator) is cst.Modulo
                    and is_integer(other, 0)):
                divides.update(_spelled_pairs(resolver, one.left, one.right, site))
                return
        equal.update(_spelled_pairs(resolver, left, right, site))


def _spelled_pairs(resolver, left, right, site) -> set[tuple[str, str]]:
    """The pairs of spellings of two sizes: as written (``T``) and canonical (``k.shape[1]``), so that a fact
    matches a launch that passes either."""
    lefts = {_spelled(left), se.canonical(resolver, left, site)} - {None}
    rights = {_spelled(right), se.canonical(resolver, right, site)} - {None}
    return {(a, b) for a in lefts for b in rights}


def _predicate_facts(resolver, call: cst.Call, site, divides: set, equal: set, depth: int, choices) -> None:
    """The facts of a shape predicate's conditions (read in its own scope), rebased on what the call passes."""
    found = se.shape_predicate(resolver.facts, call)
    if found is None:
        return
    function, _ = found
    mapping = argument_names(resolver, function, call, site)
    inner = function.body.body[-1]
    own_divides: set = set()
    own_equal: set = set()
    own_choices: dict = {}
    for condition in se.predicate_conditions(resolver.facts, function):
        _collect_facts(resolver, condition, inner, own_divides, own_equal, depth + 1, own_choices)
    for pairs, into in ((own_divides, divides), (own_equal, equal)):
        for a, b in pairs:
            pair = (se.rebased(a, mapping), se.rebased(b, mapping))
            if None not in pair:
                into.add(pair)
    if choices is not None:
        for key, values in own_choices.items():
            key = se.rebased(key, mapping)
            if key is not None:
                choices[key] = tuple(sorted(set(values) & set(choices[key]))) if key in choices else values


def argument_names(resolver, function: cst.FunctionDef, call: cst.Call, site) -> dict[str, str]:
    """Parameter of ``function`` -> the caller's spelling of what ``call`` passes for it (a plain name, bound the
    same way at the call and at ``site``)."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    keywords = {p.name.value for p in function.params.kwonly_params} | set(params)
    mapping: dict[str, str] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            return mapping
        name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
        if name is None or name not in keywords:
            continue
        value = arg.value
        if type(value) is cst.Name and same_binding(resolver, value, site):
            mapping[name] = se.canonical(resolver, value, site) or value.value
    return mapping


def literal_collection(resolver, expr: cst.BaseExpression, site) -> list | None:
    """The items of a literal collection spelled at the test or bound to a name (``_TUNED_SHAPES``)."""
    items = se.literal_items(expr)
    if items is None and type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            items = se.literal_items(value)
    if items is None and type(expr) is cst.Call and type(expr.func) is cst.Attribute \
            and expr.func.attr.value == "keys" and not expr.args:
        return literal_collection(resolver, expr.func.value, site)
    return items


def _literal_table(facts: ModuleFacts, name: cst.Name) -> bool:
    """A name bound once, at module level, to a literal dict keyed by sizes (``_CONFIGS = {(4096, 128): ...}``)."""
    status, value = host_resolver(facts).lookup(name.value, name)
    return status == "value" and type(value) is cst.Dict and se.literal_items(value) is not None


def _dividing_blocks(facts: ModuleFacts, resolver, use: cst.Name, kernel: Kernel,
                     choices: dict[str, tuple[int, ...]]) -> set[tuple[str, str]]:
    """``(extent, block parameter)`` for every size whose allowed values all divide by the literal block sizes a
    launch at ``use`` passes (``(M, N) in {(4096, 1024), (8192, 2048)}`` with ``BM=64``)."""
    if not choices:
        return set()
    launch = next((l for l in facts.launches if l.kernel is kernel and l.target is use), None)
    if launch is None:
        return set()
    found = set()
    for param in kernel.params:
        passed = launch_argument(launch, param)
        blocks = resolver.literal_choices(passed, launch.call, 0) if passed is not None else []
        if not blocks or 0 in blocks:
            continue
        for key, values in choices.items():
            if values and all(value % block == 0 for value in values for block in blocks):
                found.add((key, param))
    return found


def host_function(facts: ModuleFacts, site: cst.CSTNode) -> cst.FunctionDef | None:
    return next((a for a in facts.index.ancestors(site) if type(a) is cst.FunctionDef), None)


def private_calls(facts: ModuleFacts, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a private module-level host function (``_launch``) from the rest of the module, when those are
    its only uses (a function passed around as a value, or a public one, can be called from anywhere)."""
    name = function.name.value
    if not name.startswith("_") or name.startswith("__") or facts.index.parent(function) is not facts.module:
        return []
    calls = []
    for node in facts.index.names(name):
        parent = facts.index.parent(node)
        if parent is function:
            continue
        if type(parent) is not cst.Call or parent.func is not node:
            return []
        if any(a is function for a in facts.index.ancestors(parent)):
            return []  # a recursive call
        calls.append(parent)
    return calls


def call_mapping(resolver, function: cst.FunctionDef, call: cst.Call) -> dict[str, str]:
    """The caller's canonical spelling of each plain-name argument -> the callee's parameter it binds."""
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    keywords = {p.name.value for p in function.params.kwonly_params} | set(params)
    mapping: dict[str, str] = {}
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        name = arg.keyword.value if arg.keyword is not None else (params[position] if position < len(params) else None)
        if name is None or name not in keywords or type(arg.value) is not cst.Name:
            continue
        mapping[arg.value.value] = name
        key = se.canonical(resolver, arg.value, call)
        if key is not None:
            mapping.setdefault(key, name)
    return mapping


def _site_guards(resolver, facts: ModuleFacts, site: cst.CSTNode) -> tuple[set, set, dict]:
    """The divisibility, equality and membership facts at ``site``: its own guarding conditions, then what every
    caller of its host function establishes."""
    divides: set[tuple[str, str]] = set()
    equal: set[tuple[str, str]] = set()
    choices: dict[str, tuple[int, ...]] = {}
    for condition in guarding_conditions(facts, site):
        _collect_facts(resolver, condition, site, divides, equal, 0, choices)
    function = host_function(facts, site)
    if function is not None:
        inherited = _caller_guards(resolver, facts, function)
        divides |= inherited[0]
        equal |= inherited[1]
        for key, values in inherited[2].items():
            choices.setdefault(key, values)
    return divides, equal, choices


def _caller_guards(resolver, facts: ModuleFacts, function: cst.FunctionDef):
    """Divisibility, equality and membership facts that every call of a private host function in the module is
    guarded by (an ``assert M % 64 == 0`` in the caller before ``_launch(a, c)``), rebased on the callee's
    parameters (``a.shape[0]`` in the caller is ``x.shape[0]`` when ``a`` is passed as ``x``)."""
    key = ("caller-guards", id(function))
    cache = facts.memo("caller-facts", dict)
    if key in cache:
        return cache[key] or (set(), set(), {})
    cache[key] = None
    merged = None
    for call in private_calls(facts, function):
        divides, equal, choices = _site_guards(resolver, facts, call)
        mapping = call_mapping(resolver, function, call)
        rebase = lambda k: mapping.get(k) or se.rebased(k, {c: p for c, p in mapping.items() if "." not in c})
        found = ({(rebase(a), rebase(b)) for a, b in divides if None not in (rebase(a), rebase(b))},
                 {(rebase(a), rebase(b)) for a, b in equal if None not in (rebase(a), rebase(b))},
                 {rebase(k): v for k, v in choices.items() if rebase(k) is not None})
        merged = found if merged is None else (merged[0] & found[0], merged[1] & found[1],
                                               {k: tuple(sorted(set(v) | set(found[2][k])))
                                                for k, v in merged[2].items() if k in found[2]})
    cache[key] = merged or (set(), set(), {})
    return cache[key]


def same_binding(resolver, name: cst.Name, site: cst.CSTNode) -> bool:
    """The name read in a condition holds the same value there as at ``site`` (the launch). The name node is the
    source's own (a negated early-exit test is rebuilt around it), so its position is known."""
    first, second = resolver.lookup(name.value, name), resolver.lookup(name.value, site)
    return first[0] == second[0] != "unknown" and first[1] is second[1]


def _spelled(expr: cst.BaseExpression) -> str | None:
    if type(expr) is cst.Integer:
        return str(expr.evaluated_value)
    return expr.value if type(expr) is cst.Name else None


def _launch_renames(facts: ModuleFacts, use: cst.Name, kernel: Kernel) -> dict[str, str]:
    """Host name (or literal) -> kernel parameter for what a direct launch passes (``T=seq_len``, ``BT=128``);
    a size is also known by its canonical spelling (``x.shape[0]`` for ``M`` of ``M, N = x.shape``)."""
    launch = next((l for l in facts.launches if l.kernel is kernel and l.target is use), None)
    if launch is None:
        return {}
    resolver = host_resolver(facts)
    renames: dict[str, str] = {}
    for param in kernel.params:
        argument = launch_argument(launch, param)
        passed = _spelled(argument or cst.Name("None"))
        if passed is not None and passed != param and passed != "None":
            renames.setdefault(passed, param)
        key = se.canonical(resolver, argument, launch.call) if argument is not None else None
        if key is not None and key != param and key != "None":
            renames.setdefault(key, param)
    return renames
