"""Element types of a kernel's pointer parameters, read from source: what the host code shows at a launch
(``torch.empty(..., dtype=torch.bfloat16)``, ``x.half()``), else ``i32`` for index pointers and pointers whose
loaded values the kernel uses as integers, else an assumed type. Read by the compile requests
(``compiler.configs``) and by the UB estimate (``analysis.ub``), so that the two size the same loads alike."""

from __future__ import annotations

import re

import libcst as cst

from .host_resolver import host_resolver
from .launch_arguments import launch_argument
from .module_facts import Kernel, Launch, ModuleFacts, dotted_name
from .walk import iter_nodes


_POINTER_USES = {"load", "store", "make_block_ptr", "atomic_add", "atomic_max", "atomic_min", "atomic_cas",
                 "atomic_xchg", "atomic_and", "atomic_or", "atomic_xor", "make_tensor_descriptor"}


_TORCH_DTYPES = {"float32": "fp32", "float": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                 "int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "int": "i32", "int64": "i64",
                 "long": "i64", "bool": "i1", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5"}


_DTYPE_METHODS = {"half": "fp16", "float": "fp32", "bfloat16": "bf16", "int": "i32", "long": "i64", "bool": "i1"}


_INDEX_NAMES = re.compile(r"(idx|index|indices|offset|seqlen|cu_|ids$|_id$|count|lens?$|table|expert|pos$|"
                          r"positions|mapping|slot|signal|flag|barrier|lock|sem$)", re.IGNORECASE)


def pointer_params(facts: ModuleFacts, kernel: Kernel, depth: int = 0) -> set[str]:
    """Parameters the kernel (or a jit helper it passes them to) uses as addresses."""
    found = {p for p in kernel.params if p.lower().endswith(("ptr", "_ptrs")) or p.lower().startswith("ptr")}
    by_name = {k.name: k for k in facts.kernels.values()}
    aliases = _local_bases(kernel)
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
            base = _base_param(_leftmost(address), kernel, aliases)
            if base is not None:
                found.add(base)
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


_INTEGER_OPERATORS = (cst.FloorDivide, cst.Modulo, cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift)


def integer_pointers(kernel: Kernel, pointers: set[str]) -> set[str]:
    """Pointer parameters whose loaded values the kernel uses as integers: as an offset inside another address,
    or in integer arithmetic (``//``, ``%``, bit operations), directly or through names bound from them. A float
    there would not compile, so such a pointer cannot hold floats whatever its name."""
    aliases = _local_bases(kernel)
    origin: dict[str, set[str]] = {}  # local name -> pointer parameters its value was loaded from
    for node in _walk(kernel.node.body):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            continue
        value = node.value
        if type(value) is cst.Call and (dotted_name(value.func) or "").split(".")[-1] == "load" and value.args:
            base = _base_param(_leftmost(value.args[0].value), kernel, aliases)
            if base in pointers:
                origin.setdefault(node.targets[0].target.value, set()).add(base)
    changed = True
    while changed:  # names computed from loaded values carry where they were loaded from
        changed = False
        for node in _walk(kernel.node.body):
            if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
                continue
            if type(node.value) is cst.Call and (dotted_name(node.value.func) or "").split(".")[-1] in ("to", "cast"):
                continue  # converted explicitly: the loaded type no longer matters
            target = node.targets[0].target.value
            carried = set().union(*(origin.get(n, set()) for n in _names(node.value) if n != target))
            if carried - origin.get(target, set()):
                origin.setdefault(target, set()).update(carried)
                changed = True
    found: set[str] = set()
    for node in _walk(kernel.node.body):
        if type(node) is cst.Assign and len(node.targets) == 1 and _base_param(_leftmost(node.value), kernel, aliases):
            first = _leftmost(node.value)  # an address bound to a name (``p = base + token * stride``)
            for name in _names(node.value) - {first.value}:
                found |= origin.get(name, set())
        if type(node) is cst.Call and (dotted_name(node.func) or "").split(".")[-1] in ("load", "store") and node.args:
            address = node.args[0].value
            first = _leftmost(address)
            for name in _names(address):
                found |= origin.get(name, set()) if not (type(first) is cst.Name and first.value == name) else set()
        if type(node) is cst.BinaryOperation and type(node.operator) in _INTEGER_OPERATORS:
            for side in (node.left, node.right):
                if type(side) is cst.Name:
                    found |= origin.get(side.value, set())
    return found


def _names(expr) -> set[str]:
    return {n.value for n in _walk(expr) if type(n) is cst.Name}


def _leftmost(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The first term of a sum (``x + rows[:, None] * stride`` -> ``x``): the base of an address."""
    while type(expr) is cst.BinaryOperation:
        expr = expr.left
    return expr


def _local_bases(kernel: Kernel) -> dict[str, list[str]]:
    """Names the kernel binds to an address expression, each with the first terms of the values bound to it
    (``x_ptrs = x + offs`` -> ``x_ptrs: [x]``)."""
    found: dict[str, list[str]] = {}
    for node in _walk(kernel.node.body):
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            first = _leftmost(node.value)
            if type(first) is cst.Name:
                found.setdefault(node.targets[0].target.value, []).append(first.value)
    return found


def _base_param(expr: cst.BaseExpression, kernel: Kernel, aliases: dict[str, list[str]]) -> str | None:
    """The parameter an address starts from, directly or through the local names it was bound to."""
    if type(expr) is not cst.Name:
        return None
    pending, seen = [expr.value], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in kernel.params:
            return name
        pending.extend(aliases.get(name, ()))
    return None


_walk = iter_nodes


def host_dtype(facts: ModuleFacts, expr: cst.BaseExpression | None, site: cst.CSTNode, depth: int = 0) -> str | None:
    """The element type a host expression shows for a tensor (``torch.empty(..., dtype=torch.bfloat16)``,
    ``x.half()``, ``x.to(torch.float32)``, ``torch.empty_like(y)`` of such a ``y``), or None."""
    if expr is None or depth > 6:
        return None
    if type(expr) is cst.Name:
        status, value = host_resolver(facts).lookup(expr.value, site)
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


def _element_type(facts, name: str, argument, site, integers: set[str], pointer_dtype: str) -> tuple[str, bool]:
    """The element type of pointer parameter ``name`` at a launch, and whether it was assumed: what the host code
    shows, else ``i32`` for a pointer named like indices or whose values the kernel uses as integers, else
    ``pointer_dtype``."""
    dtype = host_dtype(facts, argument, site) if argument is not None else None
    if dtype is not None:
        return dtype, False
    return ("i32" if _INDEX_NAMES.search(name) or name in integers else pointer_dtype), True


def pointer_dtypes(facts: ModuleFacts, kernel: Kernel, launch: Launch | None, pointer_dtype: str) -> dict[str, str]:
    """The element type of every pointer parameter at ``launch``, as the compile request assumes it (the static UB
    estimate sizes its loads with the same types, so the two read the same kernel)."""
    cache = facts.memo("pointer_element_types", dict)
    key = (id(kernel.node), id(launch), pointer_dtype)
    if key not in cache:
        pointers = pointer_params(facts, kernel)
        integers = integer_pointers(kernel, pointers)
        site = launch.call if launch is not None else kernel.node
        found = {}
        for name in pointers:
            argument = launch_argument(launch, name) if launch is not None else None
            found[name] = _element_type(facts, name, argument, site, integers, pointer_dtype)[0]
        cache[key] = found
    return cache[key]
