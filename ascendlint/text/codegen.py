"""libcst's code generation, driven by a loop instead of recursion.

libcst prints a tree by recursion: each node's ``_codegen_impl`` calls ``child._codegen(state)`` for its children,
a few Python frames per level, so one long chain (about 600 implicitly concatenated strings, ``+`` terms or
``elif`` branches; CPython accepts far more) exceeds Python's recursion limit. Here every ``_codegen_impl`` that
prints children is recompiled once, from libcst's own source, as a generator that *yields* each child instead of
calling it (and delegates with ``yield from`` where it calls another class's printer), and ``generate`` drives
those generators with an explicit stack. The tokens, and the order of the
``before_codegen``/``after_codegen`` and ``record_syntactic_position`` calls, are libcst's own; only the Python
stack depth no longer grows with the tree. Where a method cannot be recompiled (no source installed), libcst's
method is used as is: still correct, merely recursive again below that node.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Callable

import libcst as cst

# node class -> (its _codegen_impl as a generator function or as is, whether it is a generator function)
_PRINTERS: dict[type, tuple[Callable, bool]] = {}
_GENERATORS: dict[Callable, Callable | None] = {}  # libcst's function -> its generator version (None: none)
_DELEGATE = "__ascendlint_printer_of__"  # the name recompiled printers call another class's printer through


def generate(root: cst.CSTNode, state) -> None:
    """Exactly ``root._codegen(state)``, without recursion."""
    stack: list[tuple[cst.CSTNode, object]] = []
    node, keywords = root, {}
    while True:
        state.before_codegen(node)
        printer, yields_children = _printer(type(node))
        if yields_children:
            stack.append((node, printer(node, state, **keywords)))
        else:
            printer(node, state, **keywords)
            state.after_codegen(node)
        while stack:
            parent, children = stack[-1]
            request = next(children, None)
            if request is not None:
                node, keywords = request
                break
            stack.pop()
            state.after_codegen(parent)
        else:
            return


def _printer(node_class: type) -> tuple[Callable, bool]:
    found = _PRINTERS.get(node_class)
    if found is None:
        method = node_class._codegen_impl
        generator = _generator_of(method)
        found = _PRINTERS[node_class] = (generator, True) if generator is not None else (method, False)
    return found


def _generator_of(method: Callable) -> Callable | None:
    if method not in _GENERATORS:
        _GENERATORS[method] = _as_generator(method)
    return _GENERATORS[method]


def _printer_of(method: Callable) -> Callable:
    """For ``yield from``: a generator function doing what ``method`` does (``_Base._codegen_impl(self, state)``)."""
    generator = _generator_of(method)
    if generator is not None:
        return generator

    def call(*args, **kwargs):
        method(*args, **kwargs)
        yield from ()

    return call


class _YieldChildren(ast.NodeTransformer):
    """``<expr>._codegen(state, **kw)`` as a statement becomes ``yield <expr>, {**kw}``, and a call of another
    printer, ``<class>._codegen_impl(self, state)``, becomes ``yield from`` its generator version."""

    def __init__(self) -> None:
        self.changed = False

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "_codegen"
            and len(call.args) == 1
            and not any(isinstance(arg, ast.Starred) for arg in call.args)
        ):
            keywords = ast.Dict(
                keys=[None if k.arg is None else ast.Constant(k.arg) for k in call.keywords],
                values=[k.value for k in call.keywords],
            )
            self.changed = True
            return ast.copy_location(ast.Expr(ast.Yield(ast.Tuple([call.func.value, keywords], ast.Load()))), node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "_codegen_impl":
            delegate = ast.Call(ast.Name(_DELEGATE, ast.Load()), [call.func], [])
            self.changed = True
            return ast.copy_location(ast.Expr(ast.YieldFrom(ast.Call(delegate, call.args, call.keywords))), node)
        return self.generic_visit(node)


def _as_generator(method: Callable) -> Callable | None:
    """``method`` recompiled to yield its children, or None when it prints none (or cannot be recompiled)."""
    code = getattr(method, "__code__", None)
    if code is None or code.co_freevars or not {"_codegen", "_codegen_impl"} & set(code.co_names):
        return None  # a leaf printer, or a closure (super() and the like): used as is
    try:
        lines, first_line = inspect.getsourcelines(method)
        filename = inspect.getsourcefile(method) or code.co_filename
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef) or definition.name != method.__name__:
        return None
    definition.decorator_list = []
    transformer = _YieldChildren()
    transformer.visit(definition)
    if not transformer.changed:
        return None
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    compiled = compile(tree, filename, "exec", dont_inherit=True)
    function_code = next(
        (c for c in compiled.co_consts if isinstance(c, types.CodeType) and c.co_name == method.__name__), None
    )
    if function_code is None or function_code.co_freevars:
        return None
    namespace = {**method.__globals__, _DELEGATE: _printer_of}  # a copy: libcst's module is left as it is
    generator = types.FunctionType(function_code, namespace, method.__name__, method.__defaults__)
    generator.__kwdefaults__ = method.__kwdefaults__
    return generator if inspect.isgeneratorfunction(generator) else None
