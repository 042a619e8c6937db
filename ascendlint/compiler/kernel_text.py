"""The kernel's source, rebuilt from the linted text: what the compiler worker imports instead of the user's module.

Kept, and nothing else: the imports of ``triton`` (and ``math``) modules, module-level names bound to a literal
(``BLOCK = 128``, ``EPS: tl.constexpr = 1e-6``, ``tl.constexpr(4)``) that the kernel or its helpers read, the jit
helpers the kernel calls (transitively, in source order), and the kernel itself under a plain ``@triton.jit`` (its
``do_not_specialize`` kept; autotune and heuristics decorators dropped: their configs become separate compiles).
Any other code of the module (host functions, torch, other imports, decorators' side effects) never runs.
"""

from __future__ import annotations

import libcst as cst

from ..analysis.module_facts import Kernel, ModuleFacts, dotted_name

_ALLOWED_IMPORTS = ("triton", "math")
_HEADER = "import triton\nimport triton.language as tl\n"


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if type(expr) is cst.Name:
        return expr.value in ("True", "False", "None")
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        return _literal(expr.expression)
    if type(expr) is cst.Tuple:
        return all(_literal(element.value) for element in expr.elements)
    if type(expr) is cst.Call and (dotted_name(expr.func) or "").endswith("constexpr") and len(expr.args) == 1:
        return _literal(expr.args[0].value)
    return False


def _names_in(facts: ModuleFacts, node: cst.CSTNode) -> set[str]:
    """Names read anywhere under ``node``, from the module's node index (libcst's visitor rebuilds every node it
    walks: on a large module that cost more than parsing it)."""
    index = facts.index
    nodes = index.subtree(node) if index.parent(node) is not None and type(node) is cst.FunctionDef else \
        index.descendants(node)
    return {n.value for n in nodes if type(n) is cst.Name}


def _import_kept(statement: cst.BaseSmallStatement) -> bool:
    if type(statement) is cst.Import:
        return all((dotted_name(a.name) or "").split(".")[0] in _ALLOWED_IMPORTS for a in statement.names)
    if type(statement) is cst.ImportFrom and statement.module is not None and not statement.relative:
        return (dotted_name(statement.module) or "").split(".")[0] in _ALLOWED_IMPORTS
    return False


def _jit_decorator(kernel: Kernel) -> str:
    if kernel.do_not_specialize:
        names = ", ".join(repr(n) for n in sorted(kernel.do_not_specialize, key=kernel.params.index)
                          if n in kernel.params)
        return f"@triton.jit(do_not_specialize=[{names}])"
    return "@triton.jit"


def _helpers(facts: ModuleFacts, kernel: Kernel) -> list[Kernel]:
    """Jit functions of this module the kernel calls, directly or through each other."""
    by_name = {k.name: k for k in facts.kernels.values()}
    wanted, queue = {kernel.name}, [kernel]
    while queue:
        current = queue.pop()
        for name in _names_in(facts, current.node.body):
            helper = by_name.get(name)
            if helper is not None and name not in wanted:
                wanted.add(name)
                queue.append(helper)
    return [k for k in facts.kernels.values() if k.name in wanted and k.name != kernel.name]


def rebuild(facts: ModuleFacts, kernel: Kernel) -> str:
    """Module text holding ``kernel`` and only what it needs (see the module docstring)."""
    module = facts.module
    functions = [*_helpers(facts, kernel), kernel]
    used: set[str] = set()
    for function in functions:
        used |= _names_in(facts, function.node)
    parts = [_HEADER]
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if _import_kept(small):
                if module.code_for_node(small).strip() + "\n" in _HEADER:
                    continue
                parts.append("try:\n    " + module.code_for_node(small) + "\nexcept ImportError:\n    pass\n")
            elif type(small) in (cst.Assign, cst.AnnAssign):
                targets = ([t.target for t in small.targets] if type(small) is cst.Assign else [small.target])
                if (small.value is not None and _literal(small.value) and len(targets) == 1
                        and type(targets[0]) is cst.Name and targets[0].value in used):
                    parts.append(module.code_for_node(small) + "\n")
    for function in functions:
        node = function.node.with_changes(decorators=[], leading_lines=[])
        body = module.code_for_node(node)
        parts.append("\n\n" + _jit_decorator(function) + "\n" + body.lstrip("\n"))
    return "".join(parts)
