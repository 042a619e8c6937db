"""The kernel's source, rebuilt from the linted text: what the compiler worker imports instead of the user's module.

Kept, and nothing else: the imports of ``triton``, ``triton_dist`` (stood in by ``device_api`` where it is not
installed) and ``math`` modules, module-level names bound to a literal
(``BLOCK = 128``, ``EPS: tl.constexpr = 1e-6``, ``tl.constexpr(4)``) that the kernel or its helpers read, the jit
helpers the kernel calls (transitively, in source order), and the kernel itself under a plain ``@triton.jit`` (its
``do_not_specialize`` kept; autotune and heuristics decorators dropped: their configs become separate compiles).
Any other code of the module (host functions, torch, other imports, decorators' side effects) never runs.
"""

from __future__ import annotations

import libcst as cst

from ..analysis.module_facts import Kernel, ModuleFacts, dotted_name

_ALLOWED_IMPORTS = ("triton", "math", "triton_dist")
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


class NotRebuilt(ValueError):
    """The kernel cannot be rebuilt without evaluating code of the module (the reason is the message)."""


_CONSTEXPR_ANNOTATIONS = {"tl.constexpr", "triton.language.constexpr", "constexpr", "tl.tensor"}


def _safe_signature(function: Kernel, module: cst.Module) -> cst.FunctionDef:
    """The function with nothing in its signature that Python evaluates when it defines it besides literals:
    annotations other than ``tl.constexpr`` are dropped (triton reads only that one), and a default that is not a
    literal refuses the rebuild."""
    params = []
    for param in function.node.params.params:
        annotation = param.annotation
        if annotation is not None:
            spelled = dotted_name(annotation.annotation) or ""
            if type(annotation.annotation) is cst.SimpleString:
                spelled = annotation.annotation.evaluated_value or ""
            if spelled not in _CONSTEXPR_ANNOTATIONS:
                annotation = None
            elif type(annotation.annotation) is cst.SimpleString:
                annotation = cst.Annotation(cst.parse_expression(spelled))
        if param.default is not None and not _literal(param.default):
            raise NotRebuilt(f"the default of `{param.name.value}` is not a literal")
        params.append(param.with_changes(annotation=annotation))
    node = function.node
    if node.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or node.params.kwonly_params or \
            node.params.star_kwarg is not None or node.params.posonly_params:
        raise NotRebuilt("its signature has more than plain parameters")
    return node.with_changes(decorators=[], leading_lines=[], returns=None,
                             params=node.params.with_changes(params=params))


def rebuild(facts: ModuleFacts, kernel: Kernel) -> str:
    """Module text holding ``kernel`` and only what it needs (see the module docstring); ``NotRebuilt`` when that
    would evaluate code of the module beyond literals."""
    imports: list[str] = [_HEADER]
    constants: list[str] = []
    functions: dict[str, str] = {}
    _gather(facts, kernel, imports, constants, functions, depth=0)
    return "".join(imports) + "".join(constants) + "".join(functions.values())


MAX_MODULES = 4  # how many imports deep a jit helper is followed into other linted modules


def _gather(facts, kernel, imports, constants, functions, depth) -> None:
    module = facts.module
    chain = [*_helpers(facts, kernel), kernel]
    used: set[str] = set()
    for function in chain:
        used |= _names_in(facts, function.node)
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if _import_kept(small):
                text = module.code_for_node(small).strip() + "\n"
                block = "try:\n    " + text + "except ImportError:\n    pass\n"
                if text not in _HEADER and block not in imports:
                    imports.append(block)
            elif type(small) in (cst.Assign, cst.AnnAssign):
                targets = ([t.target for t in small.targets] if type(small) is cst.Assign else [small.target])
                text = module.code_for_node(small) + "\n"
                if (small.value is not None and _literal(small.value) and len(targets) == 1
                        and type(targets[0]) is cst.Name and targets[0].value in used and text not in constants):
                    constants.append(text)
    local = {k.name for k in facts.kernels.values()}
    for name in sorted(used - local):
        origin = facts.imported_symbols.get(name)
        if origin and depth < MAX_MODULES and name not in functions:
            _gather_imported(facts, name, origin, imports, constants, functions, depth)
    for function in chain:
        if function.name in functions:
            continue
        node = _safe_signature(function, module)
        functions[function.name] = ("\n\n" + _jit_decorator(function) + "\n"
                                    + module.code_for_node(node).lstrip("\n"))


def _gather_imported(facts, local_name, origin, imports, constants, functions, depth) -> None:
    """A jit helper imported from another module of the linted tree: its text, read (never imported)."""
    module_name, _, attribute = origin.rpartition(".")
    other = _module_facts(facts, module_name)
    if other is None:
        return
    helper = next((k for k in other.kernels.values() if k.name == attribute), None)
    if helper is None:
        return
    _gather(other, helper, imports, constants, functions, depth + 1)
    if local_name != attribute:
        functions[local_name] = f"\n\n{local_name} = {attribute}\n"


def _module_file(facts: ModuleFacts, dotted: str):
    from pathlib import Path

    if not facts.filename or not facts.name:
        return None
    path = Path(facts.filename).resolve()
    depth = len(facts.name.split(".")) - (0 if facts.is_package else 1)
    root = path.parent
    for _ in range(depth):
        root = root.parent
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_facts(facts: ModuleFacts, dotted: str):
    from ..analysis.walk import NodeIndex

    cache = facts.memo("compiler_imported_modules", dict)
    if dotted not in cache:
        path = _module_file(facts, dotted)
        found = None
        if path is not None:
            try:
                if path.stat().st_size <= 1 << 20:
                    tree = cst.parse_module(path.read_bytes())
                    found = ModuleFacts(tree, NodeIndex(tree), name=dotted, is_package=path.name == "__init__.py")
                    found.filename = str(path)
            except (OSError, cst.ParserSyntaxError, RecursionError, ValueError):
                found = None
        cache[dotted] = found
    return cache[dotted]
