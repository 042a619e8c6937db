"""Nothing a lint builds for one file outlives it: module facts, kernel analyses and grid caches are dropped
with the file, so memory stays flat over a run of any length."""

from __future__ import annotations

import gc
import weakref

from ascendlint import engine
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.registry import all_rules

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def kernel(x, cu, T, H, K, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu + i_n).to(tl.int32)
    for i_t in range(0, tl.cdiv(T, BT)):
        tl.store(x + (bos * H + i_h) * K + i_t * BT + tl.arange(0, BT), 0.0)

def launch(x, cu):
    kernel[(triton.cdiv(x.shape[0], 16), 4)](x, cu, x.shape[0], 4, 64, BT=16)
"""


def test_module_facts_and_analyses_are_released_after_each_file(monkeypatch):
    made: list[weakref.ref] = []

    class Tracked(ModuleFacts):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    monkeypatch.setattr(engine, "ModuleFacts", Tracked)
    rules = [rule for rule in all_rules() if not rule.tool_rule]
    for _ in range(5):
        assert engine.lint_text(KERNEL, "k.py", rules)  # findings were made, so every analysis ran
    gc.collect()
    assert len(made) == 5
    assert [ref for ref in made if ref() is not None] == []
