"""Is a launch reached when the code runs on an Ascend NPU?

A module with any NPU evidence is Ascend code as a whole (a dispatcher, see ``platform``), yet its host code often
keeps the GPU path beside the NPU one and picks between them itself: a module-level ``if is_npu():`` that rebinds
the launcher to a native implementation, a branch that is false on the NPU (``if not _is_npu:``, the ``else`` of
``if is_npu():``, ``if x.is_cuda and ...:``), or an exit taken on the NPU before the launch (``if _is_npu: return
torch_npu.npu_op(...)``, ``if not x.is_cuda: raise``, ``assert x.is_cuda``). A launch on such a path never runs on
the NPU, so what it would do to an Ascend launcher (a grid over 65535, ``num_warps``) is not a finding.

Platform tests are read three-valued under "running on an NPU": ``is_npu``/``_is_npu``/``IS_NPU`` (a name or a
call, ``current_platform.is_npu()`` too), ``x.is_npu`` and ``x.device.type == "npu"`` are true; ``x.is_cuda``,
``is_cuda()`` and ``x.device.type == "cuda"`` are false; ``not``/``and``/``or`` combine them as Kleene logic, and a
name its module or host function assigns once from a test (``_is_npu = is_npu()``, ``use_triton = x.is_cuda and
...``) is that test. Anything else is unknown, and unknown never hides a launch.

One walk over the module's statements, kept on the module facts; a question is then a walk up the asker's
ancestors.
"""

from __future__ import annotations

import re
from collections import ChainMap
from typing import Mapping

import libcst as cst

from .module_facts import ModuleFacts, dotted_name
from .syntax import after_an_exit, block_exits, target_names

_NPU_NAME = re.compile(
    r"_*(?:is_(?:torch_)?npu(?:_device|_available|_platform|_tensor)?|(?:torch_)?npu_(?:is_)?available|has_npu)",
    re.IGNORECASE,
)
_CUDA_CALL = "is_cuda"
# Tests of another accelerator, False on an NPU (`current_platform.is_rocm()`, vLLM's `is_cuda_alike()`).
_OTHER_PLATFORM_CALLS = (_CUDA_CALL, "is_rocm", "is_hip", "is_cuda_alike", "is_xpu")
# Accelerators that are not an NPU: a device test against one of them is False when running on an NPU. The CPU is
# not among them: a tensor can sit on the host of an NPU machine, so a test against "cpu" stays unknown.
_OTHER_DEVICES = ("cuda", "hip", "xpu", "mps", "musa", "mlu", "gpu")
_MAX_DEPTH = 8  # names followed through other names
_REGISTERING = ("register", "custom_op", "library", "impl")  # decorators that keep a reference to the function

# The state of a statement on the NPU: reached whatever the platform, reached because an NPU test chose it, or not
# known (under a loop, a try, a test that is not a platform test).
_ALWAYS, _CHOSEN, _MAYBE = "always", "chosen", "maybe"


def reached_on_npu(facts: ModuleFacts, node: cst.CSTNode) -> bool:
    """False when the host code shows that ``node`` (a launch call, or any node) never runs on an NPU, nor
    anywhere (below an unconditional ``return`` or ``raise``)."""
    if after_an_exit(facts.index, node):
        return False
    unreached = facts.memo("npu_unreached", lambda: _Walk(facts).run())
    if not unreached:
        return True
    if id(node) in unreached:
        return False
    return not any(id(ancestor) in unreached for ancestor in facts.index.ancestors(node))


