"""Configuration: ``[tool.ascendlint]`` in pyproject.toml, or ``ascendlint.toml`` / ``.ascendlint.toml``.

Found by walking up from the linted path; in one folder ``.ascendlint.toml`` wins over ``ascendlint.toml``, which
wins over a pyproject.toml that has a ``[tool.ascendlint]`` table. Unknown keys are errors that name the key.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .safe_read import read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", ".eggs", "*.egg-info", "__pycache__",
    "build", "dist", "node_modules", "site-packages", "__pypackages__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".ascendlint_cache",
)
CONFIG_NAMES = (".ascendlint.toml", "ascendlint.toml", "pyproject.toml")
LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")


class ConfigError(ValueError):
    pass


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["ASC"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    rule_options: dict[str, dict] = field(default_factory=dict)
    respect_gitignore: bool = True
    root: Path = field(default_factory=Path.cwd)
    path: Path | None = None

    @property
    def all_excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]


def find_config(start: Path, warn: Callable[[str], None] | None = None) -> Path | None:
    directory = start if start.is_dir() else start.parent
    directory = directory.resolve()
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                if name != "pyproject.toml" or _has_tool_table(candidate, warn):
                    return candidate
    return None


def _has_tool_table(path: Path, warn: Callable[[str], None] | None = None) -> bool:
    """Does this pyproject.toml configure ascendlint? A broken one that never names it is skipped with a warning.

    ruff stops at any pyproject.toml it cannot parse; but one whose bytes never mention ascendlint cannot hold our
    table, so it is no reason to refuse to lint (it is usually another tool's problem). One that does is reported.
    """
    try:
        return "ascendlint" in _read_toml(path).get("tool", {})
    except ConfigError as exc:
        if _mentions_us(path):
            return True  # report the broken file rather than silently skipping it
        if warn is not None:
            warn(f"{exc}; it has no [tool.ascendlint] table, so it was skipped")
        return False


def _mentions_us(path: Path) -> bool:
    try:
        return b"ascendlint" in read_regular(path)
    except OSError:
        return False


def _read_toml(path: Path) -> dict:
    """Parsed TOML, or a one-line ConfigError naming the file (never a hang on a FIFO, never an endless read)."""
    try:
        return tomllib.loads(read_regular(path).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"Failed to read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Failed to parse {path}: not valid UTF-8 (byte {exc.start}: {exc.reason})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Failed to parse {path}: {exc}") from exc
    except (RecursionError, MemoryError) as exc:
        raise ConfigError(f"Failed to parse {path}: it nests too deeply ({type(exc).__name__})") from exc


def load_settings(config_path: Path | None, known_rules) -> Settings:
    """Settings from a config file (or the defaults), checked against the known rules' options."""
    if config_path is None:
        return Settings()
    table = _read_toml(config_path)
    if config_path.name == "pyproject.toml":
        table = table.get("tool", {}).get("ascendlint", {})
    return settings_from_table(table, config_path, known_rules)


def settings_from_table(table: dict, config_path: Path, known_rules) -> Settings:
    settings = Settings(root=config_path.parent.resolve(), path=config_path)
    rules_by_key = {}
    for rule in known_rules:
        rules_by_key[rule.code] = rule
        rules_by_key[rule.name] = rule
    for key, value in table.items():
        if key in LIST_KEYS:
            setattr(settings, key.replace("-", "_"), _string_list(key, value, config_path))
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{config_path}: `per-file-ignores` must be a table of glob = [codes]")
            settings.per_file_ignores = {g: _string_list(f"per-file-ignores.{g}", v, config_path) for g, v in value.items()}
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"{config_path}: `respect-gitignore` must be true or false")
            settings.respect_gitignore = value
        elif key in rules_by_key and isinstance(value, dict):
            rule = rules_by_key[key]
            for option in value:
                if option not in rule.options:
                    allowed = ", ".join(sorted(rule.options)) or "none"
                    raise ConfigError(
                        f"{config_path}: unknown option `{option}` for rule {rule.code} ({rule.name}); known: {allowed}"
                    )
            settings.rule_options[rule.code] = dict(value)
        else:
            raise ConfigError(f"{config_path}: unknown configuration key `{key}`")
    return settings


def _string_list(key: str, value, path: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return list(value)


def relative_to_root(path: Path, root: Path) -> str:
    """POSIX path of ``path`` relative to the config root (or as given when outside it), for glob matching."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()
