"""The integer width of the tensor a kernel's pointer parameter receives, read from the launching host code.

An index loaded from a tensor the host allocates as int64 (``torch.zeros(n, dtype=torch.int64)``, ``.long()``,
``.to(torch.int64)``) is int64 in the kernel: its products with a stride do not wrap at 2^31, however the name
reads. The same index loaded from an int32 tensor, or narrowed with ``.to(tl.int32)``, does. Only what every launch
of the module shows counts; a tensor whose allocation is not visible gives no answer.
"""

from __future__ import annotations

import libcst as cst

from .module_facts import Kernel, ModuleFacts

_WIDTHS = {"int64": "int64", "long": "int64", "int32": "int32", "int": "int32"}
_KEEPS_DTYPE = {"view", "reshape", "contiguous", "flatten", "clone", "detach", "squeeze", "unsqueeze", "expand",
                "narrow", "cuda", "npu", "t", "transpose", "permute"}
_MAX_DEPTH = 8


def pointer_dtype(facts: ModuleFacts, kernel: Kernel, param: str) -> str | None:
    """``"int64"`` or ``"int32"`` when every launch of ``kernel`` in the module passes ``param`` a tensor of that
    integer width, else None."""
    cache = facts.memo("pointer_dtypes", dict)
    key = (id(kernel.node), param)
    if key not in cache:
        cache[key] = _pointer_dtype(facts, kernel, param)
    return cache[key]


def _pointer_dtype(facts: ModuleFacts, kernel: Kernel, param: str) -> str | None:
    from .launch_arguments import launch_argument, launches_of

    found = set()
    for launch in launches_of(facts, kernel):
        argument = launch_argument(launch, param)
        width = _width(facts, argument, launch.call, 0) if argument is not None else None
        if width is None:
            return None
        found.add(width)
    return found.pop() if len(found) == 1 else None


def _width(facts: ModuleFacts, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> str | None:
    if depth > _MAX_DEPTH:
        return None
    if type(expr) is cst.Call:
        keyword = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if keyword is not None:
            return _dtype_name(keyword)
        func = expr.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method in ("long", "int"):
                return _WIDTHS[method]
            if method == "to" and expr.args:
                return _dtype_name(expr.args[0].value)
            if method in _KEEPS_DTYPE:
                return _width(facts, func.value, site, depth + 1)
        return None
    if type(expr) is cst.Subscript:  # a slice keeps the dtype
        return _width(facts, expr.value, site, depth + 1)
    if type(expr) is cst.Name:
        values = _assigned_values(facts, expr.value, site)
        widths = {_width(facts, value, site, depth + 1) for value in values}
        return widths.pop() if len(widths) == 1 and values else None
    return None


def _dtype_name(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "torch":
        return _WIDTHS.get(node.attr.value)
    return None


def _assigned_values(facts: ModuleFacts, name: str, site: cst.CSTNode) -> list[cst.BaseExpression]:
    """Every value the function holding ``site`` assigns to ``name`` (a parameter gives none)."""
    scope = next((a for a in facts.index.ancestors(site) if type(a) is cst.FunctionDef), None)
    if scope is None:
        return []
    found = []
    for assign in facts.index.of_type(cst.Assign):
        if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name:
            continue
        if assign.targets[0].target.value != name:
            continue
        if next((a for a in facts.index.ancestors(assign) if type(a) is cst.FunctionDef), None) is scope:
            found.append(assign.value)
    return found
