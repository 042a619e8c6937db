"""The process pool: same results, same order and same fixes as the serial run."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from ascendlint.linter import parallel
from ascendlint.workspace.config import Settings
from ascendlint.catalog.registry import all_rules
from ascendlint.linter.runner import Linter, Options
from ascendlint.linter.tree_order import plan as plan_tree

REPO = Path(__file__).resolve().parents[2]
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
    monkeypatch.setattr(parallel, "_in_pool", lambda *args: pools.append(args[3]) or real_pool(*args))  # workers
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
    "jobs, sizes, expected",
    [
        (1, [10**6] * 50, 1),  # an explicit serial run
        (3, [10**6] * 2, 2),  # an explicit pool, never larger than the work
        (0, [10**6], 1),  # one file
        (0, [2_000] * 20, 1),  # too little work to pay for starting workers
        (0, [2_000_000] + [1_000] * 30, 1),  # one big file dominates: a pool could not finish sooner
        (0, [10**6] * 50, 2),  # plenty of even work: every core
    ],
)
def test_worker_count_respects_requests_and_estimated_costs(jobs, sizes, expected, monkeypatch):
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    assert parallel.worker_count(jobs, sizes) == expected


def test_auto_worker_count_takes_only_the_workers_that_pay(monkeypatch):
    monkeypatch.setattr(parallel, "available_cores", lambda: 16)
    assert parallel.worker_count(0, [10**6] * 64) == 16
    assert parallel.worker_count(0, [10**6, 10**6] + [100] * 20) == 2  # two big files: two workers, not sixteen


def test_makespan_simulates_largest_first_scheduling():
    assert parallel.makespan([3, 5, 3, 4, 3], 2) == 10  # 5, then 4, 3 on the idler one, 3 on the other, 3: 5+3 | 4+3+3
    assert parallel.makespan([10, 1, 1, 1], 2) == 10
    assert parallel.makespan([3, 3, 3, 3], 4) == 3
    assert parallel.makespan([7], 3) == 7


def test_batches_hand_out_every_file_once_largest_first():
    sizes = [10, 500, 3, 80, 7, 1000, 2, 2, 40]
    found = parallel.batches(sizes, workers=2)
    flat = [position for batch in found for position in batch]
    assert sorted(flat) == list(range(len(sizes)))
    assert flat == sorted(range(len(sizes)), key=lambda p: -sizes[p])
    assert found[0] == [5] and found[1] == [1]  # big files travel alone
    assert len(found[-1]) > 1  # the small ones share batches


def test_one_dominant_file_is_linted_serially(tmp_path, monkeypatch):
    big = tmp_path / "big.py"
    big.write_text("import triton\n" + "x = 1\n" * 400_000)
    small = []
    for number in range(6):
        path = tmp_path / f"small{number}.py"
        path.write_text("import triton\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n")
        small.append(path)
    pools = []
    monkeypatch.setattr(parallel, "_in_pool", lambda *args: pools.append(args[3]) or [])
    monkeypatch.setattr(parallel, "available_cores", lambda: 2)
    results = parallel.lint_paths(Linter(list(all_rules()), Settings(root=tmp_path)), [*small, big], Options(), 0)
    assert pools == []
    assert [r.path for r in results] == [str(p) for p in [*small, big]]
    assert all(any(d.code == "ASC101" for d in r.diagnostics) for r in results[:-1])


def _recording_lint_one(item, options):
    with open(os.environ["ASCENDLINT_TEST_RECORD"], "a") as handle:
        handle.write(f"{item!r}\n")
    return _REAL_LINT_ONE(item, options)


_REAL_LINT_ONE = parallel._lint_one


@pytest.mark.skipif(parallel._context().get_start_method() != "fork", reason="positions are sent to forked workers")
def test_forked_workers_get_positions_largest_first(tmp_path, tree, monkeypatch):
    record = tmp_path / "record.txt"
    monkeypatch.setenv("ASCENDLINT_TEST_RECORD", str(record))
    monkeypatch.setattr(parallel, "_lint_one", _recording_lint_one)
    serial = _run(tmp_path, tree, Options(), jobs=1)
    assert not record.exists()  # the serial run lints in the parent
    assert _run(tmp_path, tree, Options(), jobs=2) == serial
    received = [int(line) for line in record.read_text().split()]  # positions only: no file's bytes were pickled
    linter_work = [p for p in tree if p.is_file() and b"triton" in p.read_bytes()]
    waves = plan_tree([(p, p.read_bytes()) for p in linter_work]).waves
    assert len(waves) > 1  # the reference kernels import each other: the modules they share are linted first
    last_wave = [linter_work[i] for i in waves[-1]]  # and only the last wave is large enough for the pool
    sizes = sorted((p.stat().st_size for p in last_wave), reverse=True)
    assert sorted(received) == list(range(len(last_wave)))
    first = last_wave[received[0]].stat().st_size
    assert first in sizes[:2]  # the first file any worker took is one of the two largest


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


def _fail_in_worker(item, options):
    raise ValueError("a batch that fails in its worker")


def test_a_batch_failing_in_its_worker_is_linted_serially(tmp_path, tree, monkeypatch):
    serial = _run(tmp_path, tree, Options(), jobs=1)
    monkeypatch.setattr(parallel, "_lint_one", _fail_in_worker)
    assert _run(tmp_path, tree, Options(), jobs=2) == serial
