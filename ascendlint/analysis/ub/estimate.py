"""How much Unified Buffer one program of a kernel holds at once, per launch or autotune config (an estimate), for
ASC305 and ``ascendlint ub``; and which constexprs size a tile, for ASC304.

The vector core of an Ascend AI core has 192 KB of Unified Buffer (UB), all of which BiShengIR plans (probed: a
192 KB plan fits, 32 bytes more overflow). Every tile a program holds (loaded blocks, intermediates, accumulators,
index and mask vectors used as data) lives there.

How the estimate is computed, per kernel and per config (the constexpr values a launch passes, with the kernel's
literal defaults, or those of one ``triton.Config`` of its autotune list together with what the launch passes):

- shapes: ``tl.arange(a, b)`` is ``b - a`` long, ``tl.zeros``/``tl.full`` take their shape, ``x[:, None]`` adds an
  axis, arithmetic, comparisons and ``tl.where`` broadcast, reductions (``tl.sum(x, axis=k)``) drop their axis,
  ``tl.dot`` gives ``M x N``, ``tl.load`` takes the shape of its pointer (or of its block pointer's
  ``block_shape``); constexprs and host constants are folded at the config's values;
- element sizes: a load reads the element type the compile request gives its pointer (what the host code shows,
  ``i32`` for index pointers, else ``pointer-dtype``, fp16 by default: the compiler run and the estimate make the
  same assumption); ``.to(...)`` and ``dtype=`` name other types; an fp32 argument (``scale``) widens a narrow
  tile to fp32; a comparison of data is held at the data's width; tiles of pointers are not counted;
- liveness: each binding of a named tile is one buffer, live from the binding to its last use before the name is
  bound again; a tile used inside a loop it was bound before stays live to the end of that loop, and one carried by
  the loop (an accumulator, read in the body before it is bound there) is live across all of it. An element-wise
  result takes over the buffer of an operand read for the last time by the same statement (``b = a * 2``), so the
  two are not counted together; the results of scans, sigmoids and ``tl.where`` never do. The estimate is the
  largest total of live buffers at any statement;
- not counted: tiles that only form addresses or masks of loads and stores, directly or through the names they
  are bound into (``offs``, ``mask = offs < n``): the compiler turns them into strided or bounded transfers; the
  operands and results of ``tl.dot`` (the cube core's L1/L0 buffers); compile hints (``tl.compile_hint(x, ...)``)
  are not reads of ``x``;
- multi-buffering (triton-ascend's default; ``multibuffer=False`` on the launch or the config turns it off), as
  BiShengIR plans it: a load inside a loop has a second copy, held across the loop's body, and the copy being read
  is held to the end of the body unless a result is written over it; a one-dimensional tile stored inside a loop
  gets a pair of buffers of its own; when that does not fit the compiler gives up the stores' pairs first, and
  overflows only when the rest does not fit. A loop-free kernel is planned the same either way;
- the compiler's own buffers (each probed): a load inside a larger expression (``acc += tl.load(p)``); the narrow
  copy of an upcast load, kept live as long as its fp32 conversion; the fp32 copy of a narrow tile that is
  reduced, scanned or passed to ``tl.sigmoid``; a scratch of half the tile for the sum of a whole one-dimensional
  tile; the narrow copy of a wider result stored to a narrow pointer; one scratch per statement for arithmetic
  nested in it when it can overwrite none of its operands. ``tl.dot`` accumulators live in L0C, not here.

What it leaves out: other unnamed temporaries, alignment padding, buffer sharing between tiles of exclusive
branches bound to different names, helpers called from the kernel, and any tile whose shape depends on a value the
module does not give. How it compares with the compiler on real code is in ``docs/precision.md``.

Computed once per module (and pointer type assumed) and cached on the module facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..module_facts import Kernel, ModuleFacts
from .capacity import UB_BUDGET, Tile
from .configs import Config, configs
from .model import _Model
from .tiles import DEFAULT_POINTER_DTYPE


@dataclass
class Estimate:
    kernel: Kernel
    config: Config
    bytes: int
    live: list[Tile]  # the tiles live at the peak, largest first
    extents: set[str]  # constexpr parameters that size a tile
    unknown: set[str]  # names a tile's shape needed that this config does not give

    @property
    def budget(self) -> int:
        return UB_BUDGET

    @property
    def over(self) -> bool:
        return self.bytes > UB_BUDGET


def kib(n: int) -> int:
    return round(n / 1024)


def estimates(facts: ModuleFacts, pointer_dtype: str = DEFAULT_POINTER_DTYPE) -> list[Estimate]:
    """One estimate per kernel and config, in source order (cached on the module facts). A load from a pointer
    whose element type the host code does not show reads ``pointer_dtype``, as the compile of the same config
    assumes (``pointer-dtype`` of the rules)."""
    key = "ub_estimates" if pointer_dtype == DEFAULT_POINTER_DTYPE else f"ub_estimates:{pointer_dtype}"
    return facts.memo(key, lambda: _compute(facts, pointer_dtype))


def tile_extent_params(facts: ModuleFacts, kernel: Kernel) -> set[str]:
    """Constexpr parameters of ``kernel`` that size a tile (``tl.arange(0, BLOCK)``, ``tl.zeros((BM, BN))``)."""
    cache = facts.memo("ub_extents", dict)
    found = cache.get(id(kernel.node))
    if found is None:
        model = _Model(facts, kernel, {})
        try:
            model.run()
        except RecursionError:
            model.extent_names = set()
        found = cache[id(kernel.node)] = {p for p in model.extent_names if kernel.is_constexpr_param(p)
                                          or p in kernel.constexpr}
    return found


def _compute(facts: ModuleFacts, pointer_dtype: str) -> list[Estimate]:
    found = []
    for kernel in facts.kernels.values():
        if kernel.name in getattr(facts, "helpers", ()):
            continue
        for config in configs(facts, kernel):
            estimate = estimate_at(facts, kernel, config, config.values, pointer_dtype)
            if estimate is not None:
                found.append(estimate)
    return found


def estimate_at(facts: ModuleFacts, kernel: Kernel, config: Config, values: dict[str, int],
                pointer_dtype: str = DEFAULT_POINTER_DTYPE, dtypes: dict[str, str] | None = None) -> Estimate | None:
    """The estimate of ``kernel`` at ``config`` with these constexpr values (a tile sized at run time, at one
    size); None when the kernel holds no tile or is nested too deep to read. ``dtypes`` gives pointer parameters'
    element types (``{"x": "bf16"}``); by default they are read from the launch as the compile request reads them."""
    if dtypes is None:
        dtypes = element_types(facts, kernel, config, pointer_dtype)
    model = _Model(facts, kernel, values, config.multibuffer, dtypes, pointer_dtype)
    try:
        model.run()
    except RecursionError:  # expressions nested deeper than the interpreter's stack: not estimated
        return None
    if not model.tiles_seen:
        return None
    peak, live = model.peak()
    return Estimate(kernel, config, peak, live, model.extent_names, model.unknown_extents)


def element_types(facts: ModuleFacts, kernel: Kernel, config: Config | None, pointer_dtype: str) -> dict[str, str]:
    """Pointer parameters' element types at ``config``: the reading of the compile requests (host code, names of
    index pointers, values used as integers, else ``pointer_dtype``), so that estimate and compile agree."""
    from ..pointer_types import pointer_dtypes

    return pointer_dtypes(facts, kernel, config.launch if config is not None else None, pointer_dtype)
