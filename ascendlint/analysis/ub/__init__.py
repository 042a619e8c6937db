"""The static Unified Buffer estimate: how much UB one program of a kernel holds at once, per launch or autotune
config, without compiling.

- ``capacity``: what the compiler gives (192 KB on A2/A3, planned to the last byte) and the buffer record;
- ``configs``: the configurations a kernel is estimated at, and folding host integers;
- ``model``: one kernel at one configuration, tile by tile, planned as BiShengIR plans it;
- ``tiles``: the syntax the model reads (types, operation classes, shapes, names) and the sweep over live buffers;
- ``estimate``: the estimates of a module (ASC305, ``ascendlint ub``) and the extents that size tiles;
- ``extents``: tile extents the host sizes from the data (ASC304).
"""

from .capacity import UB_BUDGET, UB_PHYSICAL, Tile
from .configs import Config, configs, fold, line_of
from .estimate import Estimate, estimate_at, estimates, kib, tile_extent_params
from .extents import _FITS, UncappedExtent, uncapped_extents

__all__ = ["UB_BUDGET", "UB_PHYSICAL", "Tile", "Config", "configs", "fold", "line_of", "Estimate", "estimate_at",
           "estimates", "kib", "tile_extent_params", "UncappedExtent", "uncapped_extents", "_FITS"]
