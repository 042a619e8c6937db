"""Benchmark trees: kernel files assembled from this repository, and the standard library with those kernels mixed in.

The kernel tree is every Python file of ``examples/`` and ``reference_kernels/`` plus every rule example (each a
complete module), copied under distinct names until it reaches the requested number of lines. Distinct names
matter: the result cache keys on path and content, so copies are separate cache entries, as in a real repository.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = "[tool.ascendlint]\n"  # makes the tree its own project root (config and cache folder live there)


@dataclass
class Tree:
    root: Path
    files: list[Path]

    @property
    def lines(self) -> int:
        return sum(line_count(path) for path in self.files)

    @property
    def bytes(self) -> int:
        return sum(path.stat().st_size for path in self.files)


def kernel_sources() -> list[tuple[str, str]]:
    """(name, text) of every distinct kernel module this repository holds."""
    from ascendlint.catalog.registry import all_rules

    sources = []
    for folder in ("examples", "reference_kernels"):
        for path in sorted((REPO / folder).rglob("*.py")):
            sources.append((f"{folder}_{path.stem}", path.read_text(encoding="utf-8")))
    for rule in all_rules():
        for kind, examples in (("invalid", rule.INVALID), ("valid", rule.VALID)):
            for number, example in enumerate(examples):
                sources.append((f"{rule.code.lower()}_{kind}_{number}", example.code))
    return sources


def build_kernel_tree(root: Path, min_lines: int) -> Tree:
    """Copies of the kernel sources (round-robin) until the tree holds at least ``min_lines`` lines."""
    fresh_root(root)
    sources = kernel_sources()
    files, lines, copy = [], 0, 0
    while lines < min_lines or copy == 0:
        folder = root / f"copy{copy:03d}"
        folder.mkdir()
        for name, text in sources:
            path = folder / f"{name}.py"
            path.write_text(text, encoding="utf-8")
            files.append(path)
            lines += text.count("\n")
            if lines >= min_lines and copy > 0:
                break
        copy += 1
    return Tree(root, files)


def build_mixed_tree(root: Path) -> Tree:
    """The standard library's ``.py`` files (tests included, site-packages excluded) plus one copy of the kernels."""
    fresh_root(root)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(
        stdlib,
        root / "stdlib",
        ignore=lambda folder, names: [n for n in names if _not_source(Path(folder, n))],
        symlinks=True,
    )
    kernels = root / "kernels"
    kernels.mkdir()
    for name, text in kernel_sources():
        (kernels / f"{name}.py").write_text(text, encoding="utf-8")
    return Tree(root, sorted(p for p in root.rglob("*.py") if p.is_file() and not p.is_symlink()))


def real_tree_files(source: Path) -> list[Path]:
    """The ``.py`` files of a real tree, sorted; folders with ``@`` in their names are left out.

    The materialised corpus keeps each repository's HEAD in a folder named after it (``owner__name``) and older
    snapshots or pull-request heads beside it (``owner__name@history``, ``owner__name@pr179``): the benchmark
    measures the HEAD folders only, which is what this selection leaves. Symbolic links are not followed.
    """
    found = []
    for folder, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if "@" not in d and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(filenames):
            path = Path(folder, name)
            if name.endswith(".py") and path.is_file() and not path.is_symlink():
                found.append(path)
    return found


def build_real_tree(source: Path, root: Path) -> Tree:
    """A copy of ``real_tree_files(source)`` under ``root`` (same relative paths), made its own project root.

    Measuring a copy keeps the cache folder and any fixes out of the source tree, and keeps the source tree's own
    configuration files (for flake8, ruff or ascendlint) from changing what is measured.
    """
    fresh_root(root)
    files = []
    for path in real_tree_files(source):
        target = root / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        files.append(target)
    return Tree(root, files)


def _not_source(path: Path) -> bool:
    return path.name in ("site-packages", "__pycache__") or (path.is_file() and path.suffix != ".py")


def fresh_root(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(CONFIG)


def line_count(path: Path) -> int:
    with open(path, "rb") as handle:
        return handle.read().count(b"\n")
