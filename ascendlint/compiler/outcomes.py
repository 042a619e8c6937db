"""Compile verdicts for a module, as the rules read them: one outcome per stated configuration and target, with a
tile sized at run time (``next_power_of_2(n)``) compiled at powers of two up to a limit, its overflow reported from
the smallest size that overflows. Computed once per module and set of options, shared by every rule that asks."""

from __future__ import annotations

import json
from dataclasses import dataclass

from . import configs, service, toolchain
from . import verdict as v

SMALLEST_SWEPT = 16


@dataclass
class Outcome:
    request: configs.Request
    target: str
    verdict: v.Verdict
    overflow_from: int | None = None  # the runtime-sized constexpr overflows from this size up


def outcomes(facts, targets: tuple[str, ...], pointer_dtype: str, runtime_limit: int,
             declared: dict | None = None) -> list[Outcome]:
    key = f"compiler_outcomes:{targets}:{pointer_dtype}:{runtime_limit}:{json.dumps(declared, sort_keys=True)}"
    return facts.memo(key, lambda: _compute(facts, targets, pointer_dtype, runtime_limit, declared))


def _compute(facts, targets, pointer_dtype, runtime_limit, declared=None) -> list[Outcome]:
    if not toolchain.available() or not facts.kernels:
        return []
    found: list[Outcome] = []
    stated, swept = [], []
    for target in targets:
        for request in configs.requests(facts, target, pointer_dtype, declared):
            if request.job is None:
                found.append(Outcome(request, target, v.Verdict(v.NOT_COMPILED, message=request.reason)))
            elif request.runtime is not None:
                swept.append((request, target))
            else:
                stated.append((request, target))
    results = service.verdicts([r.job for r, _ in stated])
    found.extend(Outcome(r, t, results[r.job.key()]) for r, t in stated)
    found.extend(_sweep(swept, runtime_limit))
    return found


def _sizes(limit: int) -> list[int]:
    sizes, size = [], SMALLEST_SWEPT
    while size <= limit:
        sizes.append(size)
        size *= 2
    return sizes


def _fails(verdict: v.Verdict) -> bool:
    """Refused at this size: an on-chip overflow, or the frontend's own size limit or another rejection (a size the
    sweep assumed is searched down like an overflow, so the finding names the size it starts at)."""
    return verdict.status in (v.OVERFLOW, v.ERROR)


def _sweep(swept, limit: int) -> list[Outcome]:
    """Binary search, all requests a round at a time, for the smallest power of two that overflows."""
    if not swept:
        return []
    sizes = _sizes(limit)
    state = {i: (0, len(sizes) - 1, None, None) for i in range(len(swept))}  # low, high, first overflow, verdict
    top = service.verdicts([configs.with_value(r, r.runtime, sizes[-1]) for r, _ in swept])
    for i, (request, _) in enumerate(swept):
        verdict = top[configs.with_value(request, request.runtime, sizes[-1]).key()]
        if _fails(verdict):
            state[i] = (0, len(sizes) - 2, len(sizes) - 1, verdict)
        else:
            state[i] = (1, 0, None, verdict)  # fits at the limit (or no verdict): nothing to search
    while True:
        probes = {i: (low + high) // 2 for i, (low, high, _, _) in state.items() if low <= high}
        if not probes:
            break
        jobs = {i: configs.with_value(swept[i][0], swept[i][0].runtime, sizes[p]) for i, p in probes.items()}
        results = service.verdicts(list(jobs.values()))
        for i, position in probes.items():
            low, high, first, verdict = state[i]
            result = results[jobs[i].key()]
            if _fails(result):
                state[i] = (low, position - 1, position, result)
            else:
                state[i] = (position + 1, high, first, verdict)
    found = []
    for i, (request, target) in enumerate(swept):
        _, _, first, verdict = state[i]
        found.append(Outcome(request, target, verdict, sizes[first] if first is not None else None))
    return found
