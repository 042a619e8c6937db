"""The pre-commit hooks, through the real ``pre-commit try-repo`` on a throwaway git repository.

The hook repository is a fresh commit of this project's package files, not the working tree itself: try-repo of
a work tree with uncommitted changes commits only its staged and tracked files into a shadow repository, so a new,
untracked file would go missing. pre-commit installs the hook with pip, which fetches the build backend
(setuptools) from the package index, as in any user's install.

The user repository is a small monorepo: a root configuration that excludes ``generated/`` (pre-commit still names
the files in it: ``--force-exclude`` in the hooks drops them), a nested ``sub/pyproject.toml`` that governs its own
folder, and a notebook (the hooks take ``types_or: [python, jupyter]``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from tests.helpers import lint

REPO = Path(__file__).resolve().parents[1]
PROJECT_FILES = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml")
BAD = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x, num_warps=4)\n"
FIXED = "import triton\n\n\ndef run(k, x):\n    k[(1,)](x)\n"
NOTEBOOK_CELLS = ["# A kernel notebook", "%load_ext autoreload\nimport triton", "def run(k, x):\n    k[(1,)](x, num_warps=4)"]


def _package_folders() -> set[str]:
    """The top-level folders pip needs, from the packages and package-dir that pyproject.toml declares."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = setuptools.get("package-dir", {})
    return {folders.get(package, package.replace(".", "/")).split("/")[0] for package in setuptools["packages"]}


def _require(available: bool, what: str) -> None:
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI for the pre-commit hook test")
    pytest.skip(f"{what} is not installed: cannot run pre-commit try-repo")


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    _require(shutil.which("git") is not None, "git")
    _require(importlib.util.find_spec("pre_commit") is not None, "pre-commit (the `test` extra)")
    home = tmp_path_factory.mktemp("pre-commit-home")  # keeps pre-commit's log out of the user's cache folder
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }


def _git(cwd: Path, env: dict, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory, env) -> Path:
    """A one-commit git repository holding what pip needs to install ascendlint, and the hook definitions."""
    root = tmp_path_factory.mktemp("hook-repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PROJECT_FILES:
        shutil.copy2(REPO / name, root / name)
    for name in sorted(_package_folders()):
        shutil.copytree(REPO / name, root / name, ignore=ignore)
    _git(root, env, "init", "-q")
    _git(root, env, "add", "-A")
    _git(root, env, "commit", "-q", "-m", "snapshot")
    return root


@pytest.fixture(scope="module")
def hook_run(hook_repo, tmp_path_factory, env) -> tuple[dict[str, str], Path]:
    """Both hooks in one try-repo call (try-repo installs the hook environment afresh on every call)."""
    user = tmp_path_factory.mktemp("user-repo")
    _git(user, env, "init", "-q")
    (user / "kernel.py").write_text(BAD, encoding="utf-8")
    (user / "notes.txt").write_text("num_warps=4 here is not Python\n", encoding="utf-8")
    (user / "ascendlint.toml").write_text('extend-exclude = ["generated/"]\n', encoding="utf-8")
    (user / "generated").mkdir()
    (user / "generated" / "kernel.py").write_text(BAD, encoding="utf-8")
    (user / "sub").mkdir()
    (user / "sub" / "pyproject.toml").write_text('[tool.ascendlint]\nignore = ["ASC101"]\n', encoding="utf-8")
    (user / "sub" / "kernel.py").write_text(BAD, encoding="utf-8")
    _write_notebook(user / "kernels.ipynb")
    _git(user, env, "add", "-A")
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), "--all-files"],
        cwd=user, env=env, capture_output=True, text=True, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    sections = {}
    for chunk in output.split("- hook id: ")[1:]:
        hook_id, _, rest = chunk.partition("\n")
        sections[hook_id.strip()] = rest
    assert set(sections) == {"ascendlint", "ascendlint-fix"}, output
    return sections, user


def _write_notebook(path: Path) -> None:
    import nbformat

    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    book.cells = [nbformat.v4.new_markdown_cell(NOTEBOOK_CELLS[0]),
                  *(nbformat.v4.new_code_cell(text) for text in NOTEBOOK_CELLS[1:])]
    nbformat.write(book, str(path))


