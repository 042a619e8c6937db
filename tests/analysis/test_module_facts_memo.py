"""Per-module results of the shared analyses are kept through ``ModuleFacts.memo``: computed once, whichever rule
asks first, and dropped by ``release()`` with the rest of the facts."""

from __future__ import annotations

import libcst as cst

from ascendlint.analysis import grid, ub
from ascendlint.analysis.host_resolver import host_resolver
from ascendlint.analysis.launch_arguments import launches_of
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run(x):
    scale[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)
"""


def _facts() -> ModuleFacts:
    module = cst.parse_module(KERNEL)
    return ModuleFacts(module, NodeIndex(module))


def test_a_memo_is_computed_once_and_forgotten_on_release():
    facts = _facts()
    calls = []
    first = facts.memo("answer", lambda: calls.append(1) or [42])
    assert facts.memo("answer", lambda: calls.append(1) or [0]) is first
    assert calls == [1]
    facts.release()
    assert facts.__dict__ == {}
    assert facts.memo("answer", lambda: [7]) == [7]  # asked again after release: computed again


def test_the_shared_analyses_keep_their_results_in_the_memo():
    facts = _facts()
    resolver = host_resolver(facts)
    assert host_resolver(facts) is resolver
    (kernel,) = facts.kernels.values()
    assert launches_of(facts, kernel) == launches_of(facts, kernel) != []
    (launch,) = launches_of(facts, kernel)
    assert grid.launch_grid(facts, launch) is grid.launch_grid(facts, launch)
    estimates = ub.estimates(facts)
    assert ub.estimates(facts) is estimates
    assert {"host_resolver", "launch_grids", "launches_by_kernel", "ub_estimates"} <= set(facts.__dict__["_memos"])
    facts.release()
    assert "_memos" not in facts.__dict__
