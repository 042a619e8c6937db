"""Configuration: ``[tool.ascendlint]`` in pyproject.toml, or ``ascendlint.toml`` / ``.ascendlint.toml``.

Found by walking up from each linted file, as ruff does: the closest configuration governs the files below it (a
nested ``sub/pyproject.toml`` wins over the project's), and ``extend = "../pyproject.toml"`` inherits another file's
settings, the extending file's keys winning. In one folder ``.ascendlint.toml`` wins over ``ascendlint.toml``, which
wins over a pyproject.toml that has a ``[tool.ascendlint]`` table. Unknown keys are errors that name the key and file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

from ..files.safe_read import read_regular
from .settings import DEFAULT_EXCLUDE, DEFAULT_INCLUDE, Settings, relative_to_root  # noqa: F401 - re-exported

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAMES = (".ascendlint.toml", "ascendlint.toml", "pyproject.toml")
LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "fixable", "extend-fixable", "unfixable",
             "include", "extend-include")
BOOL_KEYS = ("respect-gitignore", "lint-cuda-only", "unsafe-fixes", "force-exclude")
MAX_EXTEND_DEPTH = 256  # a bound on the files one configuration reads; cycles are found by name whatever the length


class ConfigError(ValueError):
    pass


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
    table, chain = _merged_table(config_path, known_rules)
    settings = settings_from_table(table, config_path, known_rules)
    settings.extends = tuple(chain)
    return settings


def _ascendlint_table(config_path: Path) -> dict:
    table = _read_toml(config_path)
    if config_path.name == "pyproject.toml":
        table = table.get("tool", {}).get("ascendlint", {})
        if not isinstance(table, dict):
            raise ConfigError(f"{config_path}: `[tool.ascendlint]` must be a table")
    return table


def _merged_table(config_path: Path, known_rules) -> tuple[dict, list[Path]]:
    """The file's table over the tables it ``extend``s (each checked on its own, so errors name their file)."""
    layers: list[tuple[Path, dict]] = []
    seen: set[str] = set()
    current: Path | None = config_path
    while current is not None:
        key = os.path.normcase(os.path.abspath(current))
        if key in seen:
            raise ConfigError(f"{config_path}: `extend` forms a cycle through {current}")
        if len(layers) >= MAX_EXTEND_DEPTH:
            raise ConfigError(f"{config_path}: the chain of `extend` is longer than {MAX_EXTEND_DEPTH} files")
        seen.add(key)
        table = dict(_ascendlint_table(current))
        base = table.pop("extend", None)
        settings_from_table(table, current, known_rules)  # validates this layer, naming its own file
        layers.append((current, table))
        if base is None:
            current = None
        elif not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{current}: `extend` must be the path of another configuration file")
        else:
            target = Path(os.path.expanduser(base))
            current = target if target.is_absolute() else current.parent / target
            if not current.is_file():
                raise ConfigError(f"{layers[-1][0]}: `extend` names {base!r}, which is not a file")
    merged: dict = {}
    extra: dict[str, list] = {}  # extend-per-file-ignores add up over the chain, the base's first
    for _, table in reversed(layers):
        for glob, codes in table.get("extend-per-file-ignores", {}).items():
            extra.setdefault(glob, []).extend(codes)
        merged.update(table)
    if extra:
        merged["extend-per-file-ignores"] = extra
    return merged, [path for path, _ in layers[1:]]


