"""What ``--fix`` and ``-o`` may write (issue 17, items 6 and 7): never a protected file, never the wrong file, and
no temporary file left behind by an interrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ascendlint.cli import report_file
from ascendlint.files import source, temp_files
from tests.conftest import REPO
from tests.robustness.conftest import FIXED_KERNEL, KERNEL


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    return path


def _leftovers(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith(temp_files.PREFIX))


# -- read-only files and owners --------------------------------------------------------------------------------


def test_fix_refuses_a_read_only_file_and_fixes_the_others(cli, kernel, tmp_path):
    kernel.chmod(0o444)
    other = tmp_path / "other.py"
    other.write_text(KERNEL)
    result = cli("check", str(tmp_path), "--no-cache", "--fix", "--format", "concise")
    assert result.returncode == 2
    assert f"error: Failed to lint {kernel}: could not write fixes: the file is read-only (mode 0444)" in result.stderr
    assert kernel.read_text() == KERNEL and oct(kernel.stat().st_mode & 0o777) == "0o444"
    assert other.read_text() == FIXED_KERNEL  # the run went on
    assert f"{kernel}:5:21: ASC101" in result.stdout  # not fixed, so still reported
    assert _leftovers(tmp_path) == []


def test_fix_refuses_a_file_this_user_may_not_write(run_in_process, kernel, monkeypatch):
    """What a non-root user meets with a file of another user in a folder they may write (root may write all)."""
    real_access = os.access
    monkeypatch.setattr(source.os, "access", lambda path, mode, **kw: mode != os.W_OK and real_access(path, mode, **kw))
    result = run_in_process("check", str(kernel), "--no-cache", "--fix")
    assert result.exit_code == 2
    assert "could not write fixes: permission denied (the file is not writable)" in result.stderr
    assert kernel.read_text() == KERNEL


def test_fix_refuses_to_change_the_owner(run_in_process, kernel, monkeypatch):
    """A group-writable file of another user: replacing it would make it ours, so it is refused instead."""
    real_stat = os.stat

    def owned_by_someone_else(path, *args, **kwargs):
        found = real_stat(path, *args, **kwargs)
        if os.fspath(path) == str(kernel):
            values = list(found)
            values[4] = found.st_uid + 4242  # st_uid
            return os.stat_result(values)
        return found

    def not_permitted(*args):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(source.os, "stat", owned_by_someone_else)
    monkeypatch.setattr(source.os, "chown", not_permitted)
    result = run_in_process("check", str(kernel), "--no-cache", "--fix")
    assert result.exit_code == 2
    assert "could not write fixes: replacing it would change its owner or group" in result.stderr
    assert kernel.read_text() == KERNEL
    assert _leftovers(kernel.parent) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_fix_as_root_keeps_another_users_owner(cli, kernel):
    os.chown(kernel, 4242, 4343)
    assert cli("check", str(kernel), "--no-cache", "--fix").returncode == 0
    assert kernel.read_text() == FIXED_KERNEL
    assert (kernel.stat().st_uid, kernel.stat().st_gid) == (4242, 4343)


# -- the report file -------------------------------------------------------------------------------------------


def test_output_file_never_overwrites_a_file_being_linted(cli, kernel):
    result = cli("check", str(kernel.parent), "--no-cache", "--fix", "-o", str(kernel))
    assert result.returncode == 2
    assert result.stderr.strip() == f"error: refusing to write the report over {kernel}: it is a file being linted"
    assert kernel.read_text() == KERNEL  # refused before anything was fixed or written


def test_output_file_through_a_hard_link_to_a_linted_file_is_refused(cli, kernel, tmp_path):
    alias = tmp_path / "report.txt"
    os.link(kernel, alias)
    result = cli("check", str(kernel), "--no-cache", "-o", str(alias))
    assert result.returncode == 2 and "it is a file being linted" in result.stderr
    assert kernel.read_text() == KERNEL


def test_output_file_does_not_follow_a_link_to_a_regular_file(cli, kernel, tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "report.json"
    link.symlink_to(precious)
    result = cli("check", str(kernel), "--no-cache", "--format", "json", "-o", str(link))
    assert result.returncode == 2
    assert f"error: {link} is a symbolic link to {precious}; refusing to overwrite" in result.stderr
    assert precious.read_text() == "keep me\n"


def test_a_link_planted_after_the_check_is_not_followed(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "report.txt"
    link.symlink_to(precious)
    with pytest.raises(report_file.ReportFileRefused, match="symbolic link"):
        report_file.write(link, "report\n")
    assert precious.read_text() == "keep me\n"


@pytest.mark.parametrize("target", ["/dev/null", "/dev/stdout"])
def test_output_file_may_be_a_device_or_the_standard_output(cli, kernel, target):
    result = cli("check", str(kernel), "--no-cache", "--format", "concise", "-o", target)
    assert result.returncode == 1 and result.stderr == ""
    if target == "/dev/stdout":
        assert "ASC101" in result.stdout


def test_output_file_plain_cases_still_work(cli, kernel, tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("old report, much longer than the new one " * 100)
    assert cli("check", str(kernel), "--no-cache", "--format", "concise", "-o", str(report)).returncode == 1
    assert report.read_text().startswith(f"{kernel}:5:21: ASC101") and "old report" not in report.read_text()


# -- interrupted runs ------------------------------------------------------------------------------------------

_INTERRUPTED_FIX = """
import os, signal, sys
from ascendlint.files import source
from ascendlint.cli import main
signal.signal(signal.{signal}, signal.{disposition})  # whatever the test runner inherited
real_fsync = os.fsync
def interrupted(fd):
    real_fsync(fd)
    os.kill(os.getpid(), signal.{signal})  # arrives while the fixed bytes sit in the temporary file
