"""The sizes a pytest module runs its kernels at: a reference copy of a kernel in a test module is launched only by
that module's tests, over tensors the tests allocate from literal parameters.

When every tensor a module's test functions allocate (``torch.rand((B, T, H, D))`` with ``B, T, H, D`` taken from
``pytest.mark.parametrize`` literals) holds at most 2**31 elements, an in-bounds int32 offset into any of them
cannot wrap: the module's host code bounds what its kernels index. Nothing is imported or executed.
"""

from __future__ import annotations

import libcst as cst

from .host_facts import allocation_dims
from .module_facts import ModuleFacts
from .literals import integer_value

_LIMIT = 2**31  # elements; the largest in-bounds offset of such a tensor is 2**31 - 1, which int32 holds


def tests_allocate_small_tensors(facts: ModuleFacts) -> bool:
    """The module defines pytest tests that allocate tensors, every one of them of at most 2**31 elements at the
    literal values its parametrize lists give (cached on the facts)."""
    return facts.memo("tests_allocate_small", lambda: _decide(facts.module))


def _decide(module: cst.Module) -> bool:
    if not _imports_pytest(module):
        return False  # a production module's own self-test says nothing of the sizes its other callers pass
    tests = [s for s in module.body if type(s) is cst.FunctionDef and s.name.value.startswith("test")]
    sized = False
    for test in tests:
        values = _parameter_values(test)
        for node in _calls(test.body):
            dims = allocation_dims(node) if _is_torch_allocation(node) else None
            if dims is None:
                continue
            elements = 1
            for dim in dims:
                size = _largest(dim, values)
                if size is None:
                    return False  # a size the test does not spell out: nothing is known
                elements *= size
            if elements > _LIMIT:
                return False
            sized = True
    return sized


def _imports_pytest(module: cst.Module) -> bool:
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Import and any(
                    type(a.name) is cst.Name and a.name.value == "pytest" for a in small.names):
                return True
            if type(small) is cst.ImportFrom and type(small.module) is cst.Name and small.module.value == "pytest":
                return True
    return False


def _is_torch_allocation(call: cst.Call) -> bool:
    func = call.func
    return type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "torch"


def _calls(body: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Collect(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    body.visit(_Collect())
    return found


def _largest(dim: cst.BaseExpression, values: dict[str, int]) -> int | None:
    if type(dim) is cst.Integer:
        return integer_value(dim)
    if type(dim) is cst.Name:
        return values.get(dim.value)
    if type(dim) is cst.Subscript and type(dim.value) is cst.Name:
        return values.get(dim.value.value)  # `cu_seqlens[-1]` of a literal list: at most its largest entry
    if type(dim) is cst.BinaryOperation and type(dim.operator) in (cst.Multiply, cst.Add):
        left, right = _largest(dim.left, values), _largest(dim.right, values)
        if left is None or right is None:
            return None
        return left * right if type(dim.operator) is cst.Multiply else left + right
    return None


def _parameter_values(test: cst.FunctionDef) -> dict[str, int]:
    """The largest integer literal each parametrized name takes (``@pytest.mark.parametrize("B, T", [(1, 64)])``,
    also through ``pytest.param(*case)`` comprehensions over a literal list of tuples)."""
    found: dict[str, int] = {}
    for decorator in test.decorators:
        call = decorator.decorator
        if not (type(call) is cst.Call and len(call.args) >= 2 and _is_parametrize(call.func)):
            continue
        names = _names(call.args[0].value)
        for case in _cases(call.args[1].value):
            for name, item in zip(names, case):
                largest = _literal_bound(item)
                if largest is not None:
                    found[name] = max(found.get(name, 0), largest)
    for statement in _assignments(test.body):  # `K = D`, `V = K`, `T = cu_seqlens[-1]`, in source order
        for target, value in _pairs(statement.targets[0].target, statement.value):
            size = _largest(value, found)
            if size is not None:
                found[target] = max(found.get(target, 0), size)
            else:
                found.pop(target, None)
    return found


def _literal_bound(item: cst.BaseExpression) -> int | None:
    """An integer literal, or the largest entry of a literal list of them (a ``cu_seqlens`` case)."""
    if type(item) is cst.Integer:
        return integer_value(item)
    if type(item) in (cst.List, cst.Tuple) and item.elements:
        entries = [e.value for e in item.elements]
        if all(type(e) is cst.Integer for e in entries):
            return max(integer_value(e) for e in entries)
    return None


def _assignments(body: cst.CSTNode) -> list[cst.Assign]:
    found: list[cst.Assign] = []

    class _Collect(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1:
                found.append(node)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(_Collect())
    return found


def _pairs(target: cst.BaseExpression, value: cst.BaseExpression) -> list[tuple[str, cst.BaseExpression]]:
    if type(target) is cst.Name:
        return [(target.value, value)]
    if type(target) in (cst.Tuple, cst.List) and type(value) in (cst.Tuple, cst.List) and len(
            target.elements) == len(value.elements):
        return [pair for t, v in zip(target.elements, value.elements) for pair in _pairs(t.value, v.value)]
    return []


def _is_parametrize(func: cst.BaseExpression) -> bool:
    return type(func) is cst.Attribute and func.attr.value == "parametrize"


def _names(expr: cst.BaseExpression) -> list[str]:
    if type(expr) is cst.SimpleString:
        return [n.strip() for n in expr.evaluated_value.split(",") if n.strip()]
    if type(expr) in (cst.Tuple, cst.List):
        return [e.value.evaluated_value for e in expr.elements if type(e.value) is cst.SimpleString]
    return []


def _cases(expr: cst.BaseExpression) -> list[list[cst.BaseExpression]]:
    """Each case of a parametrize list as its items (a bare value is a one-item case)."""
    if type(expr) is cst.ListComp:
        inner = expr.for_in.iter
        return _cases(inner) if type(inner) in (cst.List, cst.Tuple) else []
    if type(expr) not in (cst.List, cst.Tuple):
        return []
    cases = []
    for element in expr.elements:
        value = element.value
        if type(value) is cst.Call and value.args and not value.args[0].star:
            value = value.args[0].value if len(value.args) == 1 else cst.Tuple([cst.Element(a.value) for a in value.args])
        if type(value) in (cst.Tuple, cst.List):
            cases.append([e.value for e in value.elements])
        else:
            cases.append([value])
    return cases
