"""The shell examples of the README and the user guides run as written: every ```sh block is executed, line by
line, in a scratch folder holding the bundled examples (and the files the examples name: `path/`, `kernel.py`,
`src/kernel.py`, ...), with the installed `ascendlint` on PATH. A command may report findings (exit 1) but never
fail to run (exit 2, an `error:` line). A block that cannot run here (it installs, or needs reviewdog or a
package index) is preceded by a `<!-- not run by the docs test: why -->` comment. The maintainers' measuring
commands (docs/precision.md, performance.md, robustness.md: hour-long runs over corpora) are not examples.

The guides' sample output is checked too: the finding shown in getting-started is what `check examples/` prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = [REPO / "README.md", *(REPO / "docs" / name for name in
                               ("index.md", "getting-started.md", "configuration.md", "ci.md"))]
_BLOCK = re.compile(r"(?P<before>(?:[^\n]*\n){0,1})```(?:sh|bash|shell)\n(?P<body>.*?)```", re.DOTALL)
_NOT_RUN = "<!-- not run by the docs test:"


def _blocks() -> list:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for number, match in enumerate(_BLOCK.finditer(text), 1):
            if _NOT_RUN in match.group("before"):
                continue
            commands = [line.strip() for line in match.group("body").replace("\\\n", " ").splitlines()]
            commands = [c for c in commands if c and not c.startswith("#")]
            found.append(pytest.param(commands, id=f"{page.name}-{number}"))
    return found


def _sandbox(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    shutil.copytree(REPO / "examples", tmp_path / "path")
    kernel = (REPO / "examples" / "vector_add_traps.py").read_text(encoding="utf-8")
    for name in ("kernel.py", "src/kernel.py", "generated/kernel.py", "path/to/staged_file.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(kernel, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("commands", _blocks())
def test_the_shell_examples_run_as_written(commands, tmp_path):
    root = _sandbox(tmp_path)
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": str(REPO),
           "XDG_CONFIG_HOME": str(tmp_path / "no-user-config")}
    env.pop("ASCENDLINT_OUTPUT_FORMAT", None)
    env.pop("ASCENDLINT_OUTPUT_FILE", None)
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode in (0, 1), f"{command}\n{done.stdout}\n{done.stderr}"
        assert "error:" not in done.stderr and "Usage:" not in done.stderr, f"{command}\n{done.stderr}"


def test_every_guide_has_runnable_examples():
    assert len(_blocks()) >= 10


def test_the_sample_finding_in_getting_started_is_what_the_run_prints(tmp_path):
    text = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    sample = re.search(r"A finding looks like this:\n\n```text\n(.*?)```", text, re.DOTALL).group(1)
    root = _sandbox(tmp_path)
    done = subprocess.run([sys.executable, "-m", "ascendlint", "check", "examples/", "--no-cache"], cwd=root,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert sample in done.stdout


def test_the_examples_report_every_trap_their_comments_name(tmp_path):
    """Each comment of the bundled examples that names a rule sits just above a line that rule reports (opt-in
    rules selected, ASC104 with its `report-unlaunched` option, as the comment says)."""
    root = _sandbox(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "ascendlint", "check", "examples/", "--no-cache", "--select", "ALL", "--format",
         "concise", "--config", '"optional-pointer-runtime-guard" = {report-unlaunched = true}'],
        cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    reported = {(m.group(1), int(m.group(2)), m.group(3))
                for m in re.finditer(r"^examples/(\S+?):(\d+):\d+: (ASC\d+)", done.stdout, re.MULTILINE)}
    named = 0
    for path in sorted((REPO / "examples").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for row, line in enumerate(lines, 1):
            if not line.strip().startswith("#"):
                continue
            for code in re.findall(r"\((ASC\d{3})\b", line):
                named += 1
                below = [r for r in range(row + 1, row + 4)]
                assert any((path.name, r, code) in reported for r in below), f"{path.name}:{row} names {code}"
    assert named >= 8
