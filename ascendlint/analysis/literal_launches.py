"""The exact literal values a closed module launches a kernel with, and the divisibility they establish.

A test module or a script whose launches all run from its own tests (``run_sizes.is_closed_module``) often passes
every size as a literal, directly or through names: ``rows, cols, BR, BC = SHAPE_2D`` of a module-level tuple,
``pytest.mark.parametrize`` cases, the arguments of every call of a host function, ``T=64, BLOCK=16`` at the launch.
When every value one kernel parameter can take there is a multiple of every value another takes, the pair holds
``extent % block == 0`` at every launch, as a host ``assert`` would say; a launch written in a parametrized test is
read one case at a time (``rows = block * stride`` divides by ``block`` in each case, whatever the other cases
hold). Serves ASC303 (a block that never
overshoots). Nothing is imported or executed; a value that is not spelled with literals leaves the pair unknown.
"""

from __future__ import annotations

import libcst as cst

from .closed_modules import host_functions, module_call_sites, parametrize_cases, parametrize_rows
from .host_guards import HostGuards
from .host_resolver import MAX_DEPTH, host_resolver
from .launch_arguments import launch_argument
from .literals import integer_value
from .module_facts import Kernel, ModuleFacts
from .run_size_reader import arguments_by_param, literal_item
from .run_sizes import is_closed_module

_MOST = 64  # candidate values kept per expression; more says nothing a linter can use
_ARITHMETIC = {
    cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b if b else None, cst.Modulo: lambda a, b: a % b if b else None,
}


def literal_launch_guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    """``(extent, block)`` pairs of the kernel's parameters that divide (or are equal) at every launch of a closed
    module, read from the literal values each launch passes; nothing when a use of the kernel is not a launch."""
    cache = facts.memo("literal_launch_guards", dict)
    found = cache.get(id(kernel.node))
    if found is None:
        found = cache[id(kernel.node)] = _guards(facts, kernel)
    return found


def _guards(facts: ModuleFacts, kernel: Kernel) -> HostGuards:
    launches = [launch for launch in facts.launches if launch.kernel is kernel]
    if not launches or not is_closed_module(facts):
        return HostGuards()
    uses = _uses(facts, kernel, launches)
    if uses is None:
        return HostGuards()
    reader = _LiteralValues(facts)
    per_use = []
    for site, arguments in uses:
        for test, case in _cases_around(facts, site):  # one parametrize case at a time: its items go together
            reader.bind(test, case)
            values = {}
            for param, argument in arguments.items():
                found = None if argument is None else reader.values(argument, site, 0)
                if found:
                    values[param] = found
            per_use.append(values)
    reader.bind(None, {})
    divides, equal = set(), set()
    for extent in kernel.params:
        for block in kernel.params:
            if extent == block or any(extent not in v or block not in v for v in per_use):
                continue
            if all(b > 0 and e % b == 0 for v in per_use for e in v[extent] for b in v[block]):
                divides.add((extent, block))
            if all(len(v[extent]) == 1 and v[extent] == v[block] for v in per_use):
                equal.add((extent, block))
    return HostGuards(frozenset(divides), frozenset(equal))


def _cases_around(facts: ModuleFacts, site: cst.CSTNode) -> list[tuple[cst.FunctionDef | None, dict]]:
    """The parametrize cases of the test function ``site`` is written in, each combination of one case per
    decorator; one empty case when there are none, or too many to read one by one."""
    test = next((a for a in facts.index.ancestors(site) if type(a) is cst.FunctionDef), None)
    combinations: list[dict] = [{}]
    for rows in parametrize_rows(test, facts.module) if test is not None else ():
        combinations = [{**done, **row} for done in combinations for row in rows]
        if len(combinations) > _MOST:
            return [(None, {})]
    return [(test, case) for case in combinations]


def _uses(facts: ModuleFacts, kernel: Kernel, launches: list) -> list[tuple[cst.Call, dict]] | None:
    """Each launch of the kernel and each ``kernel.warmup(...)`` compile of it, with what it passes for each
    parameter; None when the kernel's name is used otherwise in host code (handed on: its sizes come from
    elsewhere)."""
    targets = {id(launch.target) for launch in launches}
    found = [(launch.call, {p: launch_argument(launch, p) for p in kernel.params}) for launch in launches]
    kernel_nodes = [k.node for k in facts.kernels.values()]
    for node in facts.index.names(kernel.name):
        parent = facts.index.parent(node)
        if parent is kernel.node or (type(parent) is cst.Attribute and parent.attr is node) or id(node) in targets:
            continue
        if any(ancestor in kernel_nodes for ancestor in facts.index.ancestors(node)):
            continue
        call = facts.index.parent(parent)
        if not (type(parent) is cst.Attribute and parent.attr.value == "warmup" and type(call) is cst.Call
                and call.func is parent and not any(a.star for a in call.args)):
            return None
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        found.append((call, {p: keywords.get(p, positional[i] if i < len(positional) else None)
                             for i, p in enumerate(kernel.params)}))
    return found


