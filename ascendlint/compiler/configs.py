"""The compile requests a module states: every jit kernel at each configuration the code gives (each autotune
config, the literal constexprs and launch options of each launch, the kernel's defaults), with argument kinds and
pointer dtypes read from the kernel and its host code, as triton-ascend's launcher would specialise them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ..analysis import ub
from ..analysis.host_resolver import host_resolver
from ..analysis.launch_arguments import launch_argument, launches_of
from ..analysis.literals import integer_value
from ..analysis.module_facts import Kernel, Launch, ModuleFacts, dotted_name
from ..analysis.pointer_types import _element_type, integer_pointers, pointer_params
from ..analysis.walk import iter_nodes
from . import kernel_text
from .jobs import LAUNCH_OPTIONS, CompileJob

_FLOAT_NAMES = re.compile(r"^(eps|epsilon|\w*scale\w*|alpha|beta|temperature|softcap|\w*_eps|momentum|p|dropout\w*)$",
                          re.IGNORECASE)
_walk = iter_nodes


@dataclass
class Request:
    """One compile the code states, and where a verdict about it goes."""

    kernel: Kernel
    label: str  # "config 2 line 12", "launch line 40"
    anchor: cst.CSTNode
    job: CompileJob | None  # None: not compilable here (``reason`` says why)
    values: dict[str, object] = field(default_factory=dict)  # constexprs as compiled
    assumed: dict[str, str] = field(default_factory=dict)  # pointer parameter -> dtype assumed (host said nothing)
    runtime: str | None = None  # a constexpr sized at run time (swept by the rule), or None
    reason: str = ""
    anchors: dict[str, cst.CSTNode] = field(default_factory=dict)  # per constexpr: the argument that sets it
    launch: Launch | None = None  # the launch the configuration comes from (its own, or the autotuned kernel's)


def _literal_number(expr: cst.BaseExpression | None):
    if type(expr) is cst.Integer:
        value = integer_value(expr)
        return value if abs(value) < 2**64 else None  # no argument of a launch is wider
    if type(expr) is cst.Float:
        return float(expr.value.replace("_", ""))
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = _literal_number(expr.expression)
        return None if inner is None else -inner
    return None


def _option_value(expr: cst.BaseExpression):
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value
    return _literal_number(expr)


def _stated_options(call: cst.Call | None) -> dict:
    """Launch options a launch (keywords) or a ``triton.Config`` (keywords or its dict) states."""
    found: dict = {}
    if call is None or type(call) is not cst.Call:
        return found
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in LAUNCH_OPTIONS:
            found[arg.keyword.value] = _option_value(arg.value)
        if arg.keyword is None and type(arg.value) is cst.Dict:
            for item in arg.value.elements:
                if type(item) is cst.DictElement and type(item.key) is cst.SimpleString:
                    key = item.key.evaluated_value
                    if key in LAUNCH_OPTIONS:
                        found[key] = _option_value(item.value)
    return found


def _constexpr_guess(argument: cst.BaseExpression | None):
    """A constexpr the host computes as a flag (``bias is not None``, ``x.requires_grad``): compiled as True, the
    branch that holds more code."""
    if argument is None:
        return None
    if type(argument) is cst.Comparison or type(argument) is cst.BooleanOperation:
        return True
    if type(argument) is cst.Name and argument.value in ("True", "False"):
        return argument.value == "True"
    return None


def requests(facts: ModuleFacts, target: str, pointer_dtype: str, declared: dict | None = None) -> list[Request]:
    """Every compile the module states, in source order, then those the configuration declares per kernel name
    (``{kernel: [{constexpr or launch option or pointer parameter: value or dtype}, ...]}``)."""
    found: list[Request] = []
    helpers = getattr(facts, "helpers", set()) or set()
    for kernel in facts.kernels.values():
        if kernel.name in helpers or _device_function(facts, kernel):
            continue
        try:
            text = kernel_text.rebuild(facts, kernel)
        except RecursionError:  # an expression nested deeper than the printer's stack: no text to compile
            found.append(Request(kernel, f"kernel line {ub.line_of(facts, kernel.node)}", kernel.node.name, None,
                                 reason="the kernel's text is nested too deep to rebuild"))
            continue
        except kernel_text.NotRebuilt as refused:  # it would evaluate more of the module than literals
            found.append(Request(kernel, f"kernel line {ub.line_of(facts, kernel.node)}", kernel.node.name, None,
                                 reason=f"not rebuilt: {refused}"))
            continue
        pointers = pointer_params(facts, kernel)
        kernel_configs = ub.configs(facts, kernel)
        if not kernel_configs and not kernel.constexpr:
            kernel_configs = [ub.Config(f"defaults line {ub.line_of(facts, kernel.node)}", kernel.node.name, {})]
        extents = ub.tile_extent_params(facts, kernel)
        for config in kernel_configs:
            found.append(_request(facts, kernel, config, text, pointers, target, pointer_dtype, extents))
        for number, stated in enumerate((declared or {}).get(kernel.name, []), 1):
            found.append(_declared(facts, kernel, number, dict(stated), text, pointers, target, pointer_dtype,
                                   extents))
    return found


def _declared(facts, kernel, number, stated, text, pointers, target, pointer_dtype, extents) -> Request:
    """A configuration the linter's configuration file declares for ``kernel``."""
    values = {k: v for k, v in stated.items() if k in kernel.constexpr}
    label = f"declared config {number} line {ub.line_of(facts, kernel.node)}"
    config = ub.Config(label, kernel.node.name, values)
    request = _request(facts, kernel, config, text, pointers, target, pointer_dtype, extents)
    if request.job is not None:
        for param in request.job.params:
            dtype = stated.get(param["name"])
            if param["kind"] == "pointer" and isinstance(dtype, str):
                param["dtype"] = dtype
                request.assumed.pop(param["name"], None)
        request.job.options.update({k: v for k, v in stated.items() if k in LAUNCH_OPTIONS})
    return request