def settings_from_table(table: dict, config_path: Path, known_rules, into: Settings | None = None) -> Settings:
    """The settings a table sets (``into``: set them on these settings instead, as ``--config KEY=VALUE`` does)."""
    settings = Settings(root=config_path.parent.resolve(), path=config_path) if into is None else into
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
            settings.per_file_ignores = _with_extra_ignores(
                {g: _string_list(f"per-file-ignores.{g}", v, config_path) for g, v in value.items()},
                settings.extend_per_file_ignores)
        elif key == "extend-per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{config_path}: `extend-per-file-ignores` must be a table of glob = [codes]")
            extra = {g: _string_list(f"extend-per-file-ignores.{g}", v, config_path) for g, v in value.items()}
            settings.per_file_ignores = _with_extra_ignores(settings.per_file_ignores, extra)
            settings.extend_per_file_ignores = extra
        elif key in BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{config_path}: `{key}` must be true or false")
            setattr(settings, key.replace("-", "_"), value)
        elif key == "output-format":
            from .. import output

            if not isinstance(value, str) or value.lower() not in output.names():
                raise ConfigError(f"{config_path}: `output-format` must be one of {', '.join(output.names())}")
            settings.output_format = value.lower()
        elif key == "cache-dir":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{config_path}: `cache-dir` must be the path of a folder")
            folder = Path(os.path.expanduser(value))
            settings.cache_dir = folder if folder.is_absolute() else settings.root / folder
        elif key == "docs-url":
            if not isinstance(value, str) or "{code}" not in value:
                raise ConfigError(f"{config_path}: `docs-url` must be a URL template containing `{{code}}`")
            settings.docs_url = value
        elif key == "extend":  # followed by load_settings; here only its type is checked
            if not isinstance(value, str):
                raise ConfigError(f"{config_path}: `extend` must be the path of another configuration file")
        elif key in rules_by_key and isinstance(value, dict):
            rule = rules_by_key[key]
            for option, given in value.items():
                if option not in rule.options:
                    allowed = ", ".join(sorted(rule.options)) or "none"
                    raise ConfigError(
                        f"{config_path}: unknown option `{option}` for rule {rule.code} ({rule.name}); known: {allowed}"
                    )
                problem = _option_problem(_option_defaults(rule)[option], given)
                if problem:
                    raise ConfigError(f"{config_path}: option `{option}` of rule {rule.code} ({rule.name}) must be "
                                      f"{problem}, not {given!r}")
            settings.rule_options[rule.code] = {**settings.rule_options.get(rule.code, {}), **value}
        else:
            raise ConfigError(f"{config_path}: unknown configuration key `{key}`")
    return settings


def _option_defaults(rule) -> dict:
    """A rule's option defaults: the class's own (an index entry knows only the names, so its class is loaded;
    only a configuration that sets the rule's options pays for that)."""
    if isinstance(rule.options, dict):
        return rule.options
    from ..catalog.rule_index import rule_classes

    return rule_classes([rule])[0].options


def _option_problem(default, given) -> str | None:
    """What a rule option's value must be, when ``given`` is not that: of its default's type (``true``/``false``
    for a switch, a string for a string), and a positive integer for a size or count (a byte granule of -5 or
    ``true`` would be printed in findings and silently change what is reported)."""
    if isinstance(default, bool):
        return None if isinstance(given, bool) else "true or false"
    if isinstance(default, int):
        return None if isinstance(given, int) and not isinstance(given, bool) and given > 0 else "a positive integer"
    if isinstance(default, float):
        ok = isinstance(given, (int, float)) and not isinstance(given, bool) and given > 0
        return None if ok else "a positive number"
    if isinstance(default, str):
        return None if isinstance(given, str) and given.strip() else "a non-empty string"
    return None


def _with_extra_ignores(ignores: dict[str, list[str]], extra: dict[str, list[str]]) -> dict[str, list[str]]:
    """``per-file-ignores`` with ``extend-per-file-ignores`` added (ruff's meaning: on top of the inherited table)."""
    merged = {glob: list(codes) for glob, codes in ignores.items()}
    for glob, codes in extra.items():
        merged.setdefault(glob, []).extend(c for c in codes if c not in merged[glob])
    return merged


