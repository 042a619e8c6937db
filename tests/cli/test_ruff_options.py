"""Command-line options ruff users expect: --exclude/--extend-exclude, --isolated, --unfixable, --color (with
NO_COLOR and FORCE_COLOR), --watch, and the progress line on a terminal's stderr."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.conftest import REPO

LAUNCH = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"
CLEAN = "import triton\n"


def _files(result) -> list[str]:
    return sorted(Path(d["filename"]).as_posix() for d in json.loads(result.stdout))


def test_exclude_replaces_and_extend_exclude_adds(cli, write, tmp_path):
    write("ascendlint.toml", 'extend-exclude = ["gen"]\n')
    write("k.py", LAUNCH)
    write("gen/k.py", LAUNCH)
    write("vendor/k.py", LAUNCH)
    write("build/k.py", LAUNCH)  # excluded by default
    base = cli("check", ".", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _files(base) == ["k.py", "vendor/k.py"]
    more = cli("check", ".", "--extend-exclude", "vendor", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _files(more) == ["k.py"], "the configuration's extend-exclude stays, the option adds"
    replaced = cli("check", ".", "--exclude", "vendor", "--format", "json", "--no-cache", cwd=tmp_path)
    assert _files(replaced) == ["build/k.py", "k.py"], "the defaults are replaced; the config's extend-exclude stays"
    forced = cli("check", "vendor/k.py", "--exclude", "vendor", "--force-exclude", "--format", "json", cwd=tmp_path)
    assert json.loads(forced.stdout) == []


def test_isolated_ignores_every_configuration_file(cli, write, tmp_path):
    write("ascendlint.toml", 'ignore = ["ASC101"]\n')
    write("pkg/pyproject.toml", '[tool.ascendlint]\nselect = ["ASC2"]\n')
    write("pkg/k.py", LAUNCH)
    assert json.loads(cli("check", "pkg/k.py", "--format", "json", "--no-cache", cwd=tmp_path).stdout) == []
    isolated = cli("check", "pkg/k.py", "--isolated", "--format", "json", "--no-cache", cwd=tmp_path)
    assert [d["code"] for d in json.loads(isolated.stdout)] == ["ASC101"]
    both = cli("check", "pkg/k.py", "--isolated", "--config", "ascendlint.toml", cwd=tmp_path)
    assert both.returncode == 2 and "--isolated" in both.stderr


def test_unfixable_codes_are_reported_but_never_fixed(cli, write, tmp_path):
    path = write("k.py", LAUNCH)
    result = cli("check", "k.py", "--fix", "--unfixable", "ASC1", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)
    assert finding["code"] == "ASC101" and finding["fix"] is None
    assert path.read_text(encoding="utf-8") == LAUNCH
    stats = cli("check", "k.py", "--unfixable", "ASC101", "--statistics", "--format", "json", cwd=tmp_path)
    assert json.loads(stats.stdout)[0]["fixable"] is False
    again = cli("check", "k.py", "--format", "json", cwd=tmp_path)  # the cache must not keep the fixless finding
    assert json.loads(again.stdout)[0]["fix"] is not None
    fixed = cli("check", "k.py", "--fix", cwd=tmp_path)
    assert fixed.returncode == 0 and "num_warps" not in path.read_text(encoding="utf-8")


def _run(args, cwd, env_extra=None):
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR")}
    env.update({"PYTHONPATH": str(REPO), **(env_extra or {})})
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_color_option_and_environment(write, tmp_path):
    write("k.py", LAUNCH)
    args = ["check", "k.py", "--isolated", "--no-cache", "--format", "concise"]
    assert "\x1b[" not in _run(args, tmp_path).stdout, "a pipe is not a terminal: no colour by default"
    forced = _run(args, tmp_path, {"FORCE_COLOR": "1"}).stdout
    assert "\x1b[31m" in forced and "ASC101" in forced
    assert "\x1b[" not in _run(args, tmp_path, {"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert "\x1b[1m" in _run([*args, "--color", "always"], tmp_path, {"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in _run([*args, "--color", "never"], tmp_path, {"FORCE_COLOR": "1"}).stdout
    for fmt in ("json", "sarif", "junit", "github", "rdjson"):
        machine = _run(["check", "k.py", "--isolated", "--no-cache", "--format", fmt, "--color", "always"], tmp_path)
        assert "\x1b[" not in machine.stdout, fmt


def _on_terminal(args, cwd, env_extra=None):
    """Run with stderr on a pseudo-terminal (stdout a pipe); returns (stdout, what the terminal received)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "ASCENDLINT_PROGRESS_AFTER": "0", **(env_extra or {})}
    process = subprocess.Popen([sys.executable, "-m", "ascendlint", *args], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    received = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    stdout = process.communicate(timeout=60)[0]
    os.close(leader)
    return stdout, received.decode("utf-8", "replace")


def test_progress_line_on_a_terminals_stderr_only(write, tmp_path):
    for number in range(30):
        write(f"pkg/k{number}.py", LAUNCH)
    stdout, terminal = _on_terminal(["check", "pkg", "--isolated", "--no-cache", "-j", "1", "--format", "concise"],
                                    tmp_path)
    assert "/30] files linted" in terminal and terminal.count("\r") >= 2
    assert "files linted" not in stdout and stdout.count("ASC101") == 30
    piped = _run(["check", "pkg", "--isolated", "--no-cache", "-j", "1"], tmp_path, {"ASCENDLINT_PROGRESS_AFTER": "0"})
    assert "files linted" not in piped.stderr + piped.stdout, "stderr not a terminal: no progress line"
    machine, terminal = _on_terminal(["check", "pkg", "--isolated", "--no-cache", "-j", "1", "--format", "json",
                                      "--output-file", "out.json"], tmp_path)
    assert "files linted" in terminal, "the report goes to a file: the terminal may show progress"
    json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))


def test_watch_lints_again_after_a_change(write, tmp_path):
    path = write("k.py", CLEAN)
    env = {**os.environ, "PYTHONPATH": str(REPO), "ASCENDLINT_WATCH_ROUNDS": "2"}
    process = subprocess.Popen([sys.executable, "-m", "ascendlint", "check", ".", "--watch", "--isolated", "--no-cache",
                                "--format", "concise"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    lines: list[str] = []

    def read_output():
        for line in process.stdout:
            lines.append(line)

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 120
        written = 0.0
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
            # the first lint is done: now change the file, and again every few seconds (the first write may land
            # before the watcher looks; the watcher lints once two of its polls see the same files)
            if any("All checks passed!" in line for line in lines) and time.monotonic() - written > 4:
                path.write_text(LAUNCH, encoding="utf-8")
                os.utime(path, None)
                written = time.monotonic()
        process.wait(timeout=30)
        reader.join(timeout=30)
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    stdout = "".join(lines)
    assert process.returncode == 0, stderr
    assert stdout.count("All checks passed!") == 1 and "k.py:5:16: ASC101" in stdout
    assert "Files changed: linting again." in stderr
