"""Tile extents the host sizes from the data (ASC304): a constexpr that sizes a tile and that a launch computes
from one of the data's long axes (tokens, rows, a vocabulary, an element count) with no cap, so the tile grows with
the input until it overflows the Unified Buffer. Head dims, head and expert counts and sizes the host bounds are
left out; a hidden size is kept only when the tile overflows at a large model's size.

Serves ASC304 only; reads the configurations and the model of the other ``ub`` modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ..grid import launch_factors
from ..grid_names import is_tile_size_name
from ..host_resolver import host_resolver
from .. import magnitudes as mag
from ..module_facts import Launch, ModuleFacts, dotted_name
from ...text.lazy_regex import lazy
from .capacity import UB_BUDGET
from .configs import Config, configs
from .estimate import element_types, tile_extent_params
from .model import _Model
from .tiles import _MAX_DEPTH, DEFAULT_POINTER_DTYPE, _names, _walk

@dataclass(frozen=True)
class UncappedExtent:
    launch: Launch
    param: str
    anchor: cst.CSTNode  # the host expression that computes the size (an assignment's value, or the argument)
    source: str  # how the message names it


# Per-head and small model sizes: a whole tile of them fits whatever the model (head dims up to 256, heads, experts).
_FITS = lazy(r"^(k|v|d|dk|dv|dh|bk|bv|bd|h|hv|hk|hq|g|head_?(dim|size)|[kvqd]_?head_?(dim|size)|\w*head\w*"
                   r"|rope\w*|\w*rotary\w*|\w*_?mult|\w*iters?|groups?|\w*_?group|w|state_?len|seq_?len|page_?size"
                   r"|head_?[kvq]_?(dim|size)|(n_?|num_?)?heads?|(n_?|num_?)?(kv_?)?heads?|topk|top_?k"
                   r"|(n_?|num_?)?experts?|rank|world_?size|width|kernel_?size|state_?len)$", re.IGNORECASE)


# The long axes of the data: rows, tokens, batches, vocabularies, hidden sizes and row lengths, element counts.
_LARGE = lazy(r"^(c|n|n_?cols?|num_?cols?|cols?|hidden(_?size|_?dim)?|d_?model|model_?dim|inter(mediate)?_?size"
                    r"|ffn_?dim|\w*vocab\w*|numel|n_?elements?|num_?elements?|total\w*|\w*_?tokens?|extend\w*)$",
                    re.IGNORECASE)
_LARGE_BITS = frozenset({mag.TOKEN_BITS, mag.BATCH_BITS, mag.SIZE_BITS, mag.VOCAB_BITS})
_HOST_CALLS = {"triton", "next_power_of_2", "cdiv", "min", "max", "int", "math", "ceil", "shape", "size", "torch"}


# Sizes that grow with the input itself (not the model): tokens, rows, batches, element counts.
_DATA = lazy(r"^(numel|n_?elements?|num_?elements?|total_?(tokens?|numel|elements?|size)|\w*_?tokens?|extend\w*|n_?rows?|num_?rows?|rows?"
                   r"|m|t|bs|batch\w*|\w*seq\w*|\w*vocab\w*)$", re.IGNORECASE)
_LARGE_MODEL_DIM = 16384  # a large hidden size (hidden sizes of current models reach 7168 to 16384)


def _launch_config(facts: ModuleFacts, launch: Launch) -> Config | None:
    return next((config for config in configs(facts, launch.kernel) if config.launch is launch), None)


def _launch_values(facts: ModuleFacts, launch: Launch) -> dict[str, int]:
    for config in configs(facts, launch.kernel):
        if config.launch is launch:
            return dict(config.values)
    return {}


def _through_root(grids, expr, site, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    for node in _walk(expr):
        if type(node) is cst.Call and (dotted_name(node.func) or "").split(".")[-1] in ("sqrt", "isqrt"):
            return True
        if type(node) is cst.Name and node is not expr or type(expr) is cst.Name and node is expr:
            status, value = grids.lookup(node.value, site)
            if status == "value" and isinstance(value, cst.BaseExpression) and value is not node:
                if _through_root(grids, value, site, depth + 1):
                    return True
    return False


def _guarded(facts: ModuleFacts, anchor: cst.CSTNode, names: set[str]) -> bool:
    """The host assignment sits under an ``if`` that compares one of the names the size comes from."""
    for ancestor in facts.index.ancestors(anchor):
        if type(ancestor) is cst.If:
            for node in _walk(ancestor.test):
                if type(node) is cst.Comparison and any(type(c.operator) in (cst.LessThan, cst.LessThanEqual,
                                                                             cst.GreaterThan, cst.GreaterThanEqual)
                                                        for c in node.comparisons):
                    if set(_names(node)) & names:
                        return True
        if type(ancestor) in (cst.FunctionDef, cst.Module):
            break
    return False


def uncapped_extents(facts: ModuleFacts, pointer_dtype: str = DEFAULT_POINTER_DTYPE) -> list[UncappedExtent]:
    """The uncapped extents of the module's launches; a hidden size is judged at the element types the compile
    request reads (``pointer_dtype`` where the host shows none)."""
    key = "ub_uncapped" if pointer_dtype == DEFAULT_POINTER_DTYPE else f"ub_uncapped:{pointer_dtype}"
    return facts.memo(key, lambda: _uncapped(facts, pointer_dtype))


def _uncapped(facts: ModuleFacts, pointer_dtype: str) -> list[UncappedExtent]:
    found = []
    grids = host_resolver(facts)
    extents = lambda kernel: sorted(tile_extent_params(facts, kernel), key=kernel.params.index)
    for launch, param, factor, argument in launch_factors(facts, extents):
        kernel = launch.kernel
        if not factor.grows_with_data:
            continue
        if factor.root:
            continue  # the square root of a size (a count of hyper-connections from their matrix): small
        anchor, source = _computed_at(grids, argument, launch.call)
        names = {n for n in set(factor.names) | set(_names(argument)) | set(_names(anchor))
                 if n not in _HOST_CALLS}
        sizes = {n for n in names if not is_tile_size_name(n)}
        if any(_FITS.match(n) or mag.name_bits(n) == mag.SMALL_BITS for n in sizes):
            continue  # a head dim, a count of heads or experts, a conv width: the whole tile fits
        if not any(_LARGE.match(n) or mag.name_bits(n) in _LARGE_BITS for n in sizes):
            continue  # nothing says the size is one of the data's long axes
        if _through_root(grids, argument, launch.call, 0) or _guarded(facts, anchor, names):
            continue  # ``next_power_of_2(cdiv(n, sqrt(n)))`` grows as a root; ``if B <= 512: BLOCK = B``
        if not any(_DATA.match(n) or mag.name_bits(n) in _LARGE_BITS - {mag.VOCAB_BITS} for n in sizes):
            # a hidden size or row length, fixed per model: flagged only if the tile overflows at a large one
            values = {**_launch_values(facts, launch), param: _LARGE_MODEL_DIM}
            dtypes = element_types(facts, kernel, _launch_config(facts, launch), pointer_dtype)
            model = _Model(facts, kernel, values, False, dtypes, pointer_dtype)
            try:
                model.run()
            except RecursionError:
                continue
            if model.peak()[0] <= UB_BUDGET:
                continue
        if facts.index.parent(anchor) is None:
            anchor = argument  # a value the analysis built (an item of an unpacked call): not in the file
        found.append(UncappedExtent(launch, param, anchor, source))
    return found


def _computed_at(grids, argument: cst.BaseExpression, site: cst.CSTNode) -> tuple[cst.CSTNode, str]:
    """Where the host computes the value: follow plain names to the expression last assigned to them."""
    expr, spelled = argument, None
    for _ in range(_MAX_DEPTH):
        if type(expr) is not cst.Name:
            break
        status, value = grids.lookup(expr.value, site)
        if status != "value" or not isinstance(value, cst.BaseExpression) or value is expr:
            break
        spelled = spelled or expr.value
        if type(value) is cst.Name and _only_alias(value):
            expr = value
            break
        expr = value
    try:
        code = cst.Module([]).code_for_node(expr)
    except RecursionError:
        code = "..."
    if len(code) > 60:
        code = code[:57] + "..."
    return expr, (f"`{spelled} = {code}`" if spelled else f"`{code}`")


def _only_alias(value: cst.Name) -> bool:
    return True
