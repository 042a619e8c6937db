"""Which interleavings an emulated launch explores, and how one of them is named and replayed.

Program threads run one at a time (see ``scheduler.py``); at every *scheduling point* the running
thread may be preempted. The points are every signal operation (``dl.notify``, ``signal_op``,
``putmem_signal``, ``int_p``, an atomic), every wait (``dl.wait``, ``signal_wait_until``,
``barrier_all``), every UDMA transfer and every ``tl.load``/``tl.store`` that touches symmetric
memory (every load and store in a single-device launch, where all memory is shared). Which thread
runs next at a point is the *strategy*'s decision, and a strategy is deterministic given its seed,
so a schedule is a value (``Schedule``) that replays exactly.

Three strategies, from the systematic concurrency testing literature:

* ``fixed``: the emulator's own order (programs start last-first, a thread runs until it blocks,
  spins or, with ``yield_on_signal``, sets a signal, and then the longest-waiting thread goes). It
  needs no seed and is always the first schedule of an exploration.
* ``random``: at every scheduling point the next thread is drawn uniformly from the running one and
  every runnable one (the random walk of Shuttle's ``RandomScheduler`` and Coyote's random
  strategy), over a fixed list of seeds.
* ``pct``: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, "A
  Randomized Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010). Every thread
  gets a distinct random priority when it starts, the highest-priority runnable thread always runs,
  and at ``depth - 1`` steps drawn at random from ``1..steps`` the running thread's priority drops
  below every initial priority. A bug of depth ``d`` (``d`` ordering constraints) among ``n`` threads
  and ``k`` steps is found by one run with probability at least ``1 / (n * k**(d-1))``; ``steps`` is
  the number of scheduling points the fixed schedule took, as the paper estimates ``k`` from a run.

Spin points (a volatile load, an atomic) always hand over to another runnable thread when there is
one, under every strategy, and under ``pct`` the spinning thread's priority drops below everyone's:
a spinning thread makes no progress until another runs. This is the fairness CHESS adds (Musuvathi
and Qadeer, "Fair Stateless Model Checking", PLDI 2008: a thread that yields loses priority) so that
a priority scheduler cannot starve the thread being waited for.

A failing launch names its schedule (``Schedule.token``, e.g. ``pct:7:d3:k812``) in a note on the
exception and in ``error.schedule``, as Shuttle prints a failing seed and replays it from an
argument or an environment variable (``SHUTTLE_RANDOM_SEED``). Replay it with ``schedules=Schedule.parse(token)`` (or the
token string) on ``launch`` / ``World.launch``, or from outside the code by setting the environment
variable ``ASCENDLINT_EMULATE_SCHEDULE`` to the token, which makes every emulated launch of the
process run that one schedule (``ASCENDLINT_EMULATE_SCHEDULE=pct:7:d3:k812 pytest tests/... -k ...``).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, replace

REPLAY_VARIABLE = "ASCENDLINT_EMULATE_SCHEDULE"
STRATEGIES = ("fixed", "random", "pct")
DEFAULT_DEPTH = 3


@dataclass(frozen=True)
class Schedule:
    """One interleaving: a strategy and its seed (``pct`` also its depth and step estimate)."""

    strategy: str = "fixed"
    seed: int = 0
    depth: int = DEFAULT_DEPTH
    steps: int | None = None  # pct: the step count change points are drawn from (None: taken from the fixed run)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown schedule strategy {self.strategy!r}; use one of {', '.join(STRATEGIES)}")
        if self.depth < 1:
            raise ValueError(f"a pct schedule needs depth >= 1, got {self.depth}")

    @property
    def token(self) -> str:
        """The text that names this schedule for ``Schedule.parse`` and ``ASCENDLINT_EMULATE_SCHEDULE``."""
        if self.strategy == "fixed":
            return "fixed"
        if self.strategy == "random":
            return f"random:{self.seed}"
        steps = "" if self.steps is None else f":k{self.steps}"
        return f"pct:{self.seed}:d{self.depth}{steps}"

    def __str__(self) -> str:
        return self.token

    @classmethod
    def parse(cls, token: str) -> Schedule:
        """``fixed``, ``random:SEED`` or ``pct:SEED[:dDEPTH][:kSTEPS]``."""
        parts = token.strip().split(":")
        strategy, rest = parts[0].lower(), parts[1:]
        try:
            if strategy == "fixed" and not rest:
                return cls("fixed")
            if strategy == "random" and len(rest) == 1:
                return cls("random", int(rest[0]))
            if strategy == "pct" and 1 <= len(rest) <= 3:
                fields = {"seed": int(rest[0])}
                for part in rest[1:]:
                    key = {"d": "depth", "k": "steps"}[part[0]]
                    fields[key] = int(part[1:])
                return cls("pct", **fields)
        except (KeyError, ValueError, IndexError):
            pass
        raise ValueError(f"cannot read schedule {token!r}: expected fixed, random:SEED or pct:SEED[:dDEPTH][:kSTEPS]")

    def strategy_object(self) -> Strategy:
        if self.strategy == "fixed":
            return FixedOrder()
        if self.strategy == "random":
            return RandomWalk(self.seed)
        return PriorityChangePoints(self.seed, self.depth, self.steps or 1)


@dataclass(frozen=True)
class Exploration:
    """The schedules a launch runs: the fixed one, then ``random`` random walks, then ``pct`` PCT runs.

    Seeds are ``first_seed, first_seed + 1, ...`` for each strategy. The launch stops at the first
    schedule that fails and raises its error, naming the schedule.
    """

    random: int = 4
    pct: int = 4
    depth: int = DEFAULT_DEPTH
    first_seed: int = 0

    def schedules(self) -> list[Schedule]:
        seeds = range(self.first_seed, self.first_seed + max(self.random, self.pct))
        found = [Schedule("fixed")]
        found += [Schedule("random", s) for s in seeds[:self.random]]
        found += [Schedule("pct", s, self.depth) for s in seeds[:self.pct]]
        return found


DEFAULT_EXPLORATION = Exploration()
FIXED_ONLY = Exploration(random=0, pct=0)


def resolve(schedules) -> list[Schedule]:
    """The schedules to run for a launch's ``schedules=`` argument (None: the default exploration).

    ``ASCENDLINT_EMULATE_SCHEDULE``, when set, replaces them with the schedules it names. A token may
    name several schedules separated by commas (``"fixed,pct:0:d3:k696"``): that is how a
    ``ScheduleDependentResult``, which needs both schedules it compared, is replayed.
    """
    forced = os.environ.get(REPLAY_VARIABLE, "").strip()
    if forced:
        return _parse_list(forced)
    if schedules is None:
        return DEFAULT_EXPLORATION.schedules()
    if isinstance(schedules, Exploration):
        return schedules.schedules()
    if isinstance(schedules, str):
        return _parse_list(schedules)
    if isinstance(schedules, Schedule):
        schedules = [schedules]
    found = [Schedule.parse(s) if isinstance(s, str) else s for s in schedules]
    if not found or not all(isinstance(s, Schedule) for s in found):
        raise TypeError("schedules= takes an Exploration, a Schedule, a schedule token or a list of them")
    return found


def _parse_list(tokens: str) -> list[Schedule]:
    return [Schedule.parse(token) for token in tokens.split(",") if token.strip()]


def with_steps(schedule: Schedule, steps: int) -> Schedule:
    """A pct schedule without a step estimate gets ``steps`` (the fixed run's count)."""
    if schedule.strategy == "pct" and schedule.steps is None:
        return replace(schedule, steps=max(1, steps))
    return schedule


# --- strategies -------------------------------------------------------------------------------------------
#
# ``choose(current, runnable, kind)`` picks the thread to run next. ``current`` is the thread at the
# scheduling point (None when it blocked or ended), ``runnable`` the other threads ready to run, in the order
# they became ready. ``kind`` is "access" (a preemption point), "signal" (right after a signal was set),
# "spin" (a volatile load or an atomic: hand over when anyone else can run) or "start" / "block" / "exit".


class Strategy:
    def started(self, thread) -> None:
        """A thread became runnable for the first time."""

    def choose(self, current, runnable: list, kind: str):
        raise NotImplementedError


class FixedOrder(Strategy):
    """Run until blocked; hand over to the longest-waiting thread after a signal or a spin."""

    def choose(self, current, runnable, kind):
        if current is None:
            return runnable[0]
        if kind in ("signal", "spin") and runnable:
            return runnable[0]
        return current


def _candidates(current, runnable, kind) -> list:
    if current is None or (kind == "spin" and runnable):
        return list(runnable)
    return [current, *runnable]


class RandomWalk(Strategy):
    """Uniformly random among the current thread and every runnable one, at every point."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(f"random:{seed}")

    def choose(self, current, runnable, kind):
        return self._random.choice(_candidates(current, runnable, kind))


class PriorityChangePoints(Strategy):
    """PCT: the highest-priority runnable thread runs; at ``depth - 1`` random steps the running one drops."""

    def __init__(self, seed: int, depth: int, steps: int) -> None:
        self._random = random.Random(f"pct:{seed}")
        self._priority: dict[int, int] = {}
        self._depth = depth
        points = self._random.sample(range(1, steps + 1), min(depth - 1, steps))
        self._change_at = {step: depth - 1 - index for index, step in enumerate(sorted(points))}
        self._step = 0

    def started(self, thread) -> None:
        # initial priorities lie above every lowered one (0 .. depth - 2) and are distinct, in random order
        self._priority[id(thread)] = self._depth + self._random.random()

    def choose(self, current, runnable, kind):
        self._step += 1
        lowered = self._change_at.get(self._step)
        if lowered is not None and current is not None:
            self._priority[id(current)] = lowered
        if kind == "spin" and current is not None and runnable:
            # fairness: a spinning thread goes below everyone, so the one it waits for gets to run
            self._priority[id(current)] = min(self._priority.values()) - 1
        candidates = _candidates(current, runnable, kind)
        return max(candidates, key=lambda thread: self._priority.get(id(thread), 0))
