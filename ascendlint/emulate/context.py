"""Per-thread state of the program instance a worker thread is running.

The interpreter keeps one global builder; everything that must differ between concurrently running
program instances (grid index, grid size, rank, sub-block, the launch they belong to) lives here instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .model import FAITHFUL, DeviceModel

_local = threading.local()


@dataclass
class Stage:
    """One kernel launch of a launch sequence, over every rank: what its barriers and UDMA limits count.

    A plain launch is a sequence of one stage. In a longer sequence each rank runs its stages in order,
    independently of the other ranks (see ``streams.py``), so a barrier or a core-per-pe limit only ever
    concerns the programs of one stage.
    """

    index: int = 0
    kernel_name: str = ""
    program_count: int = 0  # threads of this stage: programs x sub-blocks, over every rank
    sub_blocks: int = 1
    barrier_arrived: int = 0
    barrier_generation: int = 0
    barrier_counts: dict = field(default_factory=dict)  # id(ProgramContext) -> barriers passed or reached
    udma_issuers: dict = field(default_factory=dict)  # (rank, pe) -> the core that drives it

    def describe(self) -> str:
        return f"launch {self.index} ({self.kernel_name})"


@dataclass
class LaunchState:
    """Shared by every program of one combined launch."""

    kernel_name: str
    program_count: int  # threads: programs x sub-blocks, over every rank
    hazards: bool = False
    world: Any = None
    model: DeviceModel = FAITHFUL
    sub_blocks: int = 1
    aborted: threading.Event = field(default_factory=threading.Event)
    memory_lock: threading.Lock = field(default_factory=threading.Lock)
    scheduler: Any = None
    barrier_arrived: int = 0
    barrier_generation: int = 0
    store_buffers: list = field(default_factory=list)  # every program's pending stores (visibility layer)
    regions: Any = None  # bounds.Regions of the launch's buffers (check_bounds)
    write_seq: int = 0  # visible writes so far (acquire_by_wait_semantics)
    write_log: list = field(default_factory=list)  # visible writes kept while some program lacks an acquire
    unacquired: int = 0  # programs currently reading without acquire
    udma_issuers: dict = field(default_factory=dict)  # (rank, pe) -> the core that drives it
    programs: list = field(default_factory=list)  # every ProgramContext of the launch
    stage_count: int = 1  # launches in the sequence each rank runs


@dataclass
class ProgramContext:
    """Identity of one running program instance (one vector sub-block of it) plus what it is blocked on."""

    launch: LaunchState
    rank: int
    num_ranks: int
    grid_idx: tuple
    grid_dim: tuple
    sub_block: int = 0
    stage: Stage = None  # the launch of the sequence this program belongs to
    blocked_on: str | None = None
    turn: threading.Event = field(default_factory=threading.Event)
    pending: Any = None  # the program's StoreBuffer when stores are held back
    horizon: int | None = None  # write_seq at a wait without acquire; later writes by others may be unseen
    line_copies: dict = field(default_factory=dict)  # 64-byte line address -> this core's cached copy
    inflight_loads: list = field(default_factory=list)  # addresses loaded since the last fence
    transfers: list = field(default_factory=list)  # non-blocking UDMA copies issued, not yet quiet()-ed
    overtaken_loads: list = field(default_factory=list)  # loads a signal was set after, before any fence

    def __post_init__(self) -> None:
        if self.stage is None:
            self.stage = Stage(0, self.launch.kernel_name, self.launch.program_count, self.launch.sub_blocks)

    def describe(self) -> str:
        where = f"program {self.grid_idx}"
        if self.stage.sub_blocks > 1:
            where += f" sub-block {self.sub_block}"
        if self.launch.stage_count > 1:
            where = f"{self.stage.describe()} {where}"
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
