"""One program thread runs at a time; where it may be preempted and who runs next is a schedule's choice.

A program thread hands over only at scheduling points (see ``schedules.py``): when it blocks
(``dl.wait``, ``barrier_all``, ``signal_wait_until``), when it spins (a volatile load, an atomic),
right after it sets a signal, and at every wait, signal, transfer and load or store of shared memory
(``point``). The schedule's strategy decides, at each point, whether the running thread goes on or
which runnable thread takes over. Since only one thread runs at a time and every decision comes from
the strategy (seeded), a schedule replays exactly. When every program is blocked and none can be
woken, the launch is deadlocked and reports at once instead of waiting for a timeout.

Residency: only ``resident_programs`` programs (cores) of a rank run at once; the next one starts
when a running one ends, as the device runs a grid larger than its core count in batches.

Launch streams: a rank may run a sequence of launches (stages). Its programs of stage k+1 start only
once all its programs of stage k have ended, as a device stream runs one kernel after the other, but
ranks advance independently: rank 0 may be in stage k+1 while rank 1 is still in stage k. A stage
listed in ``host_barriers`` starts on any rank only once the previous stage has ended on every rank
(a host barrier or stream synchronisation between the launches).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from .errors import ProgramAborted
from .schedules import FixedOrder, Strategy


class Core:
    """The threads of one program (one per vector sub-block) and how many of them are still running."""

    def __init__(self, rank: int, programs: list, stage: int = 0) -> None:
        self.rank = rank
        self.programs = programs
        self.stage = stage
        self.running = len(programs)


class Scheduler:
    def __init__(self, launch, cores: list[Core], resident: int | None, yield_on_signal: bool,
                 strategy: Strategy | None = None, host_barriers=frozenset()) -> None:
        self.launch = launch
        self.yield_on_signal = yield_on_signal
        self.strategy = strategy or FixedOrder()
        self.steps = 0  # scheduling points passed, over every thread
        self.finished = threading.Event()
        self.deadlocked = False
        self._lock = threading.Lock()
        self._runnable: list = []  # ready to run, in the order they became ready
        self._blocked: list[tuple[object, Callable[[], bool]]] = []
        self._alive = 0
        self._resident = resident
        self._host_barriers = frozenset(host_barriers)
        self._waiting_to_start: dict[int, deque] = {}
        self._cores_running: dict[int, int] = {}
        self._unfinished: dict[tuple[int, int], int] = {}  # (rank, stage) -> cores not ended yet
        self._core_of: dict[int, Core] = {}
        ranks = sorted({core.rank for core in cores})
        for core in cores:
            key = (core.rank, core.stage)
            self._unfinished[key] = self._unfinished.get(key, 0) + 1
        self._stages = sorted({core.stage for core in cores})
        for rank in ranks:
            of_rank = sorted((core for core in cores if core.rank == rank), key=lambda core: core.stage)
            self._waiting_to_start[rank] = deque(of_rank)
            self._cores_running[rank] = 0
        self._initial = _interleave_ranks(self._admit_locked())[::-1]

    # -- driven by the launching thread ---------------------------------------------------------------
    def begin(self) -> None:
        """Start the resident programs and hand the first turn over."""
        with self._lock:
            for core in self._initial:
                self._start_locked(core)
            self._dispatch_locked()

    def not_started(self) -> dict[tuple, int]:
        """(rank, stage) -> number of programs that never got a core; stage None when only residency held them."""
        counts: dict[tuple, int] = {}
        for rank, waiting in self._waiting_to_start.items():
            for core in waiting:
                key = (rank, None if self._stage_open(rank, core.stage) else core.stage)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def abort(self, programs) -> None:
        for program in programs:
            program.ctx.turn.set()

    # -- called by program threads ---------------------------------------------------------------------
    def wait_turn(self, ctx) -> None:
        ctx.turn.wait()
        ctx.turn.clear()
        if self.launch.aborted.is_set():
            raise ProgramAborted()

    def point(self, ctx, kind: str = "access") -> None:
        """A scheduling point of the running program ``ctx``: the strategy picks who runs on."""
        with self._lock:
            self.steps += 1
            self._wake_locked()
            if not self._runnable:
                return
            chosen = self.strategy.choose(ctx, list(self._runnable), kind)
            if chosen is ctx:
                return
            self._take_locked(chosen)
            self._runnable.append(ctx)
            chosen.turn.set()
        self.wait_turn(ctx)

    def yield_turn(self, ctx) -> None:
        """A spin point: let another runnable program (or one woken meanwhile) go first."""
        self.point(ctx, "spin")

    def after_signal(self, ctx) -> None:
        """A signal was just set: with ``yield_on_signal``, the programs it woke may act on it first."""
        if self.yield_on_signal:
            self.point(ctx, "signal")

    def block_until(self, ctx, satisfied: Callable[[], bool], description: str) -> None:
        """Return once ``satisfied()`` holds; other programs run meanwhile."""
        if satisfied():
            return
        ctx.blocked_on = description
        try:
            with self._lock:
                self._blocked.append((ctx, satisfied))
                self._dispatch_locked()
            self.wait_turn(ctx)
        finally:
            ctx.blocked_on = None

    def exit(self, ctx, failed: bool) -> None:
        with self._lock:
            self._alive -= 1
            core = self._core_of[id(ctx)]
            core.running -= 1
            if failed:
                self.finished.set()
                return
            if core.running == 0:
                self._cores_running[core.rank] -= 1
                self._unfinished[(core.rank, core.stage)] -= 1
                for admitted in self._admit_locked():
                    self._start_locked(admitted)
            self._dispatch_locked()

    # -- internals (hold the lock) ---------------------------------------------------------------------
    def _stage_open(self, rank: int, stage: int) -> bool:
        """Whether ``rank`` may start programs of ``stage``: its earlier launches (everyone's, after a host
        barrier) have ended."""
        earlier = [s for s in self._stages if s < stage]
        ranks = self._cores_running if stage in self._host_barriers else (rank,)
        return all(self._unfinished.get((r, s), 0) == 0 for r in ranks for s in earlier)

    def _admit_locked(self) -> list[Core]:
        """Take the cores that may start now off the waiting queues (residency and launch order allowing)."""
        admitted = []
        for rank, waiting in self._waiting_to_start.items():
            while waiting and (self._resident is None or self._cores_running[rank] < self._resident) \
                    and self._stage_open(rank, waiting[0].stage):
                admitted.append(waiting.popleft())
                self._cores_running[rank] += 1
        return admitted

    def _start_locked(self, core: Core) -> None:
        for program in core.programs:
            self._core_of[id(program.ctx)] = core
            self._alive += 1
            self._runnable.append(program.ctx)
            self.strategy.started(program.ctx)
            program.thread.start()

    def _take_locked(self, chosen) -> None:
        for index, ctx in enumerate(self._runnable):
            if ctx is chosen:
                del self._runnable[index]
                return
        raise AssertionError("the strategy chose a program that is not runnable")

    def _wake_locked(self) -> None:
        still = []
        for ctx, satisfied in self._blocked:
            if satisfied():
                self._runnable.append(ctx)
            else:
                still.append((ctx, satisfied))
        self._blocked = still

    def _dispatch_locked(self) -> None:
        self._wake_locked()
        if self._runnable:
            self.steps += 1
            chosen = self.strategy.choose(None, list(self._runnable), "block")
            self._take_locked(chosen)
            chosen.turn.set()
        elif self._alive == 0 and not any(self._waiting_to_start.values()):
            self.finished.set()
        else:
            self.deadlocked = True
            self.finished.set()


def _interleave_ranks(cores: list[Core]) -> list[Core]:
    """Program 0 of every rank, then program 1 of every rank, ...: ranks advance side by side."""
    by_rank: dict[int, list[Core]] = {}
    for core in cores:
        by_rank.setdefault(core.rank, []).append(core)
    order = []
    depth = max((len(v) for v in by_rank.values()), default=0)
    for i in range(depth):
        for rank in sorted(by_rank):
            if i < len(by_rank[rank]):
                order.append(by_rank[rank][i])
    return order
