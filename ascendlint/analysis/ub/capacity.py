"""What the Ascend compiler gives a program's vector core, and the buffer record the estimate counts in.

BiShengIR (ascendnpu-ir 1.2.0) plans the Unified Buffer of A2/A3 chips at 192 KB (1572864 bits) and fills it to the
last bit: a plan of exactly 192 KB reaches its last step, one byte more is a ``ub overflow`` (probed in
``tests/compiler/test_ub_model_probes.py``). The estimate's budget is that capacity. Served to every module of
``ub`` and to ASC305 and ``ascendlint ub``, which compare an estimate with it.
"""

from __future__ import annotations

from dataclasses import dataclass

UB_PHYSICAL = 192 * 1024
UB_BUDGET = UB_PHYSICAL  # the compiler plans up to the last byte (probed): nothing is held back

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Tile:
    name: str
    shape: Shape
    bytes: int
    loaded: bool
    dma: bool = False  # the buffer a load copies into (multi-buffered inside loops)
    fresh: bool = False  # a scan's or select's result: never written over an operand that dies with it
