"""Whether a module's launches are reached only from its own tests or ``__main__`` block.

A test function or fixture, a ``__main__`` block, or a host function called only from within the module (never
passed around as a value) reaches a launch from inside; ``pytest.mark.parametrize`` cases and literal module values
are read here for the size reader. Serves ``run_sizes``, which reads the sizes of a closed module only.
"""

from __future__ import annotations

import libcst as cst

from . import test_shapes as ts
from .module_facts import ModuleFacts, dotted_name

_FIXTURES = {"request", "tmp_path", "tmpdir", "monkeypatch", "capsys", "capfd", "caplog", "benchmark"}


def has_main_block(module: cst.Module) -> bool:
    for statement in module.body:
        if type(statement) is cst.If and type(statement.test) is cst.Comparison:
            test = statement.test
            names = [test.left, *(c.comparator for c in test.comparisons)]
            if any(type(n) is cst.Name and n.value == "__name__" for n in names) and any(
                    type(n) is cst.SimpleString and n.evaluated_value == "__main__" for n in names):
                return True
    return False


def _outermost_function(facts: ModuleFacts, node: cst.CSTNode) -> cst.CSTNode | None:
    """The module-level function holding ``node``, the module for module-level code, None inside a class."""
    found: cst.CSTNode = facts.module
    for ancestor in facts.index.ancestors(node):
        if type(ancestor) is cst.ClassDef:
            return None
        if type(ancestor) is cst.FunctionDef:
            found = ancestor
    return found


def host_functions(facts: ModuleFacts) -> dict[str, cst.FunctionDef]:
    kernels = facts.kernel_nodes()
    return {s.name.value: s for s in facts.module.body if type(s) is cst.FunctionDef and id(s) not in kernels}


def launches_reached_from_module(facts: ModuleFacts) -> bool:
    """Every host function that reaches a launch is a test, or is called (only called) from within the module;
    tests take no argument the module does not give (parametrize names, its own fixtures)."""
    functions = host_functions(facts)
    callers, escaped = module_call_sites(facts, functions)
    fixtures = {name for name, f in functions.items() if any(_is_fixture(d.decorator) for d in f.decorators)}
    pending = []
    for launch in facts.launches:
        holder = _outermost_function(facts, launch.call)
        if holder is None:
            return False
        if holder is not facts.module:
            pending.append(holder)
    seen: set[int] = set()
    while pending:
        function = pending.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        if function.name.value not in functions or function.name.value in escaped:
            return False
        sites = callers.get(function.name.value, [])
        if function.name.value.startswith("test"):
            given = set(parametrize_cases(function, facts.module)) | fixtures | _FIXTURES
            params = function.params
            if any(p.name.value not in given for p in (*params.posonly_params, *params.params,
                                                         *params.kwonly_params)):
                return False
            continue
        if not sites:
            return False  # called from nowhere in the module: its callers are elsewhere
        for site in sites:
            holder = _outermost_function(facts, site)
            if holder is None:
                return False
            if holder is not facts.module:
                pending.append(holder)
    return True


def module_call_sites(facts: ModuleFacts, functions: dict[str, cst.FunctionDef]
                ) -> tuple[dict[str, list[cst.Call]], set[str]]:
    """Calls of each host function by name, and the functions used other than by a call or their ``def`` (passed
    as a value, rebound, registered): those are called from elsewhere too."""
    found: dict[str, list[cst.Call]] = {}
    escaped: set[str] = set()
    index = facts.index
    for name, function in functions.items():
        for node in index.names(name):
            parent = index.parent(node)
            if parent is function or type(parent) is cst.Param:  # its def, or a parameter of that name
                continue
            if type(parent) is cst.Call and parent.func is node:
                found.setdefault(name, []).append(parent)
            elif not ((type(parent) is cst.Attribute and parent.attr is node)
                      or (type(parent) is cst.Arg and parent.keyword is node)):
                escaped.add(name)
    return found, escaped


def _is_fixture(decorator: cst.BaseExpression) -> bool:
    target = decorator.func if type(decorator) is cst.Call else decorator
    name = dotted_name(target)
    return name is not None and name.split(".")[-1] == "fixture"


def parametrize_cases(function: cst.FunctionDef, module: cst.Module | None = None
                       ) -> dict[str, list[cst.BaseExpression]]:
    """Each parametrized name of a test and the case items it takes (the cases written in the decorator, or in a
    module-level list it names: ``@pytest.mark.parametrize("shape", SHAPES)``)."""
    found: dict[str, list[cst.BaseExpression]] = {}
    for rows in parametrize_rows(function, module):
        for row in rows:
            for name, item in row.items():
                found.setdefault(name, []).append(item)
    return found


def parametrize_rows(function: cst.FunctionDef, module: cst.Module | None = None
                     ) -> list[list[dict[str, cst.BaseExpression]]]:
    """The cases of each parametrize decorator of a test, one dict of name -> item per case (a case that is not
    literal maps its names to the decorator's whole argument: unknown). A test runs every combination of one case
    of each decorator."""
    decorators = []
    for decorator in function.decorators:
        call = decorator.decorator
        if not (type(call) is cst.Call and len(call.args) >= 2 and ts._is_parametrize(call.func)):
            continue
        names = ts._names(call.args[0].value)
        listed = call.args[1].value
        if type(listed) is cst.ListComp and type(listed.for_in.iter) is cst.Name:
            listed = listed.for_in.iter  # [pytest.param(*case) for case in CASES]
        if type(listed) is cst.Name and module is not None:
            listed = _module_value(module, listed.value) or listed
        cases = ts._cases(listed)
        if not cases:
            decorators.append([{name: call.args[1].value for name in names}])  # not literal: unknown
            continue
        decorators.append([{name: case[position] if position < len(case) else call.args[1].value
                            for position, name in enumerate(names)} for case in cases])
    return decorators


def _module_value(module: cst.Module, name: str) -> cst.BaseExpression | None:
    """The value of the one module-level assignment of ``name``, or None."""
    found = []
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Assign and len(small.targets) == 1 and type(
                    small.targets[0].target) is cst.Name and small.targets[0].target.value == name:
                found.append(small.value)
    return found[0] if len(found) == 1 else None
