"""Per-thread state of the program instance a worker thread is running.

The interpreter keeps one global builder; everything that must differ between concurrently running
program instances (grid index, grid size, rank, the launch they belong to) lives here instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

_local = threading.local()


@dataclass
class LaunchState:
    """Shared by every program of one combined launch."""

    kernel_name: str
    program_count: int
    hazards: bool = False
    world: Any = None
    aborted: threading.Event = field(default_factory=threading.Event)
    memory_lock: threading.Lock = field(default_factory=threading.Lock)
    barrier: threading.Barrier = field(init=False)

    def __post_init__(self) -> None:
        self.barrier = threading.Barrier(self.program_count)


@dataclass
class ProgramContext:
    """Identity of one running program instance plus what it is currently blocked on."""

    launch: LaunchState
    rank: int
    num_ranks: int
    grid_idx: tuple
    grid_dim: tuple
    blocked_on: str | None = None

    def describe(self) -> str:
        where = f"program {self.grid_idx}"
        return where if self.launch.world is None else f"rank {self.rank} {where}"


def current() -> ProgramContext | None:
    """The context of the calling thread, or None outside an emulated launch."""
    return getattr(_local, "context", None)


def require_current(op_name: str) -> ProgramContext:
    ctx = current()
    if ctx is None:
        raise RuntimeError(f"{op_name} can only run inside a kernel started by ascendlint.emulate")
    return ctx


def set_current(ctx: ProgramContext | None) -> None:
    _local.context = ctx
