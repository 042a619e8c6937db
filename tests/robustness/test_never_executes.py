"""Linted code and configuration are data: no mode of ``check`` imports or runs them.

Every planted file writes a marker when executed; after each run no marker may exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

SIDE_EFFECT = "open({marker!r}, 'w').write('executed')\n"
KERNEL_WITH_SIDE_EFFECT = """\
import triton
import triton.language as tl
{effect}
@triton.jit
def kernel(x_ptr, B: tl.constexpr):
    tl.store(x_ptr, B.to(tl.int64))

def run(x):
    kernel[(1,)](x, 16, num_warps=4)
"""
# Names the linter itself imports: a planted module of that name must not shadow the real one.
SHADOWED = ("triton", "libcst", "click", "pathspec", "tomllib", "tomli")


@pytest.fixture
def planted(tmp_path):
    """A project whose kernel, package ``__init__`` and shadowing modules all leave a marker when executed."""
    project = tmp_path / "project"
    package = project / "kernels"
    package.mkdir(parents=True)
    markers = tmp_path / "markers"
    markers.mkdir()

    def effect(name: str) -> str:
        return SIDE_EFFECT.format(marker=str(markers / name))

    (package / "__init__.py").write_text("import triton\n" + effect("package-init"))
    (package / "kernel.py").write_text(KERNEL_WITH_SIDE_EFFECT.format(effect=effect("kernel")))
    for name in SHADOWED:
        (project / f"{name}.py").write_text(effect(f"shadow-{name}"))
    (project / "pyproject.toml").write_text('[tool.ascendlint]\nselect = ["ASC"]\n')
    return project, markers


@pytest.mark.parametrize(
    "args",
    [
        ["check", "."],
        ["check", ".", "--jobs", "2"],
        ["check", ".", "--diff"],
        ["check", ".", "--fix", "--unsafe-fixes"],
        ["check", ".", "--statistics", "--format", "json"],
        ["check", "-", "--stdin-filename", "kernels/kernel.py"],
        ["check", ".", "--compile"],
    ],
    ids=["check", "parallel", "diff", "fix", "statistics", "stdin", "compile"],
)
def test_no_mode_of_check_executes_the_linted_code(planted, args):
    project, markers = planted
    script = shutil.which("ascendlint", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the ascendlint console script is not installed in this environment")
    stdin = (project / "kernels" / "kernel.py").read_text() if "-" in args else None
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([script, *args, "--no-cache"], check=False, cwd=project, input=stdin, capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    assert "ASC101" in result.stdout + result.stderr or "--fix" in args or "--diff" in args
    assert sorted(os.listdir(markers)) == []


def test_fixing_rewrites_the_kernel_without_running_it(planted):
    project, markers = planted
    kernel = project / "kernels" / "kernel.py"
    script = shutil.which("ascendlint", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the ascendlint console script is not installed in this environment")
    subprocess.run([script, "check", ".", "--fix", "--unsafe-fixes", "--no-cache"], check=False, cwd=project,
                   capture_output=True, text=True, timeout=120)
    assert "num_warps" not in kernel.read_text()
    assert os.listdir(markers) == []


def test_python_dash_m_from_a_hostile_folder_does_not_import_planted_modules(planted):
    project, markers = planted
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "ascendlint", "check", ".", "--no-cache"], check=False, cwd=project,
                   capture_output=True, text=True, env=env, timeout=120)
    assert os.listdir(markers) == []


def test_compile_mode_never_evaluates_a_kernels_signature_or_a_planted_module(planted):
    """``--compile`` imports only the rebuilt kernel text, in an isolated worker: defaults and annotations that
    would run code refuse the rebuild, and modules planted beside the kernels are never what the worker imports."""
    project, markers = planted
    hostile = project / "kernels" / "signature.py"
    effect = f"open({str(markers / 'signature')!r}, 'w')"
    hostile.write_text(f"""import triton
import triton.language as tl

@triton.jit
def k(x_ptr, n: {effect}, B: tl.constexpr, flag={effect}):
    tl.store(x_ptr + tl.arange(0, B), 1.0)

def run(x):
    k[(1,)](x, 4, 64)
""")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "ascendlint", "check", ".", "--compile", "--no-cache"],
                            check=False, cwd=project, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode in (0, 1), result.stderr
    assert os.listdir(markers) == []


def test_source_of_the_linter_never_runs_text_as_code():
    """The engine and rules treat source as text: no exec, eval, runpy or loading modules from file paths."""
    offenders = []
    for path in sorted([*(REPO / "ascendlint").rglob("*.py"), *(REPO / "checks").rglob("*.py")]):
        if "emulate" in path.parts:  # the emulator runs reference kernels on purpose; it is not the linter
            continue
        if path.relative_to(REPO).as_posix() == "ascendlint/compiler/worker.py":
            continue  # imports the rebuilt kernel text (literals and jit functions only) in an isolated process
        text = path.read_text(encoding="utf-8")
        for needle in ("exec(", "eval(", "runpy", "spec_from_file_location", "SourceFileLoader"):
            if needle in text:
                offenders.append(f"{path.relative_to(REPO)}: {needle}")
    assert offenders == []