def _host_default(facts: ModuleFacts, argument: cst.BaseExpression | None, site: cst.CSTNode):
    """The literal default of the host function's parameter that the launch passes on unchanged
    (``def scaled_add(x, scale: int = 2): kernel[grid](..., SCALE=scale)``)."""
    if type(argument) is not cst.Name:
        return None
    default = host_resolver(facts).parameter_default(argument.value, site)
    value = _option_value(default) if default is not None else None
    return value if isinstance(value, (bool, int, float, str)) else None


SMALL_DIMENSION = 256  # the largest head dimension in use: a tile sized by one is compiled at this size


def _model_dimension(argument: cst.BaseExpression | None) -> bool:
    """The host passes a small model dimension (``D=D``, ``HEAD_DIM=head_dim``), as ASC304 names them."""
    names = {n.value for n in _walk(argument) if type(n) is cst.Name} if argument is not None else set()
    names -= {"triton", "next_power_of_2", "max", "min", "int"}
    return bool(names) and all(ub._FITS.match(n) for n in names)


def _host_value(facts: ModuleFacts, argument: cst.BaseExpression | None, site: cst.CSTNode):
    """The expression a launch argument stands for, through the host names it is bound to (four at most); None
    when a name's value is not known here (a parameter of the host function, a name bound in a branch)."""
    resolver = host_resolver(facts)
    for _ in range(4):
        if type(argument) is not cst.Name:
            break
        status, value = resolver.lookup(argument.value, site)
        if status != "value" or not isinstance(value, cst.BaseExpression) or value is argument:
            return None
        argument = value
    return argument


def _sized_from_data(facts: ModuleFacts, argument: cst.BaseExpression, site: cst.CSTNode) -> bool:
    """The host computes the size from the data (``next_power_of_2(n)``, ``x.shape[-1]``, ``x.numel()``), directly
    or through names it binds; a bare parameter of the host function is the caller's choice, not stated here."""
    argument = _host_value(facts, argument, site)
    return argument is not None and any(type(node) in (cst.Call, cst.Subscript, cst.Attribute)
                                        for node in _walk(argument))


def _cap(facts: ModuleFacts, argument: cst.BaseExpression | None, site: cst.CSTNode) -> int | None:
    """The constant bound of ``min(next_power_of_2(n), 4096)`` (the bound a literal or a module constant, the
    ``min`` written at the launch or bound to the name it passes): the largest size the host can pass."""
    resolver = host_resolver(facts)
    argument = _returned(facts, _host_value(facts, argument, site))
    if type(argument) is cst.Call and (dotted_name(argument.func) or "") == "min":
        folded = [ub.fold(resolver, a.value, site) for a in argument.args]
        bounds = [x for x in folded if isinstance(x, int)]
        if bounds and len(bounds) < len(folded):
            return min(bounds)
    return None


