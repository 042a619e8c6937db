"""The benchmark's generated inputs and tree selection (what it measures must be what it claims; no timing here)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from bench import generate
from bench.corpus import real_tree_files
from tests import scaling
from tests.helpers import lint

KERNEL = """\
from __future__ import annotations

import triton
import triton.language as tl

BLOCK = 128


@triton.jit
def add_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


def launch(x, y, n):
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=4)
"""


def _defined(text: str) -> list[str]:
    return [node.name for node in ast.parse(text).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def test_repeated_copies_are_distinct_kernels_in_valid_python():
    text = generate.repeated(KERNEL, 3)
    assert _defined(text) == [f"{name}_r{n}" for n in range(3) for name in ("add_kernel", "launch")]
    assert text.startswith("from __future__ import annotations\n") and text.count("__future__") == 1
    assert "add_kernel_r2[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK" in text  # keyword and constant kept
    findings = lint(KERNEL, "ASC")
    assert findings and len(lint(text, "ASC")) == 3 * len(findings)  # each copy is linted like the original


def test_split_and_whole_hold_the_same_code():
    parts, whole = generate.split_and_whole(600, 3)
    assert len(parts) == 3 and all(part.count("\n") >= 200 for part in parts)
    names = [name for part in parts for name in _defined(part)]
    assert names == _defined(whole) and len(set(names)) == len(names)
    body = lambda text: re.sub(r"^from __future__ import .*\n", "", text, flags=re.M)  # noqa: E731
    assert body(whole) == "\n".join(body(part) for part in parts)


def test_decorated_module_puts_jit_on_every_function():
    text = generate.assemble([generate.copy_of(KERNEL, "_d", decorate=True)])
    functions = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    assert all(f.decorator_list for f in functions) and len(functions) == 2


def test_real_tree_selection_leaves_out_folders_with_at_signs(tmp_path):
    for relative in ("repo/a.py", "repo/pkg/b.py", "repo@history/c.py", "repo/sub@pr1/d.py", "repo/notes.txt"):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (tmp_path / "repo" / "link.py").symlink_to(tmp_path / "repo" / "a.py")
    found = [p.relative_to(tmp_path).as_posix() for p in real_tree_files(tmp_path)]
    assert found == ["repo/a.py", "repo/pkg/b.py"]


def test_count_calls_counts_and_restores():
    class Thing:
        def step(self, value):
            return value + 1

    with scaling.count_calls(Thing, "step") as counter:
        assert [Thing().step(n) for n in range(4)] == [1, 2, 3, 4]
    assert counter.calls == 4
    assert "counted" not in repr(Thing.step)


def test_growth_is_one_for_linear_steps_and_more_for_quadratic():
    assert scaling.growth({1: 10, 2: 20, 4: 40}) == pytest.approx(1.0)
    assert scaling.growth({1: 10, 2: 40, 4: 160}) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        scaling.growth({1: 0, 2: 5})


def test_interleaved_runs_take_turns_and_stop_a_command_past_the_limit(tmp_path):
    import sys

    from bench.measure import interleaved

    log = tmp_path / "order.txt"
    note = lambda word: [sys.executable, "-c", f"open({str(log)!r}, 'a').write({word!r})"]  # noqa: E731
    slow = [sys.executable, "-c", f"open({str(log)!r}, 'a').write('s'); import time; time.sleep(5)"]
    found = interleaved([("a", note("a"), None), ("b", note("b"), tmp_path), ("slow", slow, None)], 3, 1.0)
    assert [len(s.runs) for s in found] == [3, 3, 1]
    assert found[2].runs[0].over_limit and not found[0].runs[0].over_limit
    assert log.read_text() == "abs" + "ab" + "ab"


def test_interleaved_calls_a_command_function_before_each_of_its_runs(tmp_path):
    import sys

    from bench.measure import interleaved

    log = tmp_path / "order.txt"
    calls = []

    def edited():
        calls.append(len(calls))
        return [sys.executable, "-c", f"open({str(log)!r}, 'a').write('e{len(calls)}')"]

    plain = [sys.executable, "-c", f"open({str(log)!r}, 'a').write('p')"]
    found = interleaved([("edited", edited, None), ("plain", plain, None)], 2, 30.0)
    assert [len(s.runs) for s in found] == [2, 2] and calls == [0, 1]
    assert log.read_text() == "e1p" + "e2p"


def test_the_hook_file_is_the_median_kernel_file_and_never_edited_in_place(tmp_path):
    from bench import hook

    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg@history").mkdir()
    for name, size in (("a", 1), ("b", 3), ("c", 5)):
        (tree / "pkg" / f"{name}.py").write_text("import triton\n" + "x = 1\n" * size)
    (tree / "pkg" / "plain.py").write_text("x = 1\n" * 2)  # never mentions triton: not a kernel file
    (tree / "pkg@history" / "old.py").write_text("import triton\n")
    picked = hook.pick_file(tree)
    assert picked == tree / "pkg" / "b.py"
    before = picked.read_bytes()
    result = hook.measure(["true"], picked, tmp_path / "work", rounds=2, tool=lambda name: None)
    assert picked.read_bytes() == before and result.file.parent == tmp_path / "work" / "hook"
    assert result.file.read_text().count("# edit ") == 2  # edited before each of its two runs
    assert [len(s.runs) for s in result.series.values()] == [2, 2, 2]


SNAPSHOT_PROBE = ("import ascendlint.cli, ascendlint.linter.engine, ascendlint.checks.asc101_launch_num_warps as r; "
                  "print(r.__file__)")


def _compiled_from(env: dict[str, str]) -> tuple[str, list[str]]:
    """The probe's rule file, and every file the probe's interpreter built a code object from."""
    import subprocess
    import sys

    repository = Path(__file__).resolve().parents[1]  # started here, the working tree must still not be imported
    probe = subprocess.run([sys.executable, "-v", "-c", SNAPSHOT_PROBE], env=env, cwd=repository,
                           capture_output=True, text=True, timeout=300)
    assert probe.returncode == 0, probe.stderr[-2000:]
    return probe.stdout.strip(), re.findall(r"^# code object from '?([^'\n]+)'?$", probe.stderr, re.MULTILINE)


def test_measured_processes_read_the_snapshot_as_byte_code(tmp_path, monkeypatch):
    """An editable install where byte code may not be written compiles every module from source in every process;
    the benchmark's measured processes must not (a pip install is byte-compiled)."""
    from bench import measure, run

    for key, value in dict(measure.CODE).items():
        monkeypatch.setitem(measure.CODE, key, value)  # put back afterwards
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    snapshot = run.snapshot_code(tmp_path)
    env = measure.environment()
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pycache")
    assert env["ASCENDLINT_USER_CACHE"] == str(tmp_path / "user-cache")  # the rule index: the benchmark's own
    rule_file, loaded = _compiled_from(env)
    assert Path(rule_file).is_relative_to(snapshot)  # the snapshot, not this working tree, is what runs
    ours = [p for p in loaded if str(snapshot) in p]
    assert len(ours) > 10 and all(p.endswith(".pyc") and p.startswith(env["PYTHONPYCACHEPREFIX"]) for p in ours), ours
    # The same probe where byte code may not be written and none was compiled: every module from source.
    bare = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path / "empty")}
    _, from_source = _compiled_from(bare)
    assert [p for p in from_source if str(snapshot) in p and p.endswith(".py")]
