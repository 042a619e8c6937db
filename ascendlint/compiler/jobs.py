"""One compile request: a kernel's rebuilt source at one configuration, for one target, and its content key."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from . import toolchain

DEFAULT_TARGET = "Ascend910B1"
# triton-ascend's launch options that reach BiShengIR (``NPUOptions``), and the compiler flag each one becomes
LAUNCH_OPTIONS = {
    "multibuffer": "--enable-auto-multi-buffer",
    "enable_auto_bind_sub_block": "--enable-auto-bind-sub-block",
    "unit_flag": "--enable-hivm-unit-flag-sync",
    "enable_hivm_auto_cv_balance": "--enable-hivm-auto-cv-balance",
    "sync_solver": "--enable-hivm-graph-sync-solver",
    "inject_barrier_all": "--enable-hivm-inject-barrier-all-sync",
    "inject_block_all": "--enable-hivm-inject-block-all-sync",
    "limit_auto_multi_buffer_only_for_local_buffer": "--limit-auto-multi-buffer-only-for-local-buffer",
    "limit_auto_multi_buffer_of_local_buffer": "--limit-auto-multi-buffer-of-local-buffer",
    "set_workspace_multibuffer": "--set-workspace-multibuffer",
    "tile_mix_vector_loop": "--tile-mix-vector-loop",
    "tile_mix_cube_loop": "--tile-mix-cube-loop",
    "disable_auto_inject_block_sync": "--disable-auto-inject-block-sync",
}
# what triton-ascend passes when the launch says nothing (A2/A3; ``NPUOptions`` defaults)
DEFAULT_OPTIONS = {"multibuffer": True, "enable_auto_bind_sub_block": True}


def compiler_flags(target: str, options: dict) -> list[str]:
    """The flags triton-ascend's backend passes to BiShengIR for this target and these launch options."""
    flags = [f"--target={target}", "--enable-hfusion-compile=true", "--enable-hivm-compile=true",
             "--enable-triton-kernel-compile=true"]
    for name, value in {**DEFAULT_OPTIONS, **options}.items():
        flag = LAUNCH_OPTIONS.get(name)
        if flag is not None and value is not None:
            flags.append(f"{flag}={value}")
    return flags


@dataclass
class CompileJob:
    kernel: str  # the jit function's name in ``source``
    source: str  # the rebuilt module text (``kernel_text``): the only code the worker imports
    params: list[dict]  # per parameter, in order: {"name", "kind": pointer|int|float|constexpr, "value", "dtype"}
    options: dict = field(default_factory=dict)  # launch options (``LAUNCH_OPTIONS`` keys) the launch states
    target: str = DEFAULT_TARGET

    def key(self) -> str:
        """Content key: the same text, arguments, options, target and tool versions give the same verdict.
        ``format`` changes when what a stored verdict says changes (2: failed frontend tools named, not their
        command lines)."""
        material = {**asdict(self), "versions": toolchain.versions(), "format": 2}
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode("utf-8")).hexdigest()

    def compiler_flags(self) -> list[str]:
        return compiler_flags(self.target, self.options)

    def as_json(self) -> dict:
        return asdict(self)
