"""What the host code says about the tensors a kernel indexes: which can grow with the data, and how large.

Host tensors are classified by what can make them large, from the name the host gives them and the dimension read:

- a *row* axis grows with the data: the leading dimension of an activation (``x``, ``hidden_states``, ``q``,
  ``logits``, ``out``), a token count, a flattened batch of rows. One program per row, or a row index times a
  row stride, scales with the tokens of a launch;
- *vocab-sized* rows: the trailing dimension (and so the row stride) of logits, probabilities or an embedding table
  (``logits.stride(0)``, ``V = logits.size(1)``): about 2^17 and more;
- *KV blocks*: the stride of a KV cache's block or token axis (``k_cache.stride(0)``) spans a whole block of heads;
- *small* tensors stay bounded: weights and biases, rotary tables, block tables, sequence offsets and lengths,
  per-head parameters (``A_log``, ``dt_bias``), whose leading dimension counts heads, requests or model rows.

Nothing is imported or executed: these are readings of the source. Each bound keeps the host expression it came
from, so a message can say why (``row stride = logits.stride(0), vocab-sized``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from . import magnitudes as mag
from ..text.lazy_regex import lazy
from .literals import integer_value

# Tensors whose leading dimension does not grow with the tokens of a launch.
_SMALL_TENSOR = lazy(
    r"(^|_)(w|weights?|bias(es)?|gamma|beta|cos|sin|cos_sin(_cache)?|rotary|inv_freq|freqs?|block_?tables?"
    r"|block_?table|page_?tables?|cu_?seq_?lens?\w*|seq_?lens?|seqlens?|context_?lens?|ctx_?lens?|query_start_loc"
    r"|a_?log|dt_?bias|d|conv_?state|ssm_?state|expert_?\w*|router\w*|lora\w*|scales?|zeros?|g_?idx|lens?"
    r"|chunk_?indices|chunk_?offsets|offsets?|counts?|sig(nal)?s?\w*|flags?|lock\w*|barrier\w*|\w*proj|w\d+"
    r"|\w*_weights?|mean|rstd|var|lse|m_?i|l_?i|conv_?states?|ssm_?states?|states?|d?h0|d?ht|initial_?state"
    r"|final_?state|cache_?indices|state_?indices)$",
    re.IGNORECASE,
)
# Tensors whose rows are vocabulary-sized.
_VOCAB_TENSOR = lazy(r"logits?|logprobs?|lm_?head|vocab|embed(ding)?s?_?(table|weight)?|probs?$", re.IGNORECASE)
# KV caches: their leading strides span a block of tokens (or a whole token) of every KV head.
_KV_TENSOR = lazy(r"(k|v|kv|key|value)_?(cache|caches|buffer|pool)|cache", re.IGNORECASE)


@dataclass(frozen=True)
class HostBound:
    """A host value's magnitude (bits), whether it counts tokens or rows, and the host text it was read from."""

    bits: int
    tokens: bool = False
    evidence: str = ""
    # the magnitude read from the host tensors before a guard bounded it (``assert K <= 256`` on ``k.shape[-1]``):
    # it says what kind of size the value is (a per-token size of a large tensor), ``bits`` how large it gets
    read_bits: int | None = None

    @property
    def kind_bits(self) -> int:
        return self.bits if self.read_bits is None else self.read_bits


def tensor_is_small(name: str) -> bool:
    """A host tensor whose leading dimension is bounded by the model or the batch, not the tokens of a launch."""
    return (_SMALL_TENSOR.search(name) is not None and not _VOCAB_TENSOR.search(name) and not _KV_TENSOR.search(name)
            and not _PER_TOKEN_DESPITE_NAME.search(name))


# ``hidden_states`` (and ``query_states``, ``key_states``, ``value_states``, ``output_states``) end like a recurrent
# state (``ssm_states``) but are activations, a row per token; the routing weights of MoE (``topk_weights``,
# ``[tokens, topk]``) and attention probabilities (``attn_weights``) end like a weight, and per-token scales
# (``per_token_scale``, ``token_scales``) like a small vector, but all have a row per token too.
_PER_TOKEN_DESPITE_NAME = lazy(
    r"(^|_)(hidden|query|key|value|qkv|kv|out|output)_?states?$|^(topk|attn|attention)_?weights?$"
    r"|(^|_)(per_)?tokens?_scales?$",
    re.IGNORECASE,
)