class _LiteralValues:
    """Every literal value a host expression can hold at a site of a closed module, or None when one is not
    spelled: through host names, module-level tuples (``SHAPE[2]``), parametrize cases and the calls of a host
    function."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.resolver = host_resolver(facts)
        self.functions = host_functions(facts)
        sites, escaped = module_call_sites(facts, self.functions)
        self.sites = {name: calls for name, calls in sites.items() if name not in escaped}
        self.test: cst.FunctionDef | None = None
        self.case: dict[str, cst.BaseExpression] = {}

    def bind(self, test: cst.FunctionDef | None, case: dict[str, cst.BaseExpression]) -> None:
        """Read the parameters of ``test`` as the items of one of its parametrize cases."""
        self.test, self.case = test, case

    def values(self, expr, site, depth: int) -> frozenset[int] | None:
        if depth > MAX_DEPTH:
            return None
        kind = type(expr)
        if kind is cst.Integer:
            return frozenset({integer_value(expr)})
        if kind is cst.Name:
            return self._name(expr.value, site, depth)
        if kind is cst.Subscript:
            item = self._tuple_item(expr, site)
            return None if item is None else self.values(item, site, depth + 1)
        if kind is cst.BinaryOperation and type(expr.operator) in _ARITHMETIC:
            left = self.values(expr.left, site, depth + 1)
            right = self.values(expr.right, site, depth + 1) if left else None
            if not right or len(left) * len(right) > _MOST:
                return None
            operate = _ARITHMETIC[type(expr.operator)]
            found = {operate(a, b) for a in left for b in right}
            return None if None in found else frozenset(found)
        return None

    def _name(self, name: str, site, depth: int) -> frozenset[int] | None:
        scope = self.resolver.scope_node(site)
        if any(type(n.target) is cst.Name and n.target.value == name and self.resolver.scope_node(n) is scope
               for n in self.facts.index.of_type(cst.AugAssign)):
            return None  # updated in place: more than its assignments say
        assigned = self.resolver.assignments_before(name, site)
        if not assigned:
            status, value = self.resolver.lookup(name, site)
            if status == "param" and type(scope) is cst.FunctionDef:
                return self._param(scope, name, depth)
            assigned = [value] if status == "value" else []
        if not assigned or not all(isinstance(v, cst.BaseExpression) for v in assigned):
            return None
        if any(type(n) is cst.Name and n.value == name for v in assigned for n in (v, *self.facts.index.descendants(v))):
            return None  # n = n * 2: read no further
        return self._union([self.values(v, site, depth + 1) for v in assigned])

    def _param(self, function: cst.FunctionDef, name: str, depth: int) -> frozenset[int] | None:
        if function is self.test and name in self.case:
            return self.values(self.case[name], self.case[name], depth + 1)
        cases = parametrize_cases(function, self.facts.module)
        if name in cases:
            return self._union([self.values(item, item, depth + 1) for item in cases[name]])
        if self.functions.get(function.name.value) is not function:
            return None
        calls = self.sites.get(function.name.value, [])
        for param, arguments in arguments_by_param(function, calls):
            if param == name and arguments:
                return self._union([None if a is None else self.values(a, call, depth + 1) for a, call in arguments])
        return None

    def _tuple_item(self, expr: cst.Subscript, site) -> cst.BaseExpression | None:
        """``SHAPE[2]`` of a literal tuple or list (through host names), at a non-negative literal index: that item."""
        if len(expr.slice) != 1 or type(expr.slice[0].slice) is not cst.Index:
            return None
        if type(expr.slice[0].slice.value) is not cst.Integer:
            return None
        return literal_item(self.resolver, expr, site)

    @staticmethod
    def _union(parts: list) -> frozenset[int] | None:
        if not parts or any(not p for p in parts):
            return None
        found = frozenset().union(*parts)
        return found if len(found) <= _MOST else None
