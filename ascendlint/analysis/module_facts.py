"""Module facts every rule shares, computed once per file: import aliases, kernels and launch sites.

Qualified names are normalised so rules compare short, stable strings whatever the import form:
``triton.language.X`` -> ``tl.X``, ``triton_dist.language.X`` -> ``dl.X``, ``...libshmem_device.X`` -> ``shmem.X``,
``triton.X`` stays ``triton.X``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, TypeVar

import libcst as cst

from .module_names import resolve_relative
from .syntax import after_an_exit, target_names
from .walk import NodeIndex
from .literals import integer_value  # noqa: F401 - also read from here

T = TypeVar("T")

_PREFIXES = (
    ("triton.language.extra.cann.extension", "cann"),
    ("triton.language", "tl"),
    ("triton_dist.language", "dl"),
)
# Names projects re-export from their own helper modules (``from vllm.triton_utils import tl, triton``).
_REEXPORTED = {"triton": "triton", "tl": "triton.language", "dl": "triton_dist.language"}
_JIT_DECORATORS = ("triton.jit", "triton_dist.jit")  # newer Triton-distributed code decorates with its own jit
_CANONICAL_FULL = {
    "tl": "triton.language",
    "dl": "triton_dist.language",
    "cann": "triton.language.extra.cann.extension",
    "shmem": "triton_dist.language.extra.libshmem_device",
}


def normalise(qualified: str) -> str:
    parts = qualified.split(".")
    if "libshmem_device" in parts:
        rest = parts[parts.index("libshmem_device") + 1 :]
        return ".".join(["shmem", *rest])
    for prefix, short in _PREFIXES:
        if qualified == prefix or qualified.startswith(prefix + "."):
            return short + qualified[len(prefix) :]
    return qualified


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _compile_time_names(kernel: "Kernel", facts: "ModuleFacts") -> set[str]:
    """Names that hold constexprs throughout ``kernel``: constexpr parameters never rebound, annotated constexpr
    locals and ``static_range`` variables (bound by nothing else)."""
    plain: set[str] = set()
    special: set[str] = set()
    for node in facts.index.subtree(kernel.node):
        if type(node) is cst.Assign:
            for target in node.targets:
                plain.update(target_names(target.target))
        elif type(node) is cst.AugAssign:
            plain.update(target_names(node.target))
        elif type(node) is cst.AnnAssign:
            annotation = node.annotation.annotation
            if facts.qualname(annotation) == "tl.constexpr":
                special.update(target_names(node.target))
            else:
                plain.update(target_names(node.target))
        elif type(node) is cst.For:
            iterable = node.iter
            is_static = type(iterable) is cst.Call and facts.qualname(iterable.func) == "tl.static_range"
            (special if is_static else plain).update(target_names(node.target))
    names = {name for name in kernel.constexpr if name not in kernel.do_not_specialize} | special
    return names - plain


def _is_compile_time_expression(expr: cst.BaseExpression, names: set[str], facts: "ModuleFacts") -> bool:
    """Literals, the given constexpr names, module constants, and arithmetic or comparisons of them."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) in (cst.Integer, cst.Float, cst.SimpleString):
            continue
        if type(node) is cst.Name:
            if node.value in names or node.value in ("True", "False", "None") or node.value in facts.module_constants:
                continue
            return False
        if type(node) is cst.BinaryOperation:
            stack += [node.left, node.right]
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.Comparison:
            stack += [node.left, *(c.comparator for c in node.comparisons)]
        elif type(node) is cst.BooleanOperation:
            stack += [node.left, node.right]
        elif type(node) is cst.Attribute and facts.qualname(node) is not None:
            continue  # tl.float32 and the like
        elif type(node) is cst.Call and facts.qualname(node.func) == "tl.constexpr":
            continue
        else:
            return False
    return True