def is_token_ids(name: str) -> bool:
    """A host tensor of token ids (``tokens``, ``input_ids``): ``[batch, seq_len]``, its second dimension a
    sequence length."""
    return _TOKEN_IDS.fullmatch(name) is not None


_TOKEN_IDS = lazy(r"tokens?|input_?ids|token_?ids|ids", re.IGNORECASE)


def is_weight(name: str) -> bool:
    """A host tensor named as a weight matrix (``weight``, ``w``, ``conv_weight``, ``w1``): its leading dimension
    counts output channels or features, a model size up to about 2**14."""
    return _WEIGHT.search(name) is not None


_WEIGHT = lazy(r"(^|_)(w|weights?|w\d+)$", re.IGNORECASE)


def leading_dimension_counts_rows(name: str) -> bool:
    """``x.shape[0]`` of this host tensor may count rows or tokens: it is not a small tensor. A launch grid with one
    program per such row grows with the data."""
    return not tensor_is_small(name)


def is_activation(name: str) -> bool:
    """A host tensor named as an activation, logits or a gradient: its leading dimension counts tokens or rows.
    Stricter than ``leading_dimension_counts_rows``: a kernel's size parameters are read as token counts only
    from these (``K, N = b.shape`` of a GEMM's weight is not)."""
    return _ACTIVATION.search(name) is not None and not tensor_is_small(name)


_ACTIVATION = lazy(
    r"(?-i:^a$)|^(x|xs|x2d|inp|input|inputs|hidden|hidden_?states?|q|query|queries|qkv|o|out|output|outputs|y|res|residual"
    r"|tokens?)(_\w+)?$|^(attn|attention|mlp|ffn|moe|expert|layer|block)_(out|output|hidden)s?$"
    r"|^(mixed|fused|packed)_(qkv\w*|hidden\w*|x\w*)$|^d[xyoqkv]$|grad|logits?|logprobs?|probs$|activations?",
    re.IGNORECASE,
)


def row_stride_bound(tensor: str, dim: int | None) -> HostBound | None:
    """The magnitude of ``tensor.stride(dim)`` (``dim`` None when not a literal), from what the tensor is."""
    text = f"{tensor}.stride({dim if dim is not None else '...'})"
    if dim == -1:
        return HostBound(0, False, f"{text} is 1 for a contiguous last dimension")
    if _KV_TENSOR.search(tensor) and dim in (0, 1):
        return HostBound(mag.VOCAB_BITS, False, f"{text}, a KV-cache block or token stride")
    if _VOCAB_TENSOR.search(tensor) and not tensor_is_small(tensor):
        if dim == 1:  # logits are [rows, V]: the column stride of a contiguous tensor
            return HostBound(0, False, f"{text} is 1 for [rows, vocab] logits")
        return HostBound(mag.VOCAB_BITS, False, f"row stride = {text}, vocab-sized")
    if tensor_is_small(tensor):
        return HostBound(mag.FEATURE_BITS - 3, False, f"{text} of a small tensor")
    if dim == 0 and _per_token(tensor):
        return HostBound(mag.FEATURE_BITS, False, f"row stride = {text}, a per-token size")
    return None


def shape_bound(tensor: str, dim: int | None, rank: int | None = None) -> HostBound | None:
    """The magnitude of ``tensor.shape[dim]`` / ``tensor.size(dim)``: rows or tokens for the leading dimension of
    an activation, a vocabulary for the last dimension of logits, otherwise None (the name model decides)."""
    text = f"{tensor}.shape[{dim}]"
    leading = dim == 0 and (rank is None or rank <= 3)
    if leading and is_activation(tensor):
        return HostBound(mag.TOKEN_BITS, True, f"{text} counts rows or tokens")
    last = dim == -1 or (rank is not None and dim == rank - 1)
    if last and _VOCAB_TENSOR.search(tensor) and not tensor_is_small(tensor):
        return HostBound(mag.VOCAB_BITS, False, f"{text} is vocab-sized")
    if leading and tensor_is_small(tensor):
        return HostBound(mag.BATCH_BITS, False, f"{text} of a small tensor")
    if last and _per_token(tensor):
        return HostBound(mag.FEATURE_BITS, False, f"{text}, a per-token size")
    return None


