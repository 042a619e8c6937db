"""How large an integer in a kernel can plausibly get: the magnitude model the int-width rules decide through.

A magnitude is a number of bits ``b``: the value stays below ``2**b`` at the shapes a kernel is plausibly used for
(up to about a million tokens per launch, tensors of more than 2**31 elements such as KV caches and vocab-sized
logits). An int32 value wraps when it can reach 2**31, that is when its magnitude passes ``INT32_BITS``.

Sources:
- literals: their own size; constexpr parameters: the largest value the module's launches or autotune configs
  pass, else ``CONSTEXPR_BITS`` (a tile size);
- integer kernel parameters: by name, when the name says what the parameter counts (``name_bits``), else
  ``EXTENT_BITS``; strides by the dimension they step over (a batch stride spans a sequence, a head stride may);
- program ids: ``CORE_PROGRAM_BITS`` on a core grid (sized by the core count, or striding by the program count),
  else the launch grid's axis (below 2**16, since a grid holds at most 65535 programs);
- loop variables: the larger of their bounds; ``tl.arange``: its end; loaded integers: ``LOADED_BITS``;
- arithmetic: a product adds magnitudes (a constant ``c`` adds ``ceil(log2(c))``), a sum of two equal magnitudes
  adds one bit, ``x // c`` and ``x >> c`` remove the bits of the constant, ``x % n`` and ``min`` are bounded by
  their smallest operand; a sequence index or count times a token count is a token offset or count (below
  ``2**(TOKEN_BITS + 1)``), since a launch holds about a million tokens whatever its batch;
- loaded values: ``LOADED_BITS`` (offsets, ids), or ``GRID_AXIS_BITS`` when the table is named for indices
  (``chunk_indices``).

Names are conventions, not types: they refine the model where kernels follow the usual spellings (``H`` heads,
``K``/``V``/``D`` per-head dims, ``T`` tokens, ``stride_*``) and change nothing where they do not.
"""

from __future__ import annotations

import re

from ..text.lazy_regex import lazy

INT32_BITS = 31
UNBOUNDED = 64
SMALL_BITS = 7  # heads, groups, ranks, experts, conv widths, buffer counts
BATCH_BITS = 12  # sequences or requests in one launch
FEATURE_BITS = 15  # per-token sizes: head dims, hidden sizes, row strides (a weight of K x N stays below 2**31)
VOCAB_BITS = 18  # vocabularies: up to a quarter of a million entries
TOKEN_BITS = 20  # token counts and offsets: about a million tokens per launch
SIZE_BITS = 34  # total sizes: numel of a tensor that can exceed 2**31 elements
EXTENT_BITS = 16  # an integer parameter whose name says nothing
CONSTEXPR_BITS = 12  # a constexpr whose value is not known here: a tile size
GRID_AXIS_BITS = 16  # a launch grid holds at most 65535 programs
CORE_PROGRAM_BITS = 7  # one program per AI core: a few dozen
LOADED_BITS = TOKEN_BITS  # an integer loaded from memory: an offset, an id or a count
LOOP_COUNTER_BITS = TOKEN_BITS  # what a loop-carried counter widens to

_SMALL = lazy(
    r"^(h|hv|hq|hk|hg|nh|g|w|heads?|n_?heads?|num_?\w*heads?|\w*_heads?|groups?|n_?groups?|num_?groups?"
    r"|world_?size|num_?ranks?|n_?ranks|n_?pes|ranks?|pe|buffer_?num|num_?buffers?|n_?buffers?|topk|top_?k"
    r"|num_?experts?|n_?experts?|experts?|width|kernel_?size|num_?cores?|n_?cores?|core_?num|ncores?|pvalue|nk|nv)$",
    re.IGNORECASE,
)
_BATCH = lazy(
    r"^(b|bs|batch|batch_?size|n_?seqs?|num_?seqs?|num_?sequences|n_?reqs?|num_?reqs?|num_?requests?|nb"
    r"|n_?batch|num_?batch(es)?)$",
    re.IGNORECASE,
)
_FEATURE = lazy(
    r"^(n|k|v|d|dk|dv|dh|c|bk|bv|bd|head_?dim|head_?size|hidden|hidden_?size|hidden_?dim|dim|d_?model|n_?cols?"
    r"|num_?cols?|cols?|columns?|vocab|vocab_?size|n_?vocab|inter(mediate)?_?size|ffn_?dim|channels?|n_?channels?"
    r"|num_?channels?|embed_?dim|emb_?dim|\w*_?dim|n_?features?|features?|block_?size|page_?size)$",
    re.IGNORECASE,
)
_TOKEN = lazy(
    r"^(t|l|s|m|seq_?len|seqlen|seq_?length|max_?seq_?len|max_?seqlen|seqlens?|num_?tokens?|n_?tokens?"
    r"|total_?tokens?|tokens?|n_?rows?|num_?rows?|rows?|context_?len|ctx_?len|kv_?len|q_?len|max_?len"
    r"|n_?ctx|n_?(q|kv)_?ctx|num_?ctx|(start|first|base)_?(rows?|tokens?)|(row|token)_?(start|offset|off)"
    r"|\w*_len|\w*_tokens)$",
    re.IGNORECASE,
)
_STRIDE = lazy(r"stride", re.IGNORECASE)
# The stride of a batch dimension spans a whole sequence; that of a head dimension may span one (``[B, H, T, D]``).
_BATCH_STRIDE = lazy(r"stride_?[a-z]?_?(b|z|bs|batch)$|^(b|z|batch)_?stride", re.IGNORECASE)
_HEAD_STRIDE = lazy(r"stride_?[a-z]?_?(h|head|hv|hk|hq)$|^(h|head)_?stride", re.IGNORECASE)
_VOCAB = lazy(r"vocab", re.IGNORECASE)
# Per-token statistics (log-sum-exp, mean, rstd, gates) hold a few values per token: their row strides are small.
_STATISTIC_STRIDE = lazy(r"lse|rstd|mean|var|delta|beta|loss|m_i|l_i|gate", re.IGNORECASE)
_SIZE = lazy(r"^(n_?elements?|num_?elements?|numel|n_?elem|total_?size|total|size|length|n_?total)$",
                   re.IGNORECASE)
