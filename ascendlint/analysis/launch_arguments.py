"""What a launch passes for each kernel parameter, and which launches a kernel has.

The argument written at the launch for a parameter (by keyword or position), the literal integers a launch passes,
whether an argument may be ``1`` or ``None`` at the launch. Serves ASC102 and ASC104 and the analyses that read
launch values (``host_arguments``, ``host_guards``, the grid classifier, host dtypes).
"""

from __future__ import annotations


import libcst as cst

from .module_facts import Kernel, Launch, ModuleFacts
from .host_resolver import HostResolver, MAX_DEPTH, host_resolver
from .syntax import is_none


def literal_arguments(facts: ModuleFacts, launch: Launch) -> dict[str, int]:
    """Kernel parameters that this launch passes as integer literals (directly or through a host name)."""
    kernel = launch.kernel
    found: dict[str, int] = {}
    resolver = host_resolver(facts)
    positional = [a for a in launch.call.args if a.keyword is None and not a.star]
    if kernel is not None:
        for name, arg in zip(kernel.params, positional):
            value = resolver.literal_value(arg.value, launch.call)
            if value is not None:
                found[name] = value
    for name, arg in launch.keywords.items():
        value = resolver.literal_value(arg.value, launch.call)
        if value is not None:
            found[name] = value
    if kernel is not None:  # a tile size a helper picks from a few literals: the largest it can be
        passed = {**dict(zip(kernel.params, (a.value for a in positional))),
                  **{n: a.value for n, a in launch.keywords.items()}}
        for name, expr in passed.items():
            if name not in found:
                choices = resolver.literal_choices(expr, launch.call, 0)
                if choices:
                    found[name] = max(choices)
    return found


def launch_argument(launch: Launch, param: str) -> cst.BaseExpression | None:
    """The expression ``launch`` passes for ``param`` (by position or keyword), or None."""
    kernel = launch.kernel
    if param in launch.keywords:
        return launch.keywords[param].value
    if kernel is None or param not in kernel.params:
        return None
    positional = [a for a in launch.call.args if a.keyword is None]
    position = kernel.params.index(param)
    if any(a.star for a in positional[: position + 1]):
        return None
    return positional[position].value if position < len(positional) else None


def may_pass_one(facts: ModuleFacts, launch: Launch, param: str) -> bool:
    """Whether ``launch`` can plausibly pass 1 for ``param``: the literal 1, a size of a tensor (``x.shape[0]``,
    ``x.size(1)``, ``len(x)``, names unpacked from ``x.shape``) or the stride of its last dimension
    (``x.stride(-1)``), directly, through host names or on either side of a conditional expression. A batch of one, a single head and a contiguous last
    dimension are common; other strides are row lengths."""
    expr = launch_argument(launch, param)
    if expr is None:
        default = launch.kernel.defaults.get(param) if launch.kernel is not None else None
        return type(default) is cst.Integer and default.evaluated_value == 1
    resolver = host_resolver(facts)
    pending = [(expr, 0)]
    while pending:  # both sides of `x.shape[0] if x.dim() == 3 else 1` can be passed
        expr, depth = pending.pop()
        if depth >= MAX_DEPTH:
            continue
        if resolver.literal_value(expr, launch.call) == 1 or _is_size_or_stride(expr):
            return True
        if type(expr) is cst.IfExp:
            pending += [(expr.body, depth + 1), (expr.orelse, depth + 1)]
            continue
        if type(expr) is not cst.Name:
            continue
        status, value = resolver.lookup(expr.value, launch.call)
        if status == "value" and isinstance(value, cst.BaseExpression):
            pending.append((value, depth + 1))
    return False


def may_pass_none(facts: ModuleFacts, launch: Launch, param: str) -> bool:
    """Whether ``launch`` can pass None for ``param``: the literal None (also as the kernel's default when the
    launch leaves it out), a conditional with a None branch, or a host name bound to one of those, or a parameter of
    the host function that defaults to None or is annotated Optional, unless the host code uses it as a tensor
    (``g.transpose``, ``weight.shape``) before the launch."""
    expr = launch_argument(launch, param)
    if expr is None:
        default = launch.kernel.defaults.get(param) if launch.kernel is not None else None
        return is_none(default)
    return _nullable(host_resolver(facts), expr, launch.call, 0)


def _nullable(resolver: "HostResolver", expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return True
    if is_none(expr):
        return True
    if type(expr) is cst.IfExp:
        return _nullable(resolver, expr.body, site, depth + 1) or _nullable(resolver, expr.orelse, site, depth + 1)
    if type(expr) is cst.BooleanOperation:
        return _nullable(resolver, expr.right, site, depth + 1)
    if type(expr) is not cst.Name:
        return False  # a call, an attribute, a subscript or arithmetic yields a tensor (or fails on the host)
    if resolver.used_as_tensor_before(expr.value, site):
        return False
    status, value = resolver.lookup(expr.value, site)
    if status == "value" and isinstance(value, cst.BaseExpression):
        return _nullable(resolver, value, site, depth + 1)
    if status == "param":
        return resolver.optional_param(expr.value, site)
    return False


def _is_size_or_stride(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Subscript:
        base = expr.value
        return type(base) is cst.Attribute and base.attr.value == "shape"
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Attribute and func.attr.value == "size":
            return True
        if type(func) is cst.Attribute and func.attr.value == "stride" and expr.args:
            last = expr.args[0].value
            return type(last) is cst.UnaryOperation and type(last.operator) is cst.Minus and isinstance(
                last.expression, cst.Integer) and last.expression.evaluated_value == 1
        return type(func) is cst.Name and func.value == "len"
    return False


def launches_of(facts: ModuleFacts, kernel: Kernel) -> list[Launch]:
    """The launches in this module whose target is ``kernel``."""
    return facts.memo("launches_by_kernel", lambda: _launches_by_kernel(facts)).get(id(kernel.node), [])


def _launches_by_kernel(facts: ModuleFacts) -> dict[int, list[Launch]]:
    by_kernel: dict[int, list[Launch]] = {}
    for launch in facts.launches:
        if launch.kernel is not None:
            by_kernel.setdefault(id(launch.kernel.node), []).append(launch)
    return by_kernel