def _string_list(key: str, value, path: Path) -> list[str]:
    """A list key's value; a bare string is an error, as the docs say (`select = "ASC1"` reads like a list of one,
    yet ruff refuses it too, and accepting it would hide a `select = "ASC1,ASC2"` typo)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return list(value)


def user_config() -> Path | None:
    """The user-level configuration file, as ruff has one: ``ascendlint.toml`` (or ``.ascendlint.toml``, or a
    ``pyproject.toml`` with the table) in ``$XDG_CONFIG_HOME/ascendlint`` (default ``~/.config/ascendlint``;
    ``%APPDATA%\\ascendlint`` on Windows). It governs the files no project configuration governs."""
    base = os.environ.get("XDG_CONFIG_HOME") or (os.environ.get("APPDATA") if os.name == "nt" else None)
    folder = Path(base) if base else Path(os.path.expanduser("~")) / ".config"
    folder = folder / "ascendlint"
    for name in CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate)):
            return candidate
    return None


def parse_overrides(values, known_rules) -> dict:
    """``--config KEY=VALUE`` pairs (TOML, as ruff takes them) as one table, checked like a configuration file's."""
    table: dict = {}
    for value in values:
        try:
            pair = tomllib.loads(value)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {value!r} is neither a configuration file nor a TOML `KEY = VALUE` pair "
                              f"({exc})") from exc
        if "extend" in pair:
            raise ConfigError("--config: `extend` cannot be set on the command line; name the file with --config")
        table.update(pair)
    settings_from_table(table, Path("--config"), known_rules)  # errors name the option, not a file
    return table


class SettingsResolver:
    """The settings that govern each file: those of its closest configuration file, or ``--config`` for all.

    Which configuration file governs a folder is looked up once per folder (and remembered for every folder
    passed on the way up), and each configuration file is loaded once, so a tree of thousands of files costs a
    handful of stat calls per folder.
    """

    def __init__(self, known_rules, explicit: Path | None = None, warn: Callable[[str], None] | None = None,
                 isolated: bool = False, adjust: Callable[[Settings], None] | None = None) -> None:
        """``isolated``: no configuration file is read (``--isolated``); ``adjust`` changes every settings object
        once, when it is loaded (command-line overrides such as ``--exclude``)."""
        self.known_rules = known_rules
        self.warn = warn  # told about a broken pyproject.toml that cannot hold our table (it is skipped)
        self.isolated = isolated
        self.adjust = adjust
        self.explicit = load_settings(explicit, known_rules) if explicit is not None else None
        if self.explicit is not None and adjust is not None:
            adjust(self.explicit)
        self._config_of: dict[str, Path | None] = {}
        self._loaded: dict[Path | None, Settings] = {}
        self._user: Path | None | bool = False  # the user-level configuration, once looked up

    def for_path(self, path: Path) -> Settings:
        if self.explicit is not None:
            return self.explicit
        absolute = Path(os.path.abspath(path))
        is_source = absolute.suffix in (".py", ".ipynb")  # the common case: no stat call
        folder = absolute.parent if is_source or not absolute.is_dir() else absolute
        return self.for_config(self.config_for_folder(folder))

    def for_config(self, config: Path | None) -> Settings:
        found = self._loaded.get(config)
        if found is None:
            found = self._loaded[config] = load_settings(config, self.known_rules)
            if config is not None and config == self._user_config():
                found.root = Path.cwd().resolve()  # as ruff: a user-level file's paths are the working folder's
            if self.adjust is not None:
                self.adjust(found)
        return found

    def config_for_folder(self, folder: Path) -> Path | None:
        if self.isolated:
            return None
        visited = []
        current = folder
        while True:
            key = str(current)
            if key in self._config_of:
                config = self._config_of[key]
                break
            visited.append(key)
            config = _config_in(current, self.warn)
            if config is not None:
                config = config.resolve()
                break
            if current.parent == current:
                break
            current = current.parent
        if config is None:
            config = self._user_config()
        for key in visited:
            self._config_of[key] = config
        return config

    def _user_config(self) -> Path | None:
        if self._user is False:
            found = user_config()
            self._user = found.resolve() if found is not None else None
        return self._user

    def all_settings(self) -> list[Settings]:
        """Every settings object handed out so far (one per configuration file)."""
        return [self.explicit] if self.explicit is not None else list(self._loaded.values())


def _config_in(folder: Path, warn: Callable[[str], None] | None = None) -> Path | None:
    for name in CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file() and (name != "pyproject.toml" or _has_tool_table(candidate, warn)):
            return candidate
    return None