def npu_value(test: cst.BaseExpression, names: Mapping[str, cst.BaseExpression | None] | None = None,
              depth: int = 0) -> bool | None:
    """The value of ``test`` when running on an NPU: True, False, or None when it is not a platform test.
    ``names`` maps the names in scope to the one value they are assigned (None: bound otherwise)."""
    kind = type(test)
    if kind is cst.Name:
        if _NPU_NAME.fullmatch(test.value):
            return True
        value = names.get(test.value) if names and depth < _MAX_DEPTH else None
        return None if value is None else npu_value(value, names, depth + 1)
    if kind is cst.Call:
        func = test.func
        called = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
        if called is not None and _NPU_NAME.fullmatch(called):
            return True
        if called in _OTHER_PLATFORM_CALLS:
            return False
        if called == "is_available" and type(func) is cst.Attribute:  # `torch.npu.is_available()`
            owner = (dotted_name(func.value) or "").rsplit(".", 1)[-1]
            return True if owner == "npu" else False if owner == "cuda" else None
        if type(func) is cst.Name and names and depth < _MAX_DEPTH:
            if called == "bool" and len(test.args) == 1:  # `bool(a and x.is_cuda)`
                return npu_value(test.args[0].value, names, depth + 1)
            predicate = names.get(_PREDICATE + called)  # a module function that answers a platform test
            return None if predicate is None else npu_value(predicate, names, depth + 1)
        return None
    if kind is cst.Attribute:
        return True if test.attr.value == "is_npu" else False if test.attr.value == "is_cuda" else None
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = npu_value(test.expression, names, depth)
        return None if inner is None else not inner
    if kind is cst.BooleanOperation:
        left, right = npu_value(test.left, names, depth), npu_value(test.right, names, depth)
        if type(test.operator) is cst.And:
            return False if left is False or right is False else True if left and right else None
        return True if left is True or right is True else False if left is False and right is False else None
    if kind is cst.Comparison and len(test.comparisons) == 1:
        return _device_type_test(test)
    return None


def _device_type_test(test: cst.Comparison) -> bool | None:
    """A test of the device a tensor lives on: ``x.device.type == "npu"`` (either side, ``!=`` too), against any
    device name (``device_type == "cuda"``), membership in a literal set of device names
    (``x.device.type in ("cuda", "hip")``) and a device name found in its text (``"npu" in str(x.device)``)."""
    comparison = test.comparisons[0]
    operator = type(comparison.operator)
    if operator in (cst.Equal, cst.NotEqual):
        for one, other in ((test.left, comparison.comparator), (comparison.comparator, test.left)):
            if _names_a_device(one) and type(other) is cst.SimpleString:
                value = _on_npu(other.evaluated_value)
                if value is None:
                    return None
                return value if operator is cst.Equal else not value
        return None
    if operator not in (cst.In, cst.NotIn):
        return None
    left, right = test.left, comparison.comparator
    if _names_a_device(left) and type(right) in (cst.Tuple, cst.List, cst.Set):
        devices = [e.value.evaluated_value for e in right.elements if type(e.value) is cst.SimpleString]
        if len(devices) != len(right.elements) or not devices:
            return None
        values = [_on_npu(device) for device in devices]
        if None in values:
            return None
        value = any(values)
    elif type(left) is cst.SimpleString and _mentions_a_device(right):
        value = _on_npu(left.evaluated_value)
        if value is None:
            return None
    else:
        return None
    return value if operator is cst.In else not value


def _on_npu(device: str) -> bool | None:
    """Whether a device name (``"npu"``, ``"npu:0"``, ``"cuda"``) names the NPU; None for a name not known."""
    kind = device.split(":", 1)[0].strip().lower()
    return True if kind == "npu" else False if kind in _OTHER_DEVICES else None


def _names_a_device(node: cst.BaseExpression) -> bool:
    """``x.device.type``, ``device``, ``self.device_type``: an expression whose value is a device or its type."""
    if type(node) is cst.Attribute:
        return node.attr.value == "type" or "device" in node.attr.value.lower()
    return type(node) is cst.Name and "device" in node.value.lower()


def _mentions_a_device(node: cst.BaseExpression) -> bool:
    """A device, its type, or its text (``str(x.device)``)."""
    if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "str" and len(node.args) == 1:
        return _names_a_device(node.args[0].value)
    return _names_a_device(node)