def _finding_files(report: str) -> set[str]:
    return {line.split(":")[0] for line in report.splitlines() if ": ASC" in line}


def test_check_hook_fails_on_a_bad_kernel_and_names_the_finding(hook_run):
    sections, _ = hook_run
    report = sections["ascendlint"]
    assert "- exit code: 1" in report
    assert "kernel.py:5:16: ASC101" in report
    assert "kernels.ipynb:cell 3:2:16: ASC101" in report, "the notebook went through the hook, cell-relative"
    assert _finding_files(report) == {"kernel.py", "kernels.ipynb"}, "generated/ excluded, sub/ ignores ASC101"
    assert "notes.txt" not in report


def test_fix_hook_repairs_the_file(hook_run):
    sections, user = hook_run
    assert "- files were modified by this hook" in sections["ascendlint-fix"]
    assert "Found 2 findings (2 fixed, 0 remaining)." in sections["ascendlint-fix"]
    assert (user / "kernel.py").read_text(encoding="utf-8") == FIXED
    assert lint(FIXED, "ASC101") == []
    assert (user / "generated" / "kernel.py").read_text(encoding="utf-8") == BAD, "excluded: left alone"
    assert (user / "sub" / "kernel.py").read_text(encoding="utf-8") == BAD, "its own config ignores ASC101"


def test_fix_hook_repairs_the_notebook_in_place(hook_run):
    import nbformat

    _, user = hook_run
    book = nbformat.read(str(user / "kernels.ipynb"), as_version=4)
    assert [cell.source for cell in book.cells] == [*NOTEBOOK_CELLS[:2], NOTEBOOK_CELLS[2].replace(", num_warps=4", "")]


# -- the documented configurations, run as the docs give them ------------------------------------------------------
def _user_repo(root: Path, env: dict, config: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _git(root, env, "init", "-q")
    (root / "kernel.py").write_text(BAD, encoding="utf-8")
    (root / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    _git(root, env, "add", "-A")
    return root


def _pre_commit(user: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=user, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_documented_config_works_as_written(tmp_path, env):
    """docs/ci/pre-commit-config.yaml verbatim: a local hook running the `ascendlint` of the environment."""
    _require(shutil.which("ascendlint", path=str(Path(sys.executable).parent)) is not None, "an ascendlint script")
    config = (REPO / "docs" / "ci" / "pre-commit-config.yaml").read_text(encoding="utf-8")
    user = _user_repo(tmp_path, env, config)
    path_env = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    result = _pre_commit(user, path_env, "run", "--all-files")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "- files were modified by this hook" in output and "Found 1 finding (1 fixed, 0 remaining)." in output, output
    assert (user / "kernel.py").read_text(encoding="utf-8") == FIXED
    again = _pre_commit(user, path_env, "run", "--all-files")
    assert again.returncode == 0, again.stdout + again.stderr


def _documented_remote_snippet() -> str:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in text.split("```yaml\n")[1:]]
    (snippet,) = [block for block in blocks if "rev:" in block]
    return snippet


def test_the_documented_remote_form_pinned_by_full_sha(hook_repo, tmp_path, env):
    """docs/ci.md's `repo:` + `rev:` form with the clone's path and its full commit sha, then a tag frozen."""
    snippet = _documented_remote_snippet()
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    documented = yaml_load(snippet)["repos"][0]
    assert len(documented["rev"]) == 40, "the docs pin a full commit sha"
    config = snippet.replace(documented["repo"], str(hook_repo)).replace(documented["rev"], sha)
    user = _user_repo(tmp_path / "user", env, config)
    result = _pre_commit(user, env, "run", "--all-files")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Found 1 finding (1 fixed, 0 remaining)." in output, output
    assert (user / "kernel.py").read_text(encoding="utf-8") == FIXED

    _git(hook_repo, env, "tag", "v0.0.1-test")  # `autoupdate --freeze`: a tag becomes its full sha
    (user / ".pre-commit-config.yaml").write_text(config.replace(sha, "v0.0.1-test"), encoding="utf-8")
    frozen = _pre_commit(user, env, "autoupdate", "--freeze")
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    assert f"rev: {sha}  # frozen: v0.0.1-test" in (user / ".pre-commit-config.yaml").read_text(encoding="utf-8")


def yaml_load(text: str):
    import yaml

    return yaml.safe_load(text)
