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

from .module_facts import ModuleFacts

_FOLDERS = {"test", "tests", "testing", "unittest", "unittests", "unit_tests", "benchmark", "benchmarks", "bench",
            "benches"}
_FILE = re.compile(r"^(test_\w*|\w*_test|tests?|conftest|bench_\w*|benchmark_\w*|\w*_bench|\w*_benchmark)\.py$",
                   re.IGNORECASE)


def is_test_or_benchmark(facts: ModuleFacts) -> bool:
    """The module is a test or a benchmark by its path in the tree (cached on the facts)."""
    return facts.memo("test_or_benchmark", lambda: _decide(facts))


def _decide(facts: ModuleFacts) -> bool:
    path = facts.tree_path or (PurePosixPath(facts.filename.replace("\\", "/")).name if facts.filename else None)
    if path:
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if _FILE.match(parts[-1]) or any(part.lower() in _FOLDERS for part in parts[:-1]):
            return True
    return False