def is_per_token(tensor: str) -> bool:
    """A tensor with one row per token: activations and the q/k/v of attention."""
    return is_activation(tensor) or _QKV.match(tensor) is not None


_per_token = is_per_token


_QKV = lazy(r"^(k|v|kv|key|value|keys|values)(_\w+)?$", re.IGNORECASE)


def receiver(expr: cst.BaseExpression) -> str | None:
    """The host variable a method or attribute chain starts from (``x`` in ``x.contiguous().stride(0)``)."""
    while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
        expr = expr.func if type(expr) is cst.Call else expr.value
    return expr.value if type(expr) is cst.Name else None


def literal_dim(expr: cst.BaseExpression | None) -> int | None:
    if type(expr) is cst.Integer:
        return integer_value(expr)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus and type(expr.expression) is cst.Integer:
        return -integer_value(expr.expression)
    return None


_ALLOCATORS = {"empty", "zeros", "ones", "full", "new_empty", "new_zeros", "new_ones", "new_full", "randn", "rand"}


def allocation_dims(expr) -> list[cst.BaseExpression] | None:
    """The dimensions of ``torch.empty(N, H, K, V)``, ``x.new_zeros((N, H, K, V))`` and the like, or None."""
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    short = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    if short not in _ALLOCATORS:
        return None
    args = [a.value for a in expr.args if a.keyword is None and not a.star]
    if short in ("full", "new_full") and args:
        args = args[:1]  # the fill value follows the shape
    if len(args) == 1 and type(args[0]) in (cst.Tuple, cst.List):
        args = [e.value for e in args[0].elements if type(e) is not cst.StarredElement]
    return args or None


def per_head_matrices(bounds: list[HostBound | None]) -> bool:
    """An allocation of a matrix per (sequence, head): at least four dimensions, the last two per-token sizes
    (``[N, HV, K, V]``, a recurrent state). Its elements are batch x heads x K x V, which passes 2^31 at a few
    thousand sequences of 32 heads of 128 x 128, however the host names it; a vector per sequence and head
    (``[N, H, K]``) or a convolution window (``[N, D, W]``) does not."""
    if len(bounds) < 4:
        return False
    return all(b is not None and b.bits >= mag.FEATURE_BITS for b in bounds[-2:])


def whole_shape(expr: cst.BaseExpression) -> cst.Name | None:
    """``x`` of ``x.shape``, ``x.size()``, ``tuple(x.shape)``, ``list(x.shape)``."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value in ("tuple", "list") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" \
            and not expr.args:
        expr = expr.func
    if type(expr) is cst.Attribute and expr.attr.value in ("shape", "size") and type(expr.value) is cst.Name:
        return expr.value
    return None


def shape_part(expr: cst.BaseExpression) -> tuple[cst.Name | None, int | None, bool]:
    """(``x``, dim, False) for ``x.shape[dim]`` and ``x.size(dim)``; (``x``, None, True) for ``x.numel()``."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index:
        shape, dim = expr.value, literal_dim(expr.slice[0].slice.value)
        if dim is not None and type(shape) is cst.Attribute and shape.attr.value == "shape" \
                and type(shape.value) is cst.Name:
            return shape.value, dim, False
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and type(expr.func.value) is cst.Name:
        if expr.func.attr.value == "numel" and not expr.args:
            return expr.func.value, None, True
        if expr.func.attr.value == "size" and len(expr.args) == 1:
            dim = literal_dim(expr.args[0].value)
            if dim is not None:
                return expr.func.value, dim, False
    return None, None, False
