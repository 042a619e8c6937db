"""The compile requests a module states: every jit kernel at each configuration the code gives (each autotune
config, the literal constexprs and launch options of each launch, the kernel's defaults), with argument kinds and
pointer dtypes read from the kernel and its host code, as triton-ascend's launcher would specialise them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ..analysis import grid, ub
from ..analysis.module_facts import Kernel, Launch, ModuleFacts, dotted_name
from ..analysis.walk import child_nodes
from . import kernel_text
from .jobs import LAUNCH_OPTIONS, CompileJob

_POINTER_USES = {"load", "store", "make_block_ptr", "atomic_add", "atomic_max", "atomic_min", "atomic_cas",
                 "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor", "make_tensor_descriptor"}
_FLOAT_NAMES = re.compile(r"^(eps|epsilon|\w*scale\w*|alpha|beta|temperature|softcap|\w*_eps|momentum|p|dropout\w*)$",
                          re.IGNORECASE)
_TORCH_DTYPES = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                 "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "int": "i32", "int64": "i64",
                 "long": "i64", "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}
_DTYPE_METHODS = {"half": "fp16", "float": "fp32", "bfloat16": "bf16", "int": "i32", "long": "i64", "bool": "i1"}
_INDEX_NAMES = re.compile(r"(idx|index|indices|offset|seqlen|cu_|ids$|_id$|count|lens?$|table|expert|pos$|"
                          r"positions|mapping|slot)", re.IGNORECASE)


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


def pointer_params(facts: ModuleFacts, kernel: Kernel, depth: int = 0) -> set[str]:
    """Parameters the kernel (or a jit helper it passes them to) uses as addresses."""
    found = {p for p in kernel.params if p.lower().endswith(("ptr", "_ptrs")) or p.lower().startswith("ptr")}
    by_name = {k.name: k for k in facts.kernels.values()}
    for node in _walk(kernel.node.body):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.attr.value == "dtype":
            if node.value.value in kernel.params:
                found.add(node.value.value)
        if type(node) is not cst.Call:
            continue
        callee = (dotted_name(node.func) or "").split(".")[-1]
        if callee in _POINTER_USES and node.args:
            address = node.args[0].value
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value in ("pointer", "base", "ptr"):
                    address = arg.value
            while type(address) is cst.BinaryOperation:
                address = address.left
            if type(address) is cst.Name and address.value in kernel.params:
                found.add(address.value)
        helper = by_name.get(callee)
        if helper is not None and helper is not kernel and depth < 4:
            inner = pointer_params(facts, helper, depth + 1)
            for position, arg in enumerate(node.args):
                if type(arg.value) is not cst.Name or arg.value.value not in kernel.params:
                    continue
                name = arg.keyword.value if arg.keyword is not None else (
                    helper.params[position] if position < len(helper.params) else None)
                if name in inner:
                    found.add(arg.value.value)
    # a parameter rebound from a pointer (``x_ptr += off``) keeps its kind; one read as ``p + offs`` inside
    # another address was found above through its leftmost term
    return found


def _walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child_nodes(current))


def host_dtype(facts: ModuleFacts, expr: cst.BaseExpression | None, site: cst.CSTNode, depth: int = 0) -> str | None:
    """The element type a host expression shows for a tensor (``torch.empty(..., dtype=torch.bfloat16)``,
    ``x.half()``, ``x.to(torch.float32)``, ``torch.empty_like(y)`` of such a ``y``), or None."""
    if expr is None or depth > 6:
        return None
    if type(expr) is cst.Name:
        status, value = grid.host_resolver(facts).lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression) and value is not expr:
            return host_dtype(facts, value, site, depth + 1)
        return None
    if type(expr) is not cst.Call:
        return None
    for arg in expr.args:
        if arg.keyword is not None and arg.keyword.value == "dtype":
            return _dtype_name(arg.value)
    callee = dotted_name(expr.func) or ""
    method = callee.split(".")[-1]
    if type(expr.func) is cst.Attribute:
        if method in _DTYPE_METHODS and not expr.args:
            return _DTYPE_METHODS[method]
        if method in ("to", "type") and expr.args and expr.args[0].keyword is None:
            named = _dtype_name(expr.args[0].value)
            if named:
                return named
        if method in ("contiguous", "view", "reshape", "transpose", "t", "permute", "flatten", "clone",
                      "expand", "squeeze", "unsqueeze", "to", "narrow", "__getitem__"):
            return host_dtype(facts, expr.func.value, site, depth + 1)
    if method.endswith("_like") and expr.args:
        return host_dtype(facts, expr.args[0].value, site, depth + 1)
    return None


def _dtype_name(expr: cst.BaseExpression) -> str | None:
    name = (dotted_name(expr) or "").split(".")[-1]
    return _TORCH_DTYPES.get(name)


def _literal_number(expr: cst.BaseExpression | None):
    if type(expr) is cst.Integer:
        return int(expr.value.replace("_", ""), 0)
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


def requests(facts: ModuleFacts, target: str, pointer_dtype: str) -> list[Request]:
    """Every compile the module states, in source order."""
    found: list[Request] = []
    helpers = getattr(facts, "helpers", set()) or set()
    for kernel in facts.kernels.values():
        if kernel.name in helpers:
            continue
        text = kernel_text.rebuild(facts, kernel)
        pointers = pointer_params(facts, kernel)
        kernel_configs = ub.configs(facts, kernel)
        if not kernel_configs and not kernel.constexpr:
            kernel_configs = [ub.Config(f"defaults line {ub.line_of(facts, kernel.node)}", kernel.node.name, {})]
        for config in kernel_configs:
            found.append(_request(facts, kernel, config, text, pointers, target, pointer_dtype,
                                  ub.tile_extent_params(facts, kernel)))
    return found


def _cap(argument: cst.BaseExpression | None) -> int | None:
    """The literal bound of ``min(next_power_of_2(n), 4096)``: the largest size the host can pass."""
    if type(argument) is cst.Call and (dotted_name(argument.func) or "") == "min":
        literals = [_literal_number(a.value) for a in argument.args]
        bounds = [x for x in literals if isinstance(x, int)]
        if bounds and len(bounds) < len(literals):
            return min(bounds)
    return None


def _request(facts, kernel, config, text, pointers, target, pointer_dtype, extents) -> Request:
    launch: Launch | None = config.launch
    site = launch.call if launch is not None else kernel.node
    values: dict[str, object] = dict(config.values)
    params, assumed = [], {}
    runtime = runtime_anchor = None
    for name in kernel.params:
        argument = grid.launch_argument(launch, name) if launch is not None else None
        if name in kernel.constexpr:
            if name not in values:
                cap = _cap(argument)
                if cap is not None:
                    values[name] = cap
                elif launch is not None and argument is not None and name in extents and runtime is None:
                    runtime = name  # sized at run time: the rule compiles it at powers of two
                    values[name] = None
                    runtime_anchor = launch.keywords.get(name) or argument
                else:
                    guess = _constexpr_guess(argument)
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
            dtype = None
            if type(argument) is cst.Name and argument.value == "None":
                params.append({"name": name, "kind": "pointer", "value": "None"})
                continue
            if argument is not None:
                dtype = host_dtype(facts, argument, site)
            if dtype is None:
                dtype = "i32" if _INDEX_NAMES.search(name) else pointer_dtype
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
    return Request(kernel, config.label, config.anchor, job, values, assumed, runtime, anchors=anchors)


def with_value(request: Request, name: str, value: int) -> CompileJob:
    """The request's job with one constexpr set (a runtime-sized tile at one size)."""
    job = request.job
    params = [dict(p, value=value) if p["name"] == name else p for p in job.params]
    return CompileJob(job.kernel, job.source, params, job.options, job.target)
