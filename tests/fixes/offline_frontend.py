"""triton-ascend's frontend without a device, as the fix harness's worker and the reference kernels' offline compile
test use it: the package's own driver stand-in and lowering (``ascendlint.compiler.frontend``)."""

from __future__ import annotations

from ascendlint.compiler.frontend import HostOnlyDriver, lower_to_linalg, lower_to_ttir

__all__ = ["HostOnlyDriver", "lower_to_linalg", "lower_to_ttir"]
