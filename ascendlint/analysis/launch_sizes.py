"""What a launch passes to a kernel's constexpr parameters, classified by how it changes with the data.

A constexpr parameter is compiled into the kernel: each new value is a new compile. This module follows the value
a launch passes for each one back through the host code, with the launch-site classifier of ``grid`` (names
followed through the launching function and the module, ``x.shape[i]``, ``cdiv``, ``min(..., cap)``, guards such
as ``if N <= 128:``), and says whether it is a size that changes with the input (a token or row count, a batch,
a count of tiles or tasks of those) or one fixed per model or configuration (head dims, hidden sizes, tile sizes,
flags, literals, values rounded to a power of two).

Computed once per module and cached on the module facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from .grid import launch_factors
from .grid_factors import Factor
from .grid_names import is_tile_size_name
from .host_resolver import host_resolver
from .launch_size_bounds import fixed_on_the_host
from .walk import descendants
from . import magnitudes as mag
from .module_facts import Launch, ModuleFacts, dotted_name
from ..text.lazy_regex import lazy

_DATA_BITS = frozenset({mag.TOKEN_BITS, mag.BATCH_BITS, mag.SIZE_BITS})
_FIXED_BITS = frozenset({mag.SMALL_BITS, mag.FEATURE_BITS, mag.VOCAB_BITS})
# Counts derived from the data: tasks, chunks, pages, blocks of a sequence (``NT``, ``num_pages``, ``task_num``).
_COUNT_NAME = lazy(
    r"^(nt|ns|nc|num_?tasks?|n_?tasks?|task_?num|total_?tasks?|num_?chunks?|n_?chunks?|num_?pages?|n_?pages?"
    r"|max_?num_?pages?|pages_?per_?\w+|num_?(kv_?)?splits?|\w*_num_tokens|\w*_seq_?lens?)$",
    re.IGNORECASE,
)
# Flags and modes: IS_VARLEN, USE_G, HAS_BIAS, STORE_FINAL_STATE, EVEN_K, ACTIVATION.
_FLAG_NAME = lazy(r"^(is|use|has|store|save|output|return|even|enable|apply|do|with|need)_|_(mode|type|flag)$",
                        re.IGNORECASE)
# Fixed per model or device whatever the name's magnitude class: core counts, conv widths and states, heads,
# experts, windows (``BIG_CORE_NUM``, ``KERNEL_WIDTH``, ``state_len``, ``index_head_count``, ``EXPERT_NUM``).
_FIXED_PART = lazy(r"(^|_)(core|cores|width|heads?|head_?count|experts?|window|state_?len|kernel_?size)(_|$)"
                         r"|^(head|expert|core)_?(num|count|cnt)$", re.IGNORECASE)
_BUCKETING = {"next_power_of_2", "next_pow2", "next_power_of_two", "round_up_pow2", "bucket", "pad_to_bucket"}
_MAX_DEPTH = 8


@dataclass(frozen=True)
class ConstexprSize:
    """A data-dependent value a launch passes for a constexpr parameter."""

    launch: Launch
    param: str
    argument: cst.BaseExpression
    factor: Factor
    why: str  # the evidence, as the message states it ("a token count", "x.shape[0]", ...)


def data_dependent_constexprs(facts: ModuleFacts) -> list[ConstexprSize]:
    return facts.memo("constexpr_sizes", lambda: _compute(facts))


def _compute(facts: ModuleFacts) -> list[ConstexprSize]:
    found = []
    grids = host_resolver(facts)
    selected = lambda kernel: [p for p in kernel.params if kernel.is_constexpr_param(p) and not _tile_or_flag(p)]
    for launch, param, factor, argument in launch_factors(facts, selected):
        if not factor.grows_with_data:
            continue
        if _fixed_by_name(param) and not _host_names_a_count(argument):
            continue
        if _bucketed(grids, argument, launch.call, 0) or _configured(grids, argument, launch.call, 0):
            continue
        if fixed_on_the_host(grids, argument, launch.call):
            continue
        why = _evidence(grids, param, factor, argument)
        if why is not None:
            found.append(ConstexprSize(launch, param, argument, factor, why))
    return found


def _configured(grids, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    """The value is a parameter of the launching function with a literal default of 2 or more (``split_size: int
    = 256``), passed on through plain names: a setting chosen per configuration, not a size read from the data."""
    if depth > _MAX_DEPTH or type(expr) is not cst.Name:
        return False
    status, value = grids.lookup(expr.value, site)
    if status == "value" and type(value) is cst.Name:
        return _configured(grids, value, site, depth + 1)
    default = grids.parameter_default(expr.value, site)
    # a sentinel (`max_query_len: int = -1`, `= 0`, `= 1`) stands for "pass the real size"; a setting is a size
    return type(default) is cst.Integer and default.evaluated_value >= 2


def _fixed_by_name(param: str) -> bool:
    """Names of values fixed per model or configuration: tile sizes, flags, heads, head dims, hidden sizes."""
    return (is_tile_size_name(param) or bool(_FLAG_NAME.search(param)) or bool(_FIXED_PART.search(param))
            or mag.name_bits(param) in _FIXED_BITS)


def _tile_or_flag(param: str) -> bool:
    return is_tile_size_name(param) or bool(_FLAG_NAME.search(param))


def _host_names_a_count(argument: cst.BaseExpression) -> bool:
    """The launch passes a host name that spells out a count of the data (``N=num_tokens``, ``D=batch_size``):
    the host's own word outranks a parameter name that reads like a model dimension. Single letters say too
    little to outrank it."""
    if type(argument) is not cst.Name or len(argument.value) < 4 or "_" not in argument.value:
        return False
    return _is_data_name(argument.value) and not _fixed_by_name(argument.value)


def _is_data_name(name: str) -> bool:
    return mag.name_bits(name) in _DATA_BITS or bool(_COUNT_NAME.match(name))


def _evidence(grids, param: str, factor: Factor, argument: cst.BaseExpression) -> str | None:
    if _fixed_by_name(param):
        return f"the launch passes `{argument.value}`"
    if _is_data_name(param):
        return f"`{param}` names a count of tokens, rows, sequences or tasks"
    if factor.rows:
        return "the rows of a flattened tensor"
    data_names = sorted(n for n in factor.names if _is_data_name(n) and not _fixed_by_name(n))
    if data_names:
        return f"it comes from `{data_names[0]}`"
    if mag.name_bits(param) == mag.EXTENT_BITS and _leading_dimension(grids, factor.expr):
        return "the first dimension of a tensor"
    return None


def _leading_dimension(grids, expr: cst.CSTNode) -> bool:
    """``x.shape[0]`` / ``x.size(0)`` (or a name unpacked from the first item of ``x.shape`` of rank >= 2)."""
    item = grids.shape_items.get(id(expr))
    if item is not None:
        return item[1] == 0 and item[2] >= 2
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        key = expr.slice[0].slice
        return (type(key) is cst.Index and type(key.value) is cst.Integer and key.value.value == "0"
                and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape")
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size":
        args = [a.value for a in expr.args if a.keyword is None]
        return len(args) == 1 and type(args[0]) is cst.Integer and args[0].value == "0"
    return False


def _bucketed(grids, expr: cst.BaseExpression, site: cst.CSTNode, depth: int) -> bool:
    """The value passes through a rounding to a few buckets (``triton.next_power_of_2(n)``) on its way."""
    if depth > _MAX_DEPTH:
        return False
    for node in (expr, *descendants(expr)):
        if type(node) is cst.Call:
            name = dotted_name(node.func) or ""
            if name.split(".")[-1] in _BUCKETING:
                return True
        elif type(node) is cst.Name:
            status, value = grids.lookup(node.value, site)
            if status == "value" and isinstance(value, cst.BaseExpression) and value is not expr:
                if _bucketed(grids, value, site, depth + 1):
                    return True
    return False


def unlaunched_task_counts(context) -> list[tuple]:
    """(kernel, parameter) of constexpr parameters that stop a core-grid task loop of a kernel this module never
    launches: the number of tasks, which the host computes from the shapes."""
    from .task_loops import is_task_loop, range_arguments

    facts = context.facts
    launched = {id(launch.kernel.node) for launch in facts.launches if launch.kernel is not None}
    found = []
    for kernel in facts.kernels.values():
        if id(kernel.node) in launched or kernel.autotune is not None or kernel.name in facts.helpers:
            continue
        analysis = context.analysis(kernel)
        for loop in facts.index.subtree(kernel.node):
            if type(loop) is not cst.For or not is_task_loop(facts, analysis, loop):
                continue
            stop = range_arguments(facts, loop)[1]
            if (type(stop) is cst.Name and kernel.is_constexpr_param(stop.value) and stop.value in kernel.params
                    and not _fixed_by_name(stop.value) and (kernel, stop.value) not in found):
                found.append((kernel, stop.value))
    return found
