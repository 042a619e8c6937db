"""Whether a module is a test or a benchmark: code whose launches run at sizes its author picks and runs.

A grid that passes 65535 programs in a library launcher stays silent until a user sends a large input, which is
the trap real teams fixed; in a test or a benchmark the author runs the launch at the sizes the suite chooses, and a
size past the limit fails the first time the suite runs. ASC105 leaves such launches to its review sweep. Decided
from the path below the linted tree alone (a `tests/` or `benchmarks/` folder, `test_*.py`, `bench_*.py`,
`conftest.py`): a library module that imports pytest for a test of its own at the bottom is still a library.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import libcst as cst

from .module_facts import ModuleFacts

_FOLDERS = {"test", "tests", "testing", "unittest", "unittests", "unit_tests", "benchmark", "benchmarks", "bench",
            "benches"}
_DECODE = {"decode", "decoding"}
_FILE = re.compile(r"^(test_\w*|\w*_test|tests?|conftest|bench_\w*|benchmark_\w*|\w*_bench|\w*_benchmark)\.py$",
                   re.IGNORECASE)


def is_test_or_benchmark(facts: ModuleFacts) -> bool:
    """The module is a test or a benchmark by its path in the tree (cached on the facts)."""
    return facts.memo("test_or_benchmark", lambda: _decide(facts))


def launches_for_decode(facts: ModuleFacts, launch) -> bool:
    """The launch is written for decoding: the kernel or the host function that launches it is named for it
    (`paged_attention_decode`, `_decode_grouped_kernel`). Its row axis counts the requests of a decode step, one
    query row or a few per sequence, which stays small; the catalog counts that batch among the small axes."""
    names = [launch.kernel.name] if launch.kernel is not None else []
    names += [a.name.value for a in facts.index.ancestors(launch.call) if type(a) is cst.FunctionDef]
    return any(_DECODE & set(name.lower().split("_")) for name in names)


def _decide(facts: ModuleFacts) -> bool:
    path = facts.tree_path or (PurePosixPath(facts.filename.replace("\\", "/")).name if facts.filename else None)
    if path:
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if _FILE.match(parts[-1]) or any(part.lower() in _FOLDERS for part in parts[:-1]):
            return True
    return False
