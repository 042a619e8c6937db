"""The abstract values of the kernel value analysis: what a name or expression inside a kernel may be.

An abstract value is ``(bits, magnitude, divisors)``:

- *bits* (``Trait``) are "may" facts united over all paths: ``DYNAMIC`` (not known at compile time), ``TENSOR``
  (a tensor when the compiler reaches it, not a ``constexpr`` object), integer widths ``WIDE``/``NARROW``, kinds
  ``INT``/``FLOAT``, and where a value comes from: ``INDEX`` (program id, loop variable, loaded value), ``PROGRAM``,
  ``EXTENT`` (an integer parameter), ``LOADED``, ``POINTER``, ``BLOCK`` (block pointer). An expression is int64
  when some path makes it ``WIDE`` and none leaves it ``NARROW``;
- *magnitude* is the number of bits the value plausibly needs (``magnitudes.py`` states the model);
- *divisors* are the constexpr parameters the value was divided by (``i_t`` counts tiles of ``BT`` when it ranges
  over ``tl.cdiv(T, BT)``), so that ``i_t * BT`` is bounded by ``T`` again.

Read by the value pass that computes them (``value_pass``) and by the rules and analyses that test their bits.
"""

from __future__ import annotations


INT64 = {"tl.int64", "tl.uint64"}


NARROW_INTS = {"tl.int32", "tl.uint32", "tl.int16", "tl.uint16", "tl.int8", "tl.uint8", "tl.int1"}


TRANSPARENT_CALLS = {"tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"}


LOOP_CALLS = {"range", "tl.range"}


class Trait:
    """Bit flags of what a value may be (a plain int bit set keeps the analysis cheap)."""

    DYNAMIC = 1 << 0  # not known at compile time
    WIDE = 1 << 1  # a 64-bit integer
    NARROW = 1 << 2  # a 32-bit (or narrower) integer
    INDEX = 1 << 3  # runtime index: program id, loop variable, loaded value
    PROGRAM = 1 << 4  # derived from tl.program_id
    EXTENT = 1 << 5  # runtime extent: integer kernel parameter
    LOADED = 1 << 6  # loaded from memory
    POINTER = 1 << 7
    BLOCK = 1 << 8  # block pointer
    FLOAT = 1 << 9  # may be floating point
    TENSOR = 1 << 10  # a tensor when the compiler reaches it (else a constexpr object)
    INT = 1 << 11  # may be an integer
    TOKENS = 1 << 12  # a token count or a token offset: bounded by the tokens of one launch, about 2**20
    SEQUENCE = 1 << 13  # the index of a sequence, batch element or request
    TILE = 1 << 14  # a vector of offsets built from tl.arange
    # a per-row extent the launching host code shows to be large (a row stride of an activation, vocab-sized logits
    # or a KV cache), or one of a kernel no launch of this module shows (the magnitude model decides alone)
    HOSTED = 1 << 15


T = Trait


Traits = int


Value = tuple  # (bits, magnitude, divisors)


NO_DIVISORS: frozenset = frozenset()


WIDTHS = T.WIDE | T.NARROW
