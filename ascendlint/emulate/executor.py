"""Run program instances concurrently, one thread each, in a single combined launch.

Programs of a Triton grid may wait on each other (grid barriers, flags set by other programs, peer
ranks), so they cannot run one after another as the stock interpreter does. Every program gets a
thread with its own grid index, grid size and rank; the interpreter's ``tl`` patches are applied
once for the whole launch and undone at its end.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

from . import context, hazards, interpreter_patch, watchdog
from .binding import BoundKernel
from .environment import import_triton
from .errors import EmulatorHang, ProgramAborted
from .stand_ins import ascend_ops

MAX_PROGRAMS = 4096
JOIN_AFTER_ABORT_SECONDS = 2.0

_launch_lock = threading.Lock()


@dataclass
class RankLaunch:
    """One rank's share of a combined launch."""

    rank: int
    bound: BoundKernel


class _Program:
    def __init__(self, bound: BoundKernel, ctx: context.ProgramContext, on_exit) -> None:
        self.bound = bound
        self.ctx = ctx
        self.error: BaseException | None = None
        self._on_exit = on_exit
        name = f"emulate-{bound.name}-{ctx.describe()}"
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            self._run_program()
        except ProgramAborted:  # delivered late, after the program had already finished
            pass

    def _run_program(self) -> None:
        _, _, interpreter = import_triton()
        context.set_current(self.ctx)
        try:
            interpreter.interpreter_builder.set_grid_dim(*self.ctx.grid_dim)
            interpreter.interpreter_builder.set_grid_idx(*self.ctx.grid_idx)
            self.bound.run_program()
        except ProgramAborted:
            pass
        except BaseException as error:  # noqa: BLE001 - handed to the launching thread, which re-raises it
            self.error = error
        finally:
            context.set_current(None)
            self._on_exit(self)


def prepare() -> None:
    """Install the interpreter changes every launch relies on (idempotent)."""
    interpreter_patch.install()
    hazards.install()
    ascend_ops.install()


def run(ranks: list[RankLaunch], *, hazards: bool, timeout: float, world=None) -> None:
    """Run every program of every rank concurrently; raise the first error or EmulatorHang."""
    prepare()
    total = sum(_program_count(r.bound.grid) for r in ranks)
    if total > MAX_PROGRAMS:
        raise ValueError(f"the emulator runs at most {MAX_PROGRAMS} programs per launch (one thread each), got {total}")
    if total == 0:
        return
    kernel_name = ranks[0].bound.name
    launch = context.LaunchState(kernel_name=kernel_name, program_count=total, hazards=hazards, world=world)
    with _launch_lock, interpreter_patch.language_patched_for(ranks[0].bound.fn, ascend_ops.launch_patches):
        _run_locked(ranks, launch, timeout, num_ranks=len(ranks) if world is not None else 1)


def _program_count(grid: tuple) -> int:
    return grid[0] * grid[1] * grid[2]


def _run_locked(ranks, launch, timeout, num_ranks) -> None:
    finished = threading.Event()
    remaining = [launch.program_count]
    lock = threading.Lock()

    def on_exit(program: _Program) -> None:
        with lock:
            remaining[0] -= 1
            if remaining[0] == 0 or program.error is not None:
                finished.set()

    programs = []
    for rank_launch in ranks:
        grid = rank_launch.bound.grid
        for idx in itertools.product(range(grid[0]), range(grid[1]), range(grid[2])):
            ctx = context.ProgramContext(launch, rank_launch.rank, num_ranks, idx, grid)
            programs.append(_Program(rank_launch.bound, ctx, on_exit))
    for program in programs:
        program.thread.start()

    completed = finished.wait(timeout)
    failed = next((p for p in programs if p.error is not None), None)
    if failed is not None:
        _abort(programs, launch)
        error = failed.error
        if hasattr(error, "add_note"):
            error.add_note(f"raised by {failed.ctx.describe()} of emulated kernel {launch.kernel_name}")
        raise error
    if not completed:
        report = _hang_report(programs, launch, timeout)
        _abort(programs, launch)
        unstoppable = len(_running(programs))
        if unstoppable:
            report += f"\n{unstoppable} program thread(s) could not be stopped and keep running in the background"
        raise EmulatorHang(report)


def _running(programs) -> list:
    return [(p.thread, p.ctx) for p in programs if p.thread.is_alive()]


def _hang_report(programs, launch, timeout) -> str:
    running = _running(programs)
    headline = (
        f"emulated kernel {launch.kernel_name} did not finish within {timeout:g} s; "
        f"{len(running)} of {launch.program_count} programs still running:"
    )
    lines = [headline, *watchdog.stuck_program_lines(running)]
    if launch.world is not None:
        lines += launch.world.signal_report()
    return "\n".join(lines)


def _abort(programs, launch) -> None:
    launch.aborted.set()
    launch.barrier.abort()
    deadline = time.monotonic() + JOIN_AFTER_ABORT_SECONDS
    for program in programs:
        if program.thread.is_alive():
            watchdog.interrupt(program.thread)
    for program in programs:
        program.thread.join(max(0.0, deadline - time.monotonic()))
