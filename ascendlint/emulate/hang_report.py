"""What an ``EmulatorHang`` says: where every stuck program is, and what the others did.

For a deadlock the useful facts are the programs still running (kernel line, what they wait for),
the programs that never started (not resident, or their launch waits for an earlier one), the
programs that already ended and, when some wait in a barrier, how many barriers each program
reached: a barrier inside a loop whose trip count differs between programs shows up as programs
that ended one barrier short. Signal slots are listed last, named after the launch arguments.
"""

from __future__ import annotations

from . import watchdog

MAX_LISTED = 48


def build(programs, launch, timeout, deadlocked: bool) -> str:
    running = [(p.thread, p.ctx) for p in programs if p.thread.is_alive()]
    if deadlocked:
        headline = (
            f"emulated kernel {launch.kernel_name} is deadlocked: every program still running waits for something "
            f"no running program will do; {len(running)} of {launch.program_count} programs still running:"
        )
    else:
        headline = (
            f"emulated kernel {launch.kernel_name} did not finish within {timeout:g} s; "
            f"{len(running)} of {launch.program_count} programs still running:"
        )
    lines = [headline, *watchdog.stuck_program_lines(running)]
    lines += _not_started(launch)
    lines += _barrier_lines(programs, launch)
    if launch.world is not None:
        lines += launch.world.signal_report()
    return "\n".join(lines)


def _not_started(launch) -> list[str]:
    lines = []
    resident = launch.model.resident_programs
    for (rank, stage), count in sorted(launch.scheduler.not_started().items()):
        who = f"rank {rank}: " if launch.world is not None else ""
        if stage is None:
            lines.append(f"  {who}{count} program(s) never started: only {resident} programs per rank are resident, "
                         "the others start when one ends, so programs that wait for them never wake")
        else:
            lines.append(f"  {who}{count} program(s) of launch {stage} never started: a launch starts on a rank only "
                         "once the rank's previous launch has ended")
    return lines


def _barrier_lines(programs, launch) -> list[str]:
    """Exited programs and barrier counts, for every launch in which some program waits in a barrier."""
    lines = []
    stages = []
    for program in programs:
        blocked = program.ctx.blocked_on or ""
        if "barrier_all" in blocked and program.ctx.stage not in stages:
            stages.append(program.ctx.stage)
    for stage in stages:
        members = [p for p in programs if p.ctx.stage is stage]
        exited = [p.ctx for p in members if p.thread.ident is not None and not p.thread.is_alive()]
        where = f" of {stage.describe()}" if launch.stage_count > 1 else ""
        counts = {}
        for program in members:
            reached = stage.barrier_counts.get(id(program.ctx), 0)
            counts.setdefault(reached, []).append(program.ctx)
        lines.append(f"barriers reached per program{where} (a program waiting in one counts it):")
        for reached, contexts in sorted(counts.items()):
            names = ", ".join(ctx.describe() for ctx in contexts[:MAX_LISTED])
            more = f" and {len(contexts) - MAX_LISTED} more" if len(contexts) > MAX_LISTED else ""
            lines.append(f"  {reached}: {names}{more}")
        if exited:
            names = ", ".join(ctx.describe() for ctx in exited[:MAX_LISTED])
            more = f" and {len(exited) - MAX_LISTED} more" if len(exited) > MAX_LISTED else ""
            lines.append(f"  ended without reaching the barrier the others wait in: {names}{more}")
    return lines
