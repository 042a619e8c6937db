"""The process pool: same results, same order and same fixes as the serial run."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from ascendlint import parallel
from ascendlint.config import Settings
from ascendlint.registry import all_rules
from ascendlint.runner import Linter, Options

REPO = Path(__file__).resolve().parents[1]
EXTRA_FILES = {
    "broken.py": "import triton\ndef f(:\n    pass\n",
    "plain.py": "def f(:\n",
    "launch.py": "import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4, num_stages=3)\n",
    "latin1.py": b"import triton\nname = '\xe9'\n",
}


@pytest.fixture
def tree(tmp_path) -> list[Path]:
    """The bundled examples and reference kernels plus files that fail in every way a file can."""
    for folder in ("examples", "reference_kernels"):
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name, content in EXTRA_FILES.items():
        target = tmp_path / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (tmp_path / "folder.py").mkdir()
    return sorted(tmp_path.rglob("*.py"))


def _run(root: Path, paths: list[Path], options: Options, jobs: int):
    linter = Linter(list(all_rules()), Settings(root=root))
    return [dataclasses.asdict(result) for result in parallel.lint_paths(linter, paths, options, jobs)]


@pytest.mark.parametrize("options", [Options(), Options(diff=True, unsafe_fixes=True)], ids=["lint", "diff"])
def test_pool_results_equal_serial_results(tmp_path, tree, options, monkeypatch):
    serial = _run(tmp_path, tree, options, jobs=1)
    pools = []
    real_pool = parallel._in_pool
    monkeypatch.setattr(parallel, "_in_pool", lambda *args: pools.append(args[-1]) or real_pool(*args))
    pooled = _run(tmp_path, tree, options, jobs=2)
    assert pools == [2]
    assert pooled == serial
    assert any(result["diagnostics"] for result in serial)
    assert any(result["error"] for result in serial)


def test_pool_fix_writes_the_same_files_as_serial_fix(tmp_path, tree):
    originals = {path: path.read_bytes() for path in tree if path.is_file()}
    options = Options(fix=True, unsafe_fixes=True)
    serial = _run(tmp_path, tree, options, jobs=1)
    serial_files = {path: path.read_bytes() for path in originals}
    for path, data in originals.items():
        path.write_bytes(data)
    pooled = _run(tmp_path, tree, options, jobs=2)
    assert pooled == serial
    assert {path: path.read_bytes() for path in originals} == serial_files
    assert serial_files != originals


@pytest.mark.parametrize(
    "jobs, files, size, expected",
    [
        (1, 50, 10**7, 1),
        (3, 2, 10**7, 2),
        (0, parallel.MIN_PARALLEL_FILES - 1, 10**7, 1),
        (0, 50, parallel.MIN_PARALLEL_BYTES - 1, 1),
        (0, 1, 10**7, 1),
    ],
)
def test_worker_count_respects_requests_and_thresholds(jobs, files, size, expected):
    assert parallel.worker_count(jobs, files, size) == expected


def test_auto_worker_count_uses_the_available_cores(monkeypatch):
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    assert parallel.worker_count(0, 50, 10**7) == 2


def test_cli_output_is_identical_with_and_without_the_pool(cli, tmp_path, tree):
    args = ("check", str(tmp_path), "--no-cache", "--format", "json")
    serial, pooled = cli(*args, "--jobs", "1"), cli(*args, "--jobs", "2")
    assert serial.returncode == pooled.returncode == 1
    assert pooled.stdout == serial.stdout and '"code": "ASC101"' in serial.stdout
    assert pooled.stderr == serial.stderr


def _die_in_worker(item, options):
    os._exit(3)


def test_a_dying_worker_falls_back_to_the_serial_run(tmp_path, tree, monkeypatch):
    serial = _run(tmp_path, tree, Options(), jobs=1)
    monkeypatch.setattr(parallel, "_lint_one", _die_in_worker)
    assert _run(tmp_path, tree, Options(), jobs=2) == serial