def _module_name(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


@dataclass
class Kernel:
    """A ``triton.jit`` function (kernel or helper)."""

    node: cst.FunctionDef
    name: str
    params: list[str]
    constexpr: set[str]
    do_not_specialize: set[str]
    defaults: dict[str, cst.BaseExpression]
    annotations: dict[str, cst.BaseExpression]
    jit_decorator: cst.Decorator
    autotune: cst.Call | None = None
    heuristics: cst.Call | None = None

    def is_constexpr_param(self, name: str) -> bool:
        return name in self.constexpr and name not in self.do_not_specialize


@dataclass
class Launch:
    """``kernel[grid](args...)``: the call, the launched expression, the grid and, when known, the kernel."""

    call: cst.Call
    target: cst.BaseExpression
    grid: cst.BaseExpression
    kernel: Kernel | None
    keywords: dict[str, cst.Arg] = field(default_factory=dict)


class ModuleFacts:
    """Facts about one module; each is computed on first use, so rules pay only for what they ask."""

    def __init__(
        self, module: cst.Module, index: NodeIndex, name: str | None = None, is_package: bool = False
    ) -> None:
        self.module = module
        self.index = index
        self.name = name  # the dotted module name, when the file sits in the linted tree
        self.is_package = is_package
        self.aliases: dict[str, str] = {}
        self.imported_names: set[str] = set()
        self.imported_symbols: dict[str, str] = {}  # local name -> absolute ``module.name`` (relative resolved)
        self.imported_helpers: dict = {}  # local name -> HelperSummary of a jit helper of another linted module
        self.platform = None  # analysis.platform.Platform: set by the engine before any rule runs
        self.filename: str | None = None  # the path the module was read from, set by the engine
        self.tree_path: str | None = None  # the same path below the linted tree's root, set by the engine
        # whether another linted module imports from this one (None: the engine does not know the tree)
        self.imported_in_project: bool | None = None
        self.helpers_of_importers: frozenset[str] = frozenset()  # jit functions other modules only call
        self._qualnames: dict[int, str | None] = {}
        for node in index.of_type(cst.Import, cst.ImportFrom):
            self._record_import(node)

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """The per-module value an analysis keeps under ``name`` (``"grid_analysis"``, ``"kernel_analyses"``):
        ``compute()`` runs on first use, whichever rule asks first; ``release()`` forgets it."""
        memos = self.__dict__.get("_memos")
        if memos is None:
            memos = self.__dict__["_memos"] = {}
        try:
            return memos[name]
        except KeyError:
            value = memos[name] = compute()
            return value

    def release(self) -> None:
        """Forget everything, once the file's findings are known. The analyses keep their results on the facts
        (``memo``) and refer back to them: left as they are, those reference cycles keep the file's whole tree
        alive until the cyclic collector runs, which then walks all of it."""
        self.__dict__.clear()

    # -- names -------------------------------------------------------------------------------------------------
    def _record_import(self, node: cst.Import | cst.ImportFrom) -> None:
        if type(node) is cst.Import:
            for alias in node.names:
                full = _module_name(alias.name)
                if alias.asname is not None and type(alias.asname.name) is cst.Name:
                    local = alias.asname.name.value
                    self.aliases[local] = full
                else:
                    local = full.split(".")[0]
                    self.aliases.setdefault(local, local)
                self.imported_names.add(local)
            return
        if type(node.names) is cst.ImportStar:
            return
        base = _module_name(node.module) if node.module is not None else ""
        from_triton = not node.relative and (base == "triton" or base.startswith("triton."))
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                local = alias.asname.name.value
            reexported = None if from_triton else _REEXPORTED.get(name)
            if reexported is not None:
                self.aliases[local] = reexported
            elif not node.relative:
                self.aliases[local] = f"{base}.{name}"
            self.imported_names.add(local)
            source = self._absolute(base, len(node.relative))
            if source is not None and not from_triton:
                self.imported_symbols[local] = f"{source}.{name}"

    def _absolute(self, base: str, level: int) -> str | None:
        if not level:
            return base or None
        if not self.name:
            return None
        return resolve_relative(self.name, level, base, self.is_package) or None

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """The normalised qualified name an expression refers to through imports, or None (memoised per node:
        every rule asks about the same calls)."""
        cache = self._qualnames
        key = id(node)
        try:
            return cache[key]
        except KeyError:
            pass
        found = None
        dotted = dotted_name(node) if type(node) is cst.Name or type(node) is cst.Attribute else None
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            full = self.aliases.get(head)
            if full is not None:
                found = normalise(f"{full}.{rest}" if rest else full)
        cache[key] = found
        return found

    def local_alias(self, qualified: str, default: str) -> str:
        """How this module spells a normalised module name (``tl``, ``shmem``...), e.g. for fixes."""
        found = self.module_alias(qualified)
        if found is not None:
            return found
        target = _CANONICAL_FULL.get(qualified, qualified)
        for local, full in self.aliases.items():
            if target.startswith(full + "."):
                return local + target[len(full) :]
        return default

    def module_alias(self, qualified: str) -> str | None:
        """The local name bound to the module a normalised name stands for, or None when none is imported.

        A module imported under the short name itself is another module: ``import shmem as ash`` is the host-side
        shmem package, not ``triton_dist.language.extra.libshmem_device``.
        """
        for local, full in self.aliases.items():
            if normalise(full) == qualified and not (qualified in _CANONICAL_FULL and full == qualified):
                return local
        return None

    def is_call_to(self, node: cst.CSTNode, *qualified: str) -> bool:
        return type(node) is cst.Call and self.qualname(node.func) in qualified

    # -- kernels -----------------------------------------------------------------------------------------------
    @cached_property
    def kernels(self) -> dict[str, Kernel]:
        found: dict[str, Kernel] = {}
        for node in self.index.of_type(cst.FunctionDef):
            kernel = self._kernel_from(node)
            if kernel is not None:
                found[kernel.name] = kernel
        return found

    @cached_property
    def helpers(self) -> set[str]:
        """Kernels used only as jit helpers: called from another kernel of this module and never launched here.
        Their parameters take whatever the calling kernel passes (tensors, usually), not host arguments."""
        called = {call.func.value for calls in self.kernel_calls.values() for call in calls}
        launched = {launch.kernel.name for launch in self.launches if launch.kernel is not None}
        return called - launched

    @cached_property
    def kernel_calls(self) -> dict[str, list[cst.Call]]:
        """For each kernel, its calls to other kernels of this module (``helper(x, BT)``), from one walk."""
        kernels = self.kernels
        found: dict[str, list[cst.Call]] = {}
        for call in self.index.of_type(cst.Call):
            func = call.func
            if type(func) is not cst.Name or func.value not in kernels:
                continue
            caller = self.enclosing_kernel(call)
            if caller is not None and caller.name != func.value:
                found.setdefault(caller.name, []).append(call)
        return found

    @cached_property
    def module_constants(self) -> dict[str, int]:
        """Module-level integer constants (``BLOCK = 128``, ``X: tl.constexpr = 4``, ``X = tl.constexpr(4)``)."""
        found: dict[str, int] = {}
        for statement in self.module.body:
            if type(statement) is not cst.SimpleStatementLine:
                continue
            for small in statement.body:
                if type(small) is cst.Assign and len(small.targets) == 1:
                    target, value = small.targets[0].target, small.value
                elif type(small) is cst.AnnAssign and small.value is not None:
                    target, value = small.target, small.value
                else:
                    continue
                if type(value) is cst.Call and self.qualname(value.func) == "tl.constexpr" and value.args:
                    value = value.args[0].value
                if type(target) is cst.Name and type(value) is cst.Integer:
                    found[target.value] = integer_value(value)
        return found

    def helper_constexpr_params(self, helper: Kernel) -> set[str]:
        """Parameters of jit helper ``helper`` that every call from a kernel of this module passes a constexpr:
        a literal, a constexpr parameter or annotated constexpr local of the caller, a ``static_range`` variable,
        a module constant, arithmetic on those, or (when the argument is left out) a literal default.

        Triton specialises a helper on every non-tensor argument, so such a parameter is a constexpr inside it."""
        if helper.name not in self.helpers:
            return set()
        return self._helper_constexpr_params.get(helper.name, set())

    def helper_tensor_params(self, helper: Kernel) -> set[str]:
        """Parameters of jit helper ``helper`` that every call from a kernel of this module passes a runtime value:
        a tensor when the helper runs, whatever the parameter's annotation says (one call passing a constexpr
        would make it a constexpr in that call's specialisation)."""
        if helper.name not in self.helpers:
            return set()
        return {name for name, (_, tensor) in self._helper_arguments.get(helper.name, {}).items() if tensor}

    @cached_property
    def _helper_constexpr_params(self) -> dict[str, set[str]]:
        return {helper: {name for name, (always, _) in seen.items() if always}
                for helper, seen in self._helper_arguments.items()}

    @cached_property
    def _helper_arguments(self) -> dict[str, dict[str, tuple[bool, bool]]]:
        """helper -> parameter -> (every call passes a compile-time value, every call passes a runtime one)."""
        kernels = self.kernels
        passed: dict[str, dict[str, tuple[bool, bool]]] = {}
        for caller_name, calls in self.kernel_calls.items():
            caller = kernels[caller_name]
            compile_time = _compile_time_names(caller, self)
            for node in calls:
                helper = kernels[node.func.value]
                seen = passed.setdefault(helper.name, {})
                given: dict[str, cst.BaseExpression] = {}
                positional = [a for a in node.args if a.keyword is None]
                if any(a.star for a in node.args):
                    given = {name: None for name in helper.params}  # *args: nothing is known
                else:
                    for name, arg in zip(helper.params, positional):
                        given[name] = arg.value
                    for arg in node.args:
                        if arg.keyword is not None:
                            given[arg.keyword.value] = arg.value
                for name in helper.params:
                    expr = given.get(name, helper.defaults.get(name))
                    constant = expr is not None and _is_compile_time_expression(expr, compile_time, self)
                    always, tensor = seen.get(name, (True, True))
                    seen[name] = (always and constant, tensor and given.get(name) is not None and not constant)
        return passed

    def kernel_nodes(self) -> dict[int, Kernel]:
        return {id(k.node): k for k in self.kernels.values()}

    def enclosing_kernel(self, node: cst.CSTNode) -> Kernel | None:
        by_node = self._kernel_by_node
        for ancestor in self.index.ancestors(node):
            if type(ancestor) is cst.FunctionDef:
                return by_node.get(id(ancestor))
        return None

    @cached_property
    def _kernel_by_node(self) -> dict[int, Kernel]:
        return self.kernel_nodes()

    def _kernel_from(self, node: cst.FunctionDef) -> Kernel | None:
        jit = jit_call = autotune = heuristics = None
        for decorator in node.decorators:
            expr = decorator.decorator
            call = expr if type(expr) is cst.Call else None
            name = self.qualname(call.func if call else expr)
            if name in _JIT_DECORATORS:
                jit = decorator
                jit_call = call
            elif name == "triton.autotune" and call is not None:
                autotune = call
            elif name == "triton.heuristics" and call is not None:
                heuristics = call
        if jit is None:
            return None
        params = node.params
        ordered = [*params.posonly_params, *params.params, *params.kwonly_params]
        names = [p.name.value for p in ordered]
        constexpr, defaults, annotations = set(), {}, {}
        for p in ordered:
            if p.default is not None:
                defaults[p.name.value] = p.default
            if p.annotation is not None:
                annotation = p.annotation.annotation
                annotations[p.name.value] = annotation
                if self.qualname(annotation) == "tl.constexpr" or (
                    type(annotation) is cst.SimpleString and "constexpr" in annotation.value
                ):
                    constexpr.add(p.name.value)
        return Kernel(
            node=node,
            name=node.name.value,
            params=names,
            constexpr=constexpr,
            do_not_specialize=self._do_not_specialize(jit_call, names),
            defaults=defaults,
            annotations=annotations,
            jit_decorator=jit,
            autotune=autotune,
            heuristics=heuristics,
        )

    @staticmethod
    def _do_not_specialize(call: cst.Call | None, params: list[str]) -> set[str]:
        names: set[str] = set()
        if call is None:
            return names
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value != "do_not_specialize":
                continue
            if type(arg.value) not in (cst.List, cst.Tuple):
                continue
            for element in arg.value.elements:
                value = element.value
                if type(value) is cst.SimpleString:
                    names.add(value.evaluated_value)
                elif type(value) is cst.Integer and integer_value(value) < len(params):
                    names.add(params[integer_value(value)])
        return names

    # -- launches ----------------------------------------------------------------------------------------------
    @cached_property
    def launches(self) -> list[Launch]:
        return self._launch_calls[0]

    @cached_property
    def _launch_calls(self) -> tuple[list[Launch], list[Kernel]]:
        """The launches, and the kernels of the launch calls below an unconditional exit (not launches)."""
        found = []
        unreached: list[Kernel] = []
        kernels = self.kernels
        for call in self.index.of_type(cst.Call):
            func = call.func
            if type(func) is not cst.Subscript or any(type(e.slice) is not cst.Index for e in func.slice):
                continue
            grid = _grid_of(func)
            target = func.value
            dotted = dotted_name(target)
            if dotted is None:
                continue
            kernel = kernels.get(dotted)
            if kernel is None and type(target) is cst.Name:
                kernel = self._kernel_bound_to(target, call)
            if kernel is None and dotted.split(".")[0] not in self.imported_names:
                continue
            if after_an_exit(self.index, call):
                if kernel is not None:
                    unreached.append(kernel)
                continue  # below an unconditional return or raise: never runs, not a launch
            keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
            found.append(Launch(call=call, target=target, grid=grid, kernel=kernel, keywords=keywords))
        return found, unreached

    @cached_property
    def kernels_never_run(self) -> set[int]:
        """``id`` of the kernels every launch of which in this module sits below an unconditional ``return`` or
        ``raise`` (``raise NotImplementedError(...)`` above a path not finished): the module has a launcher for
        them, and it never gets there. What such a kernel would do at run time is not a finding."""
        launched = {id(launch.kernel.node) for launch in self.launches if launch.kernel is not None}
        return {id(kernel.node) for kernel in self._launch_calls[1]} - launched

    def _kernel_bound_to(self, name: cst.Name, call: cst.Call) -> Kernel | None:
        """The kernel a local name launches when the function binds it to one of several kernels (``fn = k32 if
        BT == 32 else k64``, ``fn = k32`` in one branch and ``fn = k64`` in another): the first one it can be. The
        variants of such a dispatch take the same arguments, so the launch is read against the first."""
        scope = next((a for a in self.index.ancestors(call) if type(a) is cst.FunctionDef), None)
        if scope is None:
            return None
        for assign in self.index.of_type(cst.Assign):
            if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name:
                continue
            if assign.targets[0].target.value != name.value:
                continue
            if next((a for a in self.index.ancestors(assign) if type(a) is cst.FunctionDef), None) is not scope:
                continue
            found = self._kernel_of_choice(assign.value)
            if found is not None:
                return found
        return None

    def _kernel_of_choice(self, value: cst.BaseExpression) -> Kernel | None:
        if type(value) is cst.IfExp:
            return self._kernel_of_choice(value.body) or self._kernel_of_choice(value.orelse)
        dotted = dotted_name(value)
        return self.kernels.get(dotted) if dotted is not None else None


def _grid_of(launcher: cst.Subscript) -> cst.BaseExpression:
    """The grid of ``kernel[grid](...)``. ``kernel[n, 1, 1]`` spells a tuple without its parentheses: its axes are
    read as one ``(n, 1, 1)``, a tuple made of the launch's own axis nodes (so each axis keeps its place in the
    module)."""
    if len(launcher.slice) == 1:
        return launcher.slice[0].slice.value
    return cst.Tuple(elements=[cst.Element(value=element.slice.value) for element in launcher.slice])
