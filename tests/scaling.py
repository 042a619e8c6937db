"""Helpers for tests that guard against superlinear work by counting steps, never by timing.

A step is whatever a test chooses to count: calls of one function or method (``count_calls``), nodes visited,
fixed-point passes. The inputs are generated from this repository's own kernels (``bench.generate``), so a test
can ask for a kernel module of any length without shipping one.

    with count_calls(SomeClass, "method") as counter:
        lint(long_module)
    steps[lines] = counter.calls
    assert growth(steps) <= 1.2
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps

from bench import generate


def kernel_module(lines: int, decorate: bool = False) -> str:
    """A valid module of at least ``lines`` lines of renamed copies of the repository's kernels and examples."""
    return generate.kernel_module(lines, decorate)


def repeated(text: str, times: int) -> str:
    """``text`` (a whole module) repeated ``times`` times in one module, top-level names renamed per copy."""
    return generate.repeated(text, times)


@dataclass
class Counter:
    calls: int = 0


@contextmanager
def count_calls(owner, attribute: str):
    """Count calls of ``owner.attribute`` (a function of a module, or a method of a class) inside the block."""
    original = getattr(owner, attribute)
    own = attribute in vars(owner)
    counter = Counter()
    if isinstance(vars(owner).get(attribute), (staticmethod, classmethod)):
        raise TypeError("count the function a static or class method wraps instead")

    @wraps(original)
    def counted(*args, **kwargs):
        counter.calls += 1
        return original(*args, **kwargs)

    setattr(owner, attribute, counted)
    try:
        yield counter
    finally:
        if own:
            setattr(owner, attribute, original)
        else:
            delattr(owner, attribute)


def growth(steps: dict[int, float]) -> float:
    """The largest ``steps[n] / (n / n0 * steps[n0])`` over the sizes measured (n0 the smallest): 1.0 is linear.

    ``steps`` maps an input size (lines, copies) to the steps counted for it.
    """
    smallest = min(steps)
    base = steps[smallest]
    if base <= 0:
        raise ValueError("the smallest input counted no step: nothing to compare with")
    return max(count / (size / smallest * base) for size, count in steps.items())