# Index variables named after what they count along: heads (``i_h``, ``head_idx``, ``pid_h``) and sequences or
# requests (``i_b``, ``i_n``, ``req_idx``, ``pid_b``, ``seq_id``).
_SMALL_INDEX = lazy(
    r"^(i_?h|i_?hv|i_?hq|i_?hk|i_?hg|i_?g|i_?head|pid_?h|pid_?head|h_?idx|h_?id|(\w+_)?heads?(_?idx|_?id)?)$",
    re.IGNORECASE,
)
_BATCH_INDEX = lazy(
    r"^(i_?b|i_?n|i_?bs|b_?id|b_?idx|bid|pid_?b|pid_?batch|batch(_?idx|_?id)?|i_?batch|i_?seq|seq_?(idx|id)"
    r"|(\w+_)?req(uest)?(_?state)?(_?idx|_?id)?|i_?req)$",
    re.IGNORECASE,
)


def name_bits(name: str) -> int:
    """The magnitude of an integer parameter called ``name``."""
    if _SIZE.match(name):
        return SIZE_BITS
    if _STRIDE.search(name):
        if _BATCH_STRIDE.search(name):
            return SIZE_BITS
        if _HEAD_STRIDE.search(name):
            return TOKEN_BITS
        if _STATISTIC_STRIDE.search(name):
            return SMALL_BITS
        return FEATURE_BITS
    if _VOCAB.search(name):
        return VOCAB_BITS
    if _SMALL.match(name):
        return SMALL_BITS
    if _BATCH.match(name):
        return BATCH_BITS
    if _TOKEN.match(name):
        return TOKEN_BITS
    if _FEATURE.match(name):
        return FEATURE_BITS
    return EXTENT_BITS


def scale_bits(factor: int) -> int:
    """Bits a product gains from a constant factor: ``ceil(log2(factor))``."""
    return max(factor - 1, 0).bit_length()


_INDEX_TABLE = lazy(r"indices|index|_idx|_ids?$|idx_", re.IGNORECASE)


def names_index_table(name: str) -> bool:
    """A pointer named for a table of indices (``chunk_indices``, ``token_idx``): what it holds are ids of chunks,
    blocks or rows, not token offsets."""
    return bool(_INDEX_TABLE.search(name))


def counts_sequences(name: str) -> bool:
    """A parameter named for a count of sequences, batch elements or requests (``B``, ``batch``, ``num_seqs``)."""
    return bool(_BATCH.match(name))


def constexpr_bits(name: str) -> int:
    """A constexpr whose value this module does not show: a tile size, or less when its name says so (``H``)."""
    return min(CONSTEXPR_BITS, name_bits(name))


def counts_tokens(name: str) -> bool:
    """A parameter named for a token count (``T``, ``seq_len``, ``num_tokens``, ``n_rows``)."""
    return bool(_TOKEN.match(name)) and not _STRIDE.search(name) and not _SIZE.match(name)


def is_stride_name(name: str) -> bool:
    """A parameter named for a stride (``stride_x_n``, ``x_stride``)."""
    return bool(_STRIDE.search(name))


def names_sequence(name: str) -> bool:
    """An index named for a sequence, batch element or request (``i_b``, ``i_n``, ``req_idx``)."""
    return bool(_BATCH_INDEX.match(name))


def index_name_bits(name: str) -> int | None:
    """A bound implied by an index variable's name (a head, a sequence or a request), or None."""
    if _SMALL_INDEX.match(name):
        return SMALL_BITS
    if _BATCH_INDEX.match(name):
        return BATCH_BITS
    return None


def of_int(value: int) -> int:
    return max(abs(value).bit_length(), 0)


def product(first: int, second: int) -> int:
    return min(first + second, UNBOUNDED)


def total(first: int, second: int) -> int:
    """A sum: ``2**a + 2**b`` stays below ``2**(max + 1)``, and below ``2**max`` plus a little when they differ."""
    if first == second and first:
        return min(first + 1, UNBOUNDED)
    return first if first > second else second


def quotient(dividend: int, divisor_value: int | None) -> int:
    if divisor_value is None or divisor_value <= 1:
        return dividend
    return max(dividend - (divisor_value.bit_length() - 1), 0)


def widen(old: int, new: int) -> int:
    """A loop-carried magnitude that keeps growing: first to a loop counter's size, then unbounded."""
    if new <= old:
        return old
    return LOOP_COUNTER_BITS if new <= LOOP_COUNTER_BITS else UNBOUNDED


def can_wrap(bits: int) -> bool:
    """A value below ``2**bits`` can reach ``2**31`` only when ``bits`` passes 31."""
    return bits > INT32_BITS
