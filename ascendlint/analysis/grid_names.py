"""How host code spells the sizes a grid is made of: core counts (``num_aicore``, ``get_aivector_core_num()``,
``n_cores``), model dimensions (``head_dim``, ``hidden_size``), tile sizes (``BLOCK_M``, ``chunk_size``), token counts
and sequence lengths (``T``, ``seq_len``), and host helpers that chunk a launch.

Names alone, read as the host writes them; used by the grid classifier, the launch-size analysis and the rules that
tell a tile size or a model dimension from a data-sized extent (ASC303, ASC503).
"""

from __future__ import annotations

import re

import libcst as cst

from . import magnitudes as mag
from ..text.lazy_regex import lazy
from .grid_factors import Factor, Kind


# get_aicore_num(), get_aivector_core_num(), vector_core_count(dev), cube_core_count(dev), get_num_cores()
_CORE_FUNCTION = lazy(r"^(get_\w*core_num|\w*core_count|(get_)?num_\w*cores)$")


CORE_PROPERTIES = {"num_aicore": Kind.CUBE_CORES, "num_vectorcore": Kind.VECTOR_CORES,
                    "multiprocessor_count": Kind.CORES, "multi_processor_count": Kind.CORES}


# Host names of a core count: num_vectorcore, CORE_NUM, n_cores, aicore_num, vector_core_count, num_cores.
_CORE_NAME = lazy(r"(?:(?:num|n|total|max)_?)?(?:(ai|aiv|vector|cube)_?)?cores?(?:_?(?:num|count|cnt))?", re.I)


# Model dimensions (per-head and hidden sizes): fixed by the model, whatever the batch or the sequence length.
MODEL_DIM = lazy(
    r"k|v|d|dk|dv|dh|dim|head_?dim|head_?size|head_?[kv]_?dim|[kv]_?head_?dim|d_?model|hidden|hidden_?(size|dim)"
    r"|\w+_dim|\w+_hidden_size|(n_?|num_?)?channels?|embed_?dim|inter(mediate)?_?size",
    re.I,
)


# Tile sizes: BLOCK_SIZE, BLOCK_M, KV_BLOCK_SIZE, b_tile, chunk_size, BT, BK.
_TILE_NAME = lazy(r"(^|_)(block|blk|tile|chunk)(_(size|len|[a-z])|size)?$|^(block|blk|tile|chunk)|^b[tkvdmnhce]$",
                        re.I)


def is_tile_size_name(name: str) -> bool:
    """A name spelled like a tile size: ``BLOCK_SIZE``, ``BLOCK_M``, ``KV_BLOCK_SIZE``, ``BLK_HEADS``, ``BT``."""
    return _TILE_NAME.search(name) is not None


def core_function_kind(name: str) -> Kind | None:
    """``get_aicore_num`` / ``cube_core_count`` -> cube, ``get_aivector_core_num`` / ``vector_core_count`` ->
    vector, any other core-count function -> cores."""
    if name == "get_multiprocessor_count":
        return Kind.CORES
    if _CORE_FUNCTION.match(name) is None:
        return None
    if "vector" in name or "aiv" in name:
        return Kind.VECTOR_CORES
    if "aicore" in name or "cube" in name or "aic_" in name:
        return Kind.CUBE_CORES
    return Kind.CORES


def is_model_dimension_name(name: str) -> bool:
    """A name spelled like a model dimension (``K``, ``V``, ``D``, ``head_dim``, ``HEAD_DIM``, ``hidden_size``): a size
    the model fixes, whatever the batch or the sequence length."""
    return MODEL_DIM.fullmatch(name) is not None


def core_name_kind(name: str) -> Kind | None:
    match = _CORE_NAME.fullmatch(name)
    if match is None or name.lower() == "core":
        return None
    unit = (match.group(1) or "").lower()
    if unit in ("aiv", "vector"):
        return Kind.VECTOR_CORES
    if unit in ("ai", "cube"):
        return Kind.CUBE_CORES
    return Kind.CORES


def is_token_name(name: str) -> bool:
    return mag.name_bits(name) == mag.TOKEN_BITS and _SPECULATIVE.search(name) is None


# Host names of a token count or sequence length (``T``, ``seq_len``, ``num_tokens``): the language of sequence
# workloads. Generic row counts (``M``, ``rows``, ``n_rows``) of general-purpose ops do not back a finding alone.
SEQUENCE_LENGTH = lazy(
    r"t|s|seq_?len|seqlen|seq_?length|max_?seq_?len|max_?seqlen|num_?tokens?|n_?tokens?|total_?tokens?|tokens?"
    r"|context_?len|ctx_?len|kv_?len|q_?len|n_?ctx|n_?(q|kv)_?ctx|num_?ctx|\w*_tokens", re.I)


# host helpers that yield (offset, length) chunks of an axis for a loop of launches (``iter_axis_launch_chunks``)
CHUNKS = lazy(r"chunk", re.I)


# speculative-decoding lengths (``max_spec_len``, ``num_draft_tokens``) count a few draft tokens per request
_SPECULATIVE = lazy(r"spec|draft|accepted", re.I)


# M-tiles of the tokens a MoE routing sends to the experts (``num_m_tiles``, ``n_row_tiles``, ``token_blocks``)
ROUTED_TILES = lazy(r"(num_?|n_?|total_?)?(m|rows?|tokens?)_?(tiles|blocks)", re.I)


# a host list or tensor of blocks or tiles (``block_info``, ``tile_row_start``): its length counts tiles of rows
TILE_LIST = lazy(r"block|tile|chunk", re.I)


def string_key(expr: cst.BaseExpression) -> str | None:
    """``"D"`` of ``meta["D"]``."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        key = expr.slice[0].slice
        if type(key) is cst.Index and type(key.value) is cst.SimpleString:
            return key.value.evaluated_value
    return None


def spells_tile(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and _TILE_NAME.search(expr.value) is not None


def is_tile_size(bottom: Factor, denominator: cst.BaseExpression) -> bool:
    """A divisor that is a tile: a literal, a compile-time constant, or a name spelled like a block size."""
    if bottom.kind in (Kind.LITERAL, Kind.CONSTANT):
        return True
    spelled = {denominator.value} if type(denominator) is cst.Name else set()
    return any(_TILE_NAME.search(name) for name in spelled | bottom.names)


def spells_core_count(expr: cst.BaseExpression) -> bool:
    """An expression spelled as a core count: a host name or attribute (``num_cores``, ``self.cube_core_num``), a
    device property (``props.num_aicore``, ``props["num_vectorcore"]``) or a core-count function
    (``get_aicore_num()``, ``vector_core_count(dev)``)."""
    if type(expr) is cst.Name:
        return core_name_kind(expr.value) is not None
    if type(expr) is cst.Attribute:
        return expr.attr.value in CORE_PROPERTIES or core_name_kind(expr.attr.value) is not None
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        key = expr.slice[0].slice.value
        return type(key) is cst.SimpleString and key.evaluated_value in CORE_PROPERTIES
    if type(expr) is cst.Call:
        func = expr.func
        short = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        return core_function_kind(short) is not None
    return False
