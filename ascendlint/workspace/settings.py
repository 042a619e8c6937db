"""The records that travel: a configuration's ``Settings``, and each discovered file with the settings that govern
it (``SourceFile``). Configuration fills them, discovery pairs each file with its own, the linter only reads them:
this module imports nothing of the workspace, so the linter can take settings without reaching configuration."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "*.egg-info", "__pycache__",
    "build", "dist", "node_modules", "site-packages", "__pypackages__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".ascendlint_cache",
)
DEFAULT_INCLUDE = ("*.py", "*.ipynb")  # the files a folder walk lints (ruff's `include`)


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["ASC"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # extend-per-file-ignores included
    extend_per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    rule_options: dict[str, dict] = field(default_factory=dict)
    respect_gitignore: bool = True
    lint_cuda_only: bool = False  # lint CUDA-only modules with the Ascend rules too (analysis.platform)
    # ruff's fix settings: which rules' fixes apply (selectors, the most specific winning, unfixable on a tie)
    fixable: list[str] = field(default_factory=lambda: ["ALL"])
    extend_fixable: list[str] = field(default_factory=list)
    unfixable: list[str] = field(default_factory=list)
    unsafe_fixes: bool | None = None  # None: not set (unsafe fixes are not applied, and counted in the summary)
    output_format: str | None = None  # None: not set (`full`, unless the command line or environment says)
    force_exclude: bool = False
    include: list[str] = field(default_factory=lambda: list(DEFAULT_INCLUDE))
    extend_include: list[str] = field(default_factory=list)
    cache_dir: Path | None = None  # None: `.ascendlint_cache` in the root
    docs_url: str | None = None  # rule page URL template with ``{code}``; None: the default (see docs_links)
    root: Path = field(default_factory=Path.cwd)
    path: Path | None = None
    extends: tuple[Path, ...] = ()  # the files this one inherits from, closest first

    @property
    def all_excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]

    @property
    def all_includes(self) -> list[str]:
        return [*self.include, *self.extend_include]


@dataclass(frozen=True)
class SourceFile:
    """A file to lint and what governs it, resolved once, at discovery: the settings of its closest configuration
    file and its path relative to their root (what per-file-ignores and the result cache's key use)."""

    path: Path
    settings: Settings
    relative: str


def relative_to_root(path: Path, root: Path) -> str:
    """POSIX path of ``path`` relative to the config root (or as given when outside it), for glob matching."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()
