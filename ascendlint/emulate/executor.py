"""Run the program instances of a combined launch, each in its own thread, one at a time.

Programs of a Triton grid may wait on each other (grid barriers, flags set by other programs, peer
ranks), so they cannot run one after another to completion as the stock interpreter does. Every
program (every vector sub-block of it, for a mix kernel) gets a thread with its own grid index, grid
size, rank and sub-block; the scheduler decides which one runs. The interpreter's ``tl`` patches are
applied once for the whole launch and undone at its end.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

from . import (
    bf16,
    bounds,
    context,
    hang_report,
    hazards,
    images,
    interpreter_patch,
    ordering,
    sub_blocks,
    transfers,
    visibility,
    watchdog,
)
from . import schedules as schedules_module
from .binding import BoundKernel
from .environment import import_triton
from .errors import EmulatorHang, ProgramAborted
from .model import FAITHFUL, DeviceModel
from .scheduler import Core, Scheduler
from .stand_ins import ascend_ops

MAX_PROGRAMS = 4096
JOIN_AFTER_ABORT_SECONDS = 2.0

_launch_lock = threading.Lock()


@dataclass
class RankLaunch:
    """One rank's share of one launch of a combined run (``stage``: its place in the rank's sequence)."""

    rank: int
    bound: BoundKernel
    stage: int = 0


class _Program:
    def __init__(self, bound: BoundKernel, ctx: context.ProgramContext) -> None:
        self.bound = bound
        self.ctx = ctx
        self.error: BaseException | None = None
        name = f"emulate-{bound.name}-{ctx.describe()}"
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            self._run_program()
        except ProgramAborted:  # delivered late, after the program had already finished
            pass

    def _run_program(self) -> None:
        _, _, interpreter = import_triton()
        ctx = self.ctx
        scheduler = ctx.launch.scheduler
        context.set_current(ctx)
        finished = False
        try:
            scheduler.wait_turn(ctx)
            interpreter.interpreter_builder.set_grid_dim(*ctx.grid_dim)
            interpreter.interpreter_builder.set_grid_idx(*ctx.grid_idx)
            self.bound.run_program()
            visibility.flush(ctx)
            transfers.complete(ctx)
            ordering.complete_loads(ctx)
            finished = True
        except ProgramAborted:
            return
        except BaseException as error:  # noqa: BLE001 - handed to the launching thread, which re-raises it
            self.error = error
            finished = True
        finally:
            context.set_current(None)
            if finished and not ctx.launch.aborted.is_set():
                scheduler.exit(ctx, failed=self.error is not None)


def prepare() -> None:
    """Install the interpreter changes every launch relies on (idempotent)."""
    interpreter_patch.install()
    bf16.install()
    hazards.install()
    visibility.install()
    ascend_ops.install()


def run(ranks: list[RankLaunch], *, hazards: bool, timeout: float, world=None,
        model: DeviceModel | None = None, schedules=None, check=None, compare_schedules=True,
        host_barriers: frozenset = frozenset()) -> None:
    """Run every program of every rank under each schedule; raise the first failure, naming its schedule.

    ``ranks`` may hold several launches per rank (``RankLaunch.stage``): each rank runs them in stage
    order, a stage starting on a rank once the rank's previous stage has ended there, or, for a stage in
    ``host_barriers``, once the previous stage has ended on every rank.
    ``schedules``: an ``Exploration``, a ``Schedule``, a token or a list (None: the default exploration;
    ``ASCENDLINT_EMULATE_SCHEDULE`` overrides). Memory is restored between schedules. ``check()``, when
    given, runs after each schedule (it raises on wrong results). ``compare_schedules``: True, every
    schedule must leave the memory the first one left; False, no comparison; a callable, it is called
    with no arguments after each schedule and returns a value (a canonical form of the results) that
    must be equal under every schedule.
    """
    prepare()
    model = FAITHFUL if model is None else model
    stages = _stages(ranks, model)
    total = sum(stage.program_count for stage in stages)
    if total > MAX_PROGRAMS:
        raise ValueError(f"the emulator runs at most {MAX_PROGRAMS} programs per launch (one thread each), got {total}")
    if total == 0:
        return
    planned = schedules_module.resolve(schedules)
    kernel_name = " then ".join(dict.fromkeys(stage.kernel_name for stage in stages))
    functions = list(dict.fromkeys(r.bound.fn for r in ranks))
    with _launch_lock, interpreter_patch.language_patched_for(functions[0], ascend_ops.launch_patches):
        for fn in functions[1:]:
            interpreter_patch.patch_language_for(fn)
        if world is not None:
            world.name_buffers(ranks)
        image = images.MemoryImage(ranks, world)
        regions = bounds.Regions.of_launch(ranks, world)
        initial = image.capture() if len(planned) > 1 else None
        comparison = images.ScheduleComparison(image, compare_schedules, kernel_name) if len(planned) > 1 else None
        steps_seen = None
        for index, schedule in enumerate(planned):
            schedule = schedules_module.with_steps(schedule, steps_seen or DEFAULT_STEP_ESTIMATE)
            if index:
                image.restore(initial)
            launch = context.LaunchState(kernel_name=kernel_name, program_count=total, hazards=hazards, world=world,
                                         model=model, sub_blocks=stages[0].sub_blocks, regions=regions,
                                         stage_count=len(stages))
            fresh = _stages(ranks, model)
            try:
                steps = _run_locked(ranks, launch, timeout, num_ranks=len({r.rank for r in ranks}) if world is not None
                                    else 1, strategy=schedule.strategy_object(), stages=fresh,
                                    host_barriers=host_barriers)
                if check is not None:
                    check()
                if comparison is not None:
                    comparison.after(schedule)
            except BaseException as error:
                _name_schedule(error, schedule, index, len(planned))
                raise
            if steps_seen is None:
                steps_seen = steps


def _stages(ranks: list[RankLaunch], model: DeviceModel) -> list[context.Stage]:
    """One ``Stage`` per launch of the sequence, counting its threads over every rank."""
    stages: dict[int, context.Stage] = {}
    for rank_launch in ranks:
        stage = stages.get(rank_launch.stage)
        if stage is None:
            per_program = model.vector_sub_blocks if sub_blocks.is_mix_kernel(rank_launch.bound.fn) else 1
            stage = stages[rank_launch.stage] = context.Stage(rank_launch.stage, rank_launch.bound.name,
                                                              sub_blocks=per_program)
        stage.program_count += _program_count(rank_launch.bound.grid) * stage.sub_blocks
    return [stages[index] for index in sorted(stages)]


# PCT draws its change points from the step count of the first schedule; a lone pct schedule without one uses this.
DEFAULT_STEP_ESTIMATE = 1000


def _name_schedule(error: BaseException, schedule, index: int, count: int) -> None:
    error.schedule = schedule
    replay = getattr(error, "replay", None) or schedule.token
    note = (f"under emulated schedule {schedule.token} ({index + 1} of {count} explored); replay it with "
            f"schedules={replay!r} or {schedules_module.REPLAY_VARIABLE}={replay}")
    if hasattr(error, "add_note"):
        error.add_note(note)
    if isinstance(error, EmulatorHang):
        error.report += "\n" + note


def _program_count(grid: tuple) -> int:
    return grid[0] * grid[1] * grid[2]


def _run_locked(ranks, launch, timeout, num_ranks, strategy=None, stages=None, host_barriers=frozenset()) -> int:
    programs, cores = [], []
    stage_of = {stage.index: stage for stage in stages}
    for rank_launch in ranks:
        grid = rank_launch.bound.grid
        stage = stage_of[rank_launch.stage]
        for idx in itertools.product(range(grid[0]), range(grid[1]), range(grid[2])):
            core = []
            for sub_block in range(stage.sub_blocks):
                ctx = context.ProgramContext(launch, rank_launch.rank, num_ranks, idx, grid, sub_block=sub_block,
                                             stage=stage)
                visibility.attach(ctx)
                launch.programs.append(ctx)
                core.append(_Program(rank_launch.bound, ctx))
            programs.extend(core)
            cores.append(Core(rank_launch.rank, core, stage.index))
    scheduler = Scheduler(launch, cores, launch.model.resident_programs, launch.model.yield_on_signal, strategy,
                          host_barriers=host_barriers)
    launch.scheduler = scheduler
    scheduler.begin()

    completed = scheduler.finished.wait(timeout)
    failed = next((p for p in programs if p.error is not None), None)
    if failed is not None:
        _abort(programs, launch)
        error = failed.error
        if hasattr(error, "add_note"):
            error.add_note(f"raised by {failed.ctx.describe()} of emulated kernel {failed.ctx.stage.kernel_name}")
        raise error
    if scheduler.deadlocked or not completed:
        report = hang_report.build(programs, launch, timeout, deadlocked=scheduler.deadlocked)
        _abort(programs, launch)
        unstoppable = len(_running(programs))
        if unstoppable:
            report += f"\n{unstoppable} program thread(s) could not be stopped and keep running in the background"
        raise EmulatorHang(report)
    return scheduler.steps


def _running(programs) -> list:
    return [(p.thread, p.ctx) for p in programs if p.thread.is_alive()]


def _abort(programs, launch) -> None:
    launch.aborted.set()
    launch.scheduler.abort(programs)
    deadline = time.monotonic() + JOIN_AFTER_ABORT_SECONDS
    for program in programs:
        if program.thread.is_alive() and program.ctx.blocked_on is None:
            watchdog.interrupt(program.thread)
    for program in programs:
        if program.thread.ident is not None:
            program.thread.join(max(0.0, deadline - time.monotonic()))