source.os.fsync = interrupted
main(["check", sys.argv[1], "--no-cache", "--fix"])
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_during_fix_removes_the_temporary_file_and_keeps_the_original(kernel, name):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = _INTERRUPTED_FIX.format(signal=name, disposition="SIG_DFL")
    result = subprocess.run([sys.executable, "-c", script, str(kernel)], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == -getattr(signal, name), result.stderr  # ended by the signal, as without us
    assert _leftovers(kernel.parent) == []
    assert kernel.read_text() == KERNEL


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_a_signal_the_caller_ignores_does_not_stop_the_fix(kernel):
    """Under `nohup` SIGHUP is ignored: the run goes on and writes its fix, as it would without the handler."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = _INTERRUPTED_FIX.format(signal="SIGHUP", disposition="SIG_IGN")
    result = subprocess.run([sys.executable, "-c", script, str(kernel)], env=env, capture_output=True, text=True,
                            timeout=120)
    assert "could not write" not in result.stderr, result.stderr
    assert _leftovers(kernel.parent) == []
    assert kernel.read_text() != KERNEL and "num_warps" not in kernel.read_text()


def test_stale_temporary_files_of_killed_runs_are_swept(cli, kernel):
    folder = kernel.parent
    stale, fresh = folder / ".ascendlint-abcd1234.tmp", folder / ".ascendlint-efgh5678.tmp"
    unrelated = folder / ".ascendlint-notours.tmp.bak"
    for path in (stale, fresh, unrelated):
        path.write_text("half-written fix")
    old = time.time() - temp_files.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(unrelated, (old, old))
    assert cli("check", str(kernel), "--no-cache", "--fix").returncode == 0
    assert _leftovers(folder) == [fresh.name, unrelated.name]  # a live run's file and a foreign name stay


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="a file of another user needs root")
def test_another_users_stale_temporary_files_are_left_alone(tmp_path):
    theirs = tmp_path / ".ascendlint-abcd1234.tmp"
    theirs.write_text("")
    os.chown(theirs, 4242, 4242)
    old = time.time() - temp_files.STALE_SECONDS - 60
    os.utime(theirs, (old, old))
    assert temp_files.sweep_stale(str(tmp_path)) == []
    assert theirs.exists()


def test_a_stale_symbolic_link_with_our_name_is_not_followed(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("keep")
    link = tmp_path / ".ascendlint-abcd1234.tmp"
    link.symlink_to(target)
    old = time.time() - temp_files.STALE_SECONDS - 60
    os.utime(link, (old, old), follow_symlinks=False)
    assert temp_files.sweep_stale(str(tmp_path)) == []
    assert target.read_text() == "keep" and link.is_symlink()


def test_fix_never_writes_through_a_link_met_while_walking(cli, tmp_path):
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    kernel = "import triton\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"
    (outside / "k.py").write_text(kernel)
    (tree / "own.py").write_text(kernel)
    (tree / "link.py").symlink_to(outside / "k.py")
    (tree / "same.py").symlink_to("own.py")
    result = cli("check", "--no-cache", "--fix", "tree", cwd=tmp_path)
    assert (outside / "k.py").read_text() == kernel, "the file outside the tree is untouched"
    assert (tree / "own.py").read_text() == kernel.replace(", num_warps=4", ""), "the tree's own file is fixed"
    assert (tree / "link.py").is_symlink() and (tree / "same.py").is_symlink()
    assert "skipped tree/link.py: a symbolic link" in result.stderr and "same.py" not in result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    named = cli("check", "--no-cache", "tree/link.py", cwd=tmp_path)
    assert named.returncode == 1 and "ASC101" in named.stdout, "a link the user names is followed for reading"


def test_leftovers_of_a_killed_run_are_swept_at_the_next_run_however_young(cli, tmp_path):
    """SIGKILL (and SIGQUIT's core dump) leave the temporary file behind; its name says which run made it."""
    import signal
    import subprocess
    import sys

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    sleeper.send_signal(signal.SIGKILL)
    sleeper.wait()
    dead = tmp_path / f".ascendlint-{sleeper.pid}-abcd1234.tmp"
    live = tmp_path / f".ascendlint-{os.getppid()}-efgh5678.tmp"  # a process that is still running
    dead.write_text("half a file")
    live.write_text("a live run's file")
    (tmp_path / "k.py").write_text("import triton\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n")
    result = cli("check", "--no-cache", "--fix", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not dead.exists(), "the killed run's file is swept at once, not after ten minutes"
    assert live.exists()


def test_sigquit_removes_temporary_files_in_flight_as_sigterm_does():
    import signal

    from ascendlint.files import temp_files as module

    assert signal.SIGQUIT in module._SIGNALS


def test_ctrl_c_exits_130(run_in_process, tmp_path, monkeypatch):
    from ascendlint.linter import runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    (tmp_path / "k.py").write_text("import triton\n")
    monkeypatch.setattr(runner.Linter, "process_path", interrupted)
    monkeypatch.setattr(runner.Linter, "process_bytes", interrupted)
    result = run_in_process("check", "--no-cache", str(tmp_path / "k.py"))
    assert result.exit_code == 130, (result.exit_code, result.output)


def test_code_frames_show_only_text_that_was_written(cli, tmp_path):
    """Fixes that could not be written: the findings and their frames are those of the file as it is on disk."""
    code = ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef kernel(q, k, o, NK, BT: tl.constexpr):\n"
            "    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]\n    b_q = tl.load(q + offs)\n"
            "    for i in range(NK):\n        b_k = tl.load(k + i * BT * BT + offs)\n        b_s = tl.dot(b_q, b_k)\n"
            "        tl.store(o + i * BT * BT + offs, b_s)\n\ndef run(x):\n    kernel[(1,)](x, x, x, 2, BT=16, num_warps=4)\n")
    path = tmp_path / "k.py"
    path.write_text(code)
    path.chmod(0o444)
    try:
        result = cli("check", "--no-cache", "--fix", "--select", "ASC101,ASC301", "--format", "full", "k.py",
                     cwd=tmp_path)
    finally:
        path.chmod(0o644)
    assert "read-only" in result.stderr
    frame_lines = [line.split(" | ", 1)[1] for line in result.stdout.splitlines()
                   if " | " in line and line.split(" | ", 1)[0].strip().isdigit()]
    assert frame_lines, result.stdout
    assert all(line in code.splitlines() for line in frame_lines), frame_lines
    assert "num_warps=4" in result.stdout and "ASC101" in result.stdout


def test_a_file_swapped_for_a_link_after_discovery_gets_no_fix_written_through_it(tmp_path, monkeypatch):
    """A local race replaced a found file by a symbolic link between discovery and the write: --fix wrote the
    fixed text into the link's target. A file that was not a link when found is never written through one."""
    from click.testing import CliRunner

    from ascendlint.linter import runner
    from ascendlint.cli import main

    tree, outside = tmp_path / "tree", tmp_path / "outside.py"
    tree.mkdir()
    (tree / "k.py").write_text(KERNEL)
    outside.write_text(KERNEL)
    real = runner.Linter.process_bytes

    def swapped_after_reading(self, data, filename, path, options, unit=None):
        found = real(self, data, filename, path, options, unit)
        if path is not None and path.name == "k.py" and not path.is_symlink():
            path.unlink()
            path.symlink_to(outside)  # the same text, so the changed-content check cannot see it
        return found

    monkeypatch.setattr(runner.Linter, "process_bytes", swapped_after_reading)
    result = CliRunner().invoke(main, ["check", str(tree), "--fix", "--no-cache", "--jobs", "1"])
    assert outside.read_text() == KERNEL
    assert result.exit_code == 2 and "replaced by a symbolic link" in result.output


def test_a_link_named_on_the_command_line_still_gets_its_target_fixed(cli, tmp_path):
    target, link = tmp_path / "target.py", tmp_path / "link.py"
    target.write_text(KERNEL)
    link.symlink_to(target)
    result = cli("check", str(link), "--fix", "--no-cache")
    assert result.returncode == 0, result.stderr
    assert target.read_text() == FIXED_KERNEL and link.is_symlink()


def test_fix_keeps_extended_attributes(cli, kernel):
    if not hasattr(os, "setxattr"):
        pytest.skip("no extended attributes on this platform")
    try:
        os.setxattr(kernel, "user.ascendlint-test", b"kept")
    except OSError:
        pytest.skip("this file system takes no user extended attributes")
    result = cli("check", str(kernel), "--fix", "--no-cache")
    assert result.returncode == 0, result.stderr
    assert kernel.read_text() == FIXED_KERNEL
    assert os.getxattr(kernel, "user.ascendlint-test") == b"kept"
