"""A compiler that crashes or hangs gives no verdict, says why, and is never cached (no real compiler needed)."""

import os
import stat
import subprocess

from ascendlint.compiler import bisheng, service
from ascendlint.compiler import verdict as v
from ascendlint.compiler.jobs import CompileJob
from ascendlint.compiler.worker import _describe


def _fake_compiler(tmp_path, body: str):
    script = tmp_path / "bishengir-compile"
    script.write_text("#!/bin/sh\necho run >> " + str(tmp_path / "runs") + "\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_crashing_compiler_is_run_twice_then_reported_as_crashed(tmp_path, monkeypatch):
    monkeypatch.setattr(bisheng, "compiler_binary", lambda target: _fake_compiler(tmp_path, "kill -SEGV $$"))
    found = bisheng.compile_linalg("module {}", [], "Ascend910B1", timeout=10)
    assert found.status == v.NOT_COMPILED and found.message == f"{bisheng.CRASHED} (signal 11)"
    assert (tmp_path / "runs").read_text().count("run") == 2


def test_a_compiler_past_its_time_limit_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(bisheng, "compiler_binary", lambda target: _fake_compiler(tmp_path, "exec sleep 30"))
    found = bisheng.compile_linalg("module {}", [], "Ascend910B1", timeout=0.5)
    assert found.status == v.NOT_COMPILED and "0.5 s limit" in found.message


def test_the_compiler_runs_single_threaded(tmp_path, monkeypatch):
    monkeypatch.setattr(bisheng, "compiler_binary",
                        lambda target: _fake_compiler(tmp_path, 'echo "$@" > ' + str(tmp_path / "argv")))
    bisheng.compile_linalg("module {}", ["--target=Ascend910B1"], "Ascend910B1", timeout=10)
    assert bisheng.SINGLE_THREADED in (tmp_path / "argv").read_text().split()


def test_verdicts_that_may_differ_next_time_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv(service.CACHE_ENV, str(tmp_path / "cache"))
    job = CompileJob("k", "", [])
    service._store(job.key(), v.Verdict(v.NOT_COMPILED, message=f"{bisheng.CRASHED} (signal 11)"))
    service._store("f" * 64, v.Verdict(v.FITS))
    service._memory.clear()
    assert service._cached(job.key()) is None
    assert service._cached("f" * 64) == v.Verdict(v.FITS)
    assert not any(name.endswith(".tmp") for _, _, names in os.walk(tmp_path) for name in names)


def test_the_compiler_is_bound_to_die_with_its_worker(tmp_path, monkeypatch):
    """A worker killed mid-compile (its parent gone, a time limit) leaves no BiShengIR process behind."""
    import sys

    script = tmp_path / "bishengir-compile"
    script.write_text(f"#!{sys.executable}\n"
                      "import ctypes\n"
                      "value = ctypes.c_int(0)\n"
                      "ctypes.CDLL(None).prctl(2, ctypes.byref(value))  # PR_GET_PDEATHSIG\n"
                      f"open({str(tmp_path / 'signal')!r}, 'w').write(str(value.value))\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(bisheng, "compiler_binary", lambda target: script)
    bisheng.compile_linalg("module {}", [], "Ascend910B1", timeout=10)
    assert (tmp_path / "signal").read_text() == "9"


def test_a_failed_frontend_tool_is_named_by_its_program_not_its_command_line():
    failed = subprocess.CalledProcessError(
        1, ["/some/venv/lib/python3.11/site-packages/triton/backends/ascend/triton-adapter-opt",
            "/tmp/tmpabc/kernel.ttir.mlir", "--triton-to-linalg"], stderr=b"error: failed to legalize")
    described = _describe(failed)
    assert described == "triton-adapter-opt exited with status 1"
    assert "/some/venv" not in described and "/tmp/tmpabc" not in described
