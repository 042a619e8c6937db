"""The shared analysis costs a number of steps linear in the size of a kernel, whatever its branching: counted
in transfer-function calls of the data-flow solver (``flow.steps_taken``), not in seconds, so a superlinear
regression fails deterministically on any machine."""

from __future__ import annotations

import pytest

from ascendlint.linter import engine
from ascendlint.analysis import flow
from ascendlint.catalog.registry import all_rules

RULES = [rule for rule in all_rules() if not rule.tool_rule]


def _steps(source: str) -> int:
    before = flow.steps_taken
    engine.lint_text(source, "generated.py", RULES)
    return flow.steps_taken - before


def _branchy_while(branches: int) -> str:
    """A while loop whose body is an if/elif chain that updates the loop variable in every branch: the shape
    that made the old recursive analysis exponential."""
    arms = []
    for i in range(branches):
        keyword = "if" if i == 0 else "elif"
        arms.append(f"        {keyword} k == {i}:\n            i = i + {i + 1}\n            acc += i * T")
    body = "\n".join(arms)
    return f"""
import triton
import triton.language as tl

@triton.jit
def kernel(x, T, BT: tl.constexpr):
    i = tl.program_id(0)
    acc = 0
    k = tl.load(x)
    while i < T:
{body}
        else:
            i = i + 1
        tl.store(x + i * T + tl.arange(0, BT), acc)
"""


def _long_kernel(blocks: int) -> str:
    """A kernel of ``blocks`` repeated loop nests with branches, loads and pointer arithmetic."""
    parts = []
    for b in range(blocks):
        parts.append(
            f"""
    for i_t{b} in range(0, tl.cdiv(T, BT)):
        if i_t{b} % 2 == 0:
            o{b} = i_t{b} * BT + tl.arange(0, BT)
        else:
            o{b} = i_t{b} * BT + tl.arange(0, BT) + 1
        for i_k{b} in range(0, 4):
            b{b} = tl.load(x + (bos * H + i_h) * K + o{b}, mask=o{b} < T)
            tl.store(y + (bos * H + i_h) * K + o{b} + i_k{b}, b{b} * 2.0)"""
        )
    return f"""
import triton
import triton.language as tl

@triton.jit
def kernel(x, y, cu, T, H, K, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu + i_n)
{''.join(parts)}
"""


@pytest.mark.parametrize("branches", [6, 8, 10, 20, 40])
def test_an_elif_chain_inside_a_while_loop_costs_steps_linear_in_its_branches(branches):
    per_branch = _steps(_branchy_while(branches)) / branches
    assert per_branch < 60, f"{per_branch:.0f} steps per branch"


def test_doubling_a_kernel_at_most_doubles_the_steps():
    small, large = _steps(_long_kernel(20)), _steps(_long_kernel(40))
    assert large <= 2.2 * small, (small, large)
    branchy_small, branchy_large = _steps(_branchy_while(20)), _steps(_branchy_while(40))
    assert branchy_large <= 2.2 * branchy_small, (branchy_small, branchy_large)


def test_deeply_nested_loops_do_not_multiply_the_steps():
    """Every loop-carried name can change a bounded number of times (the lattice height), so doubling the depth
    of a nest whose every level carries a value costs at most four times the steps (twice the points, each seeing
    twice the carried names), never the 2**depth of re-running each inner loop per outer pass."""
    def nested(depth: int) -> str:
        lines = ["import triton", "import triton.language as tl", "", "@triton.jit", "def kernel(x, T):",
                 "    acc = tl.program_id(0)"]
        for level in range(depth):
            lines.append("    " * (level + 1) + f"for i{level} in range(0, T):")
            lines.append("    " * (level + 2) + f"acc = acc + i{level} * T")
        lines.append("    " * (depth + 1) + "tl.store(x + acc * T, 0.0)")
        return "\n".join(lines) + "\n"

    shallow, deep = _steps(nested(4)), _steps(nested(8))
    assert deep <= 4 * shallow, (shallow, deep)