def _returned(facts: ModuleFacts, argument: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """For a call of a host function of this module whose body ends in ``return EXPR``, ``EXPR`` (a helper that
    computes the block size: ``return min(triton.next_power_of_2(n), MAX_BLOCK)``); else the argument."""
    if type(argument) is not cst.Call or type(argument.func) is not cst.Name:
        return argument
    for statement in facts.module.body:
        if type(statement) is cst.FunctionDef and statement.name.value == argument.func.value:
            last = statement.body.body[-1] if statement.body.body else None
            if type(last) is cst.SimpleStatementLine and type(last.body[0]) is cst.Return and last.body[0].value:
                return last.body[0].value
    return argument


def _device_function(facts: ModuleFacts, kernel: Kernel) -> bool:
    """A jit function never launched here that returns a value, or that the modules importing it only call: a
    helper of kernels elsewhere, compiled within them."""
    if launches_of(facts, kernel):
        return False
    if kernel.name in facts.helpers_of_importers:
        return True
    return any(type(node) is cst.Return and node.value is not None for node in _walk(kernel.node.body))


def _request(facts, kernel, config, text, pointers, target, pointer_dtype, extents) -> Request:
    launch: Launch | None = config.launch
    site = launch.call if launch is not None else kernel.node
    values: dict[str, object] = dict(config.values)
    params, assumed = [], {}
    integers = integer_pointers(kernel, pointers)
    runtime = runtime_anchor = None
    for name in kernel.params:
        argument = launch_argument(launch, name) if launch is not None else None
        if name in kernel.constexpr:
            if name not in values:
                cap = _cap(facts, argument, site)
                if cap is None and name in extents and _model_dimension(argument):
                    cap = SMALL_DIMENSION  # a head dim, a head or expert count: never past a few hundred
                if cap is not None:
                    values[name] = cap
                elif (launch is not None and argument is not None and name in extents and runtime is None
                      and _sized_from_data(facts, argument, site)):
                    runtime = name  # sized at run time: the rule compiles it at powers of two
                    values[name] = None
                    runtime_anchor = launch.keywords.get(name) or argument
                else:
                    guess = _constexpr_guess(argument)
                    if guess is None and launch is not None:
                        guess = _host_default(facts, argument, launch.call)
                    if guess is None and type(argument) is cst.SimpleString:
                        guess = argument.evaluated_value
                    if guess is None and name in kernel.defaults:
                        guess = _option_value(kernel.defaults[name])
                    if guess is None:
                        return Request(kernel, config.label, config.anchor, None, values,
                                       reason=f"no value for the constexpr `{name}` at {config.label}")
                    values[name] = guess
            params.append({"name": name, "kind": "constexpr", "value": values[name]})
        elif name in pointers or (type(argument) is cst.Name and argument.value == "None"):
            if type(argument) is cst.Name and argument.value == "None":
                params.append({"name": name, "kind": "pointer", "value": "None"})
                continue
            dtype, guessed = _element_type(facts, name, argument, site, integers, pointer_dtype)
            if guessed:
                assumed[name] = dtype
            params.append({"name": name, "kind": "pointer", "dtype": dtype})
        else:
            number = _literal_number(argument)
            if number is None and name in kernel.defaults:
                number = _literal_number(kernel.defaults[name])
            if number is None and type(argument) is cst.Call and (dotted_name(argument.func) or "").endswith(
                    "stride") and argument.args and _literal_number(argument.args[0].value) == -1:
                number = 1  # the innermost stride of a tensor: 1, which the launcher makes a constant
            if isinstance(number, float) or (number is None and _FLOAT_NAMES.match(name)):
                params.append({"name": name, "kind": "float", "value": number})
            else:
                params.append({"name": name, "kind": "int", "value": number})
    options = {**_stated_options(launch.call if launch is not None else None),
               **_stated_options(config.anchor if type(config.anchor) is cst.Call and config.anchor is not (
                   launch.call if launch is not None else None) else None)}
    job = CompileJob(kernel.name, text, params, options, target)
    anchors = dict(config.anchors)
    if runtime is not None:
        anchors[runtime] = runtime_anchor
    return Request(kernel, config.label, config.anchor, job, values, assumed, runtime, anchors=anchors, launch=launch)


def with_value(request: Request, name: str, value: int) -> CompileJob:
    """The request's job with one constexpr set (a runtime-sized tile at one size)."""
    job = request.job
    params = [dict(p, value=value) if p["name"] == name else p for p in job.params]
    return CompileJob(job.kernel, job.source, params, job.options, job.target)
