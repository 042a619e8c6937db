"""Memory stays flat over a run: nothing of a linted file outlives its lint.

The peak-RSS measurement over long runs lives in the benchmark; this test checks the cause directly: after many
files, no per-file analysis object (module facts, kernel analyses, the tree) is still reachable.
"""

from __future__ import annotations

import gc

from ascendlint.linter import engine
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.catalog.registry import all_rules
from tests.robustness.harness import REPO


def _live(kind: type) -> int:
    gc.collect()
    return sum(1 for found in gc.get_objects() if type(found) is kind)  # isinstance would wake lazy modules


def test_per_file_analysis_objects_are_released_after_each_file():
    kernels = sorted((REPO / "reference_kernels").glob("*.py"))
    assert kernels
    rules = list(all_rules())
    before = _live(ModuleFacts)
    for _ in range(3):
        for path in kernels:
            engine.lint_text(path.read_text(encoding="utf-8"), str(path), rules)
    assert _live(ModuleFacts) == before