class _Walk:
    """Marks the statements, branches and functions that the host code never runs on an NPU."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.module = facts.module
        self.unreached: set[int] = set()
        names = _scope_names(facts.module.body)
        self.names: Mapping[str, cst.BaseExpression | None] = ChainMap(_predicates(facts.module.body, names), names)

    def run(self) -> set[int]:
        self._block(self.module.body, _ALWAYS, {})
        return self.unreached

    # -- statements ---------------------------------------------------------------------------------------------
    def _block(self, statements, state: str, defs: dict[str, cst.FunctionDef] | None) -> None:
        """Walk one block. ``defs`` (module scope only) holds the module's functions seen so far by name, which a
        binding chosen by an NPU test replaces."""
        for position, statement in enumerate(statements):
            if self._walk(statement, state, defs):  # an exit taken on the NPU: the rest of the block is not run
                for rest in statements[position + 1:]:
                    self.unreached.add(id(rest))
                return

    def _body(self, body: cst.BaseSuite, state: str, defs) -> None:
        if type(body) is cst.SimpleStatementSuite:
            self._smalls(body.body, state, defs)
        else:
            self._block(body.body, state, defs)

    def _walk(self, statement: cst.CSTNode, state: str, defs) -> bool:
        """Walk one statement; True when it always leaves the block on an NPU."""
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            return self._smalls(statement.body, state, defs)
        if kind is cst.If:
            return self._if(statement, state, defs)
        if kind is cst.FunctionDef:
            if defs is not None:
                self._rebind(statement.name.value, state, defs)
                if _registers(statement):  # the registry keeps the function, whatever the name is rebound to
                    defs.pop(statement.name.value, None)
                else:
                    defs[statement.name.value] = statement
            outer = self.names
            self.names = ChainMap(_scope_names(_statements(statement.body), statement.params), outer)
            self._body(statement.body, _MAYBE, None)
            self.names = outer
        elif kind is cst.ClassDef:
            self._body(statement.body, _MAYBE, None)
        elif kind is cst.With:
            self._body(statement.body, state, defs)
        elif kind in (cst.For, cst.While):
            self._body(statement.body, _MAYBE, defs)
            if statement.orelse is not None:
                self._body(statement.orelse.body, _MAYBE, defs)
        elif kind in (cst.Try, cst.TryStar):
            self._body(statement.body, _MAYBE, defs)
            for handler in statement.handlers:
                self._body(handler.body, _MAYBE, defs)
            for part in (statement.orelse, statement.finalbody):
                if part is not None:
                    self._body(part.body, _MAYBE, defs)
        return False

    def _smalls(self, smalls, state: str, defs) -> bool:
        for small in smalls:
            if type(small) is cst.Assert and npu_value(small.test, self.names) is False:
                return True
            if defs is not None:
                self._bindings(small, state, defs)
        return False

    def _if(self, statement: cst.If, state: str, defs) -> bool:
        value = npu_value(statement.test, self.names)
        if value is False:
            self.unreached.add(id(statement.body))
        else:
            self._body(statement.body, _CHOSEN if value and state != _MAYBE else _MAYBE, defs)
        orelse = statement.orelse
        if orelse is None:
            return value is True and block_exits(statement.body)
        if value is True:
            self.unreached.add(id(orelse))
            return block_exits(statement.body)
        else_state = _CHOSEN if value is False and state != _MAYBE else _MAYBE
        if type(orelse) is cst.If:
            return self._if(orelse, else_state, defs) and value is False
        self._body(orelse.body, else_state, defs)
        return value is False and block_exits(orelse.body)

    # -- module-level rebinding ---------------------------------------------------------------------------------
    def _bindings(self, small: cst.BaseSmallStatement, state: str, defs: dict) -> None:
        if state != _CHOSEN:
            return
        for name in _bound_names(small):
            self._rebind(name, state, defs)

    def _rebind(self, name: str, state: str, defs: dict) -> None:
        """A module function rebound where an NPU test chose the binding is not what runs on the NPU."""
        if state == _CHOSEN and name in defs:
            self.unreached.add(id(defs.pop(name)))


def _registers(function: cst.FunctionDef) -> bool:
    """A decorator that hands the function to a registry (``@torch.library.custom_op(...)``,
    ``@register_op``, ``@op.impl("npu")``)."""
    for decorator in function.decorators:
        node = decorator.decorator
        node = node.func if type(node) is cst.Call else node
        dotted = (dotted_name(node) or "").lower()
        if any(word in dotted for word in _REGISTERING):
            return True
    return False


def _bound_names(small: cst.BaseSmallStatement) -> list[str]:
    kind = type(small)
    if kind is cst.Assign:
        return [t.target.value for t in small.targets if type(t.target) is cst.Name]
    if kind is cst.AnnAssign and small.value is not None and type(small.target) is cst.Name:
        return [small.target.value]
    if kind in (cst.Import, cst.ImportFrom) and type(small.names) is not cst.ImportStar:
        found = []
        for alias in small.names:
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                found.append(alias.asname.name.value)
            elif type(alias.name) is cst.Name:
                found.append(alias.name.value)
        return found
    return []


def _statements(body: cst.BaseSuite) -> list:
    return [body] if type(body) is cst.SimpleStatementSuite else list(body.body)


# The key under which a module function that answers a platform test is kept among the names: a `(` never starts a
# Python name, so the key cannot hide one.
_PREDICATE = "("
_CUDA_ONLY = cst.Attribute(value=cst.Name("tensor"), attr=cst.Name("is_cuda"))  # a test that is False on an NPU


def _predicates(statements, module_names) -> dict[str, cst.BaseExpression]:
    """The module's functions whose every ``return`` is False on an NPU (``return False`` after an availability
    check, ``return bool(x.is_cuda and ...)``): a call to one of them is that test (``if not _can_use_triton(x):``)."""
    found: dict[str, cst.BaseExpression] = {}
    for statement in statements:
        if type(statement) is not cst.FunctionDef or statement.asynchronous is not None:
            continue
        returns = _returns(statement.body)
        if not returns:
            continue
        scope = ChainMap(_scope_names(_statements(statement.body), statement.params), module_names)
        if all(value is not None and (_is_false(value) or npu_value(value, scope) is False) for value in returns):
            found[_PREDICATE + statement.name.value] = _CUDA_ONLY
    return found


def _returns(body: cst.BaseSuite) -> list[cst.BaseExpression | None]:
    """The values of the ``return`` statements of a function body, not of the functions or classes nested in it."""
    values: list[cst.BaseExpression | None] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Return:
            values.append(node.value)
        elif type(node) in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        elif not isinstance(node, cst.BaseExpression):
            stack.extend(node.children)
    return values


def _is_false(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Name and value.value == "False"


def _scope_names(statements, params: cst.Parameters | None = None) -> dict[str, cst.BaseExpression | None]:
    """The names a module or a function binds in its own scope (not in nested functions or classes): the value of
    a name assigned once, None for a name bound several times or otherwise (a parameter, a loop target), so that
    it hides a name of an outer scope."""
    values: dict[str, cst.BaseExpression | None] = {}
    counts: dict[str, int] = {}

    def bind(name: str, value: cst.BaseExpression | None) -> None:
        counts[name] = counts.get(name, 0) + 1
        values[name] = value if counts[name] == 1 else None

    if params is not None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            bind(param.name.value, None)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                bind(star.name.value, None)
    stack = list(reversed(statements))
    while stack:
        statement = stack.pop()
        kind = type(statement)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            for small in statement.body:
                single = type(small) is cst.Assign and len(small.targets) == 1 or type(small) is cst.AnnAssign
                for name in _bound_names(small):
                    bind(name, small.value if single else None)
                if type(small) is cst.Assign:
                    for target in small.targets:
                        if type(target.target) in (cst.Tuple, cst.List):
                            for name in target_names(target.target):
                                bind(name, None)
                elif type(small) is cst.AugAssign and type(small.target) is cst.Name:
                    bind(small.target.value, None)
            continue
        if kind in (cst.FunctionDef, cst.ClassDef):
            bind(statement.name.value, None)
            continue
        if kind is cst.For:
            for name in target_names(statement.target):
                bind(name, None)
        elif kind is cst.With:
            for item in statement.items:
                if item.asname is not None:
                    for name in target_names(item.asname.name):
                        bind(name, None)
        elif kind not in (cst.If, cst.Else, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler, cst.Finally,
                          cst.ExceptStarHandler):
            continue
        parts = [getattr(statement, "finalbody", None), getattr(statement, "orelse", None),
                 *reversed(getattr(statement, "handlers", ())), ]
        stack.extend(part for part in parts if part is not None)
        body = statement.body
        stack.extend([body] if type(body) is cst.SimpleStatementSuite else reversed(body.body))
    return values
