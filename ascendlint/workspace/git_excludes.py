"""The exclude files git reads besides ``.gitignore``: ``$GIT_DIR/info/exclude`` and ``core.excludesFile``.

git is never run (it need not be installed): the configuration files are read directly, in git's order (system,
global, repository; the last value wins), and ``core.excludesFile`` defaults to ``$XDG_CONFIG_HOME/git/ignore``
(``~/.config/git/ignore``) as in git. Patterns of both files are relative to the work tree's root. ``[include]``
and ``[includeIf]`` sections of git's configuration are not followed.
"""

from __future__ import annotations

import os
from pathlib import Path


def git_dir(work_tree: Path) -> Path | None:
    """The repository folder of a work tree: ``.git`` itself, or where a ``gitdir:`` file (worktrees) points."""
    dot_git = work_tree / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:"):].strip())
    return target if target.is_absolute() else (work_tree / target)


def common_dir(repository: Path) -> Path:
    """A linked worktree shares ``info/`` and ``config`` with the main repository (named in ``commondir``)."""
    try:
        named = (repository / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return repository
    target = Path(named)
    return target if target.is_absolute() else repository / target


def exclude_files(work_tree: Path) -> list[Path]:
    """The global excludes file and ``info/exclude`` that apply to this work tree, lowest precedence first."""
    repository = git_dir(work_tree)
    if repository is None:
        return []
    shared = common_dir(repository)
    found = []
    global_file = excludes_file_setting(shared / "config")
    if global_file is not None and global_file.is_file():
        found.append(global_file)
    info = shared / "info" / "exclude"
    if info.is_file():
        found.append(info)
    return found


def excludes_file_setting(repository_config: Path | None = None) -> Path | None:
    """``core.excludesFile`` as git would resolve it, or git's default when no configuration file sets it."""
    value = None
    for config in [*_system_and_global_configs(), *([repository_config] if repository_config else [])]:
        found = read_config_value(config, "core", "excludesfile")
        if found is not None:
            value = found
    if value is not None:
        return _expand(value) if value else None
    return _xdg_config_home() / "git" / "ignore"


def _xdg_config_home() -> Path:
    configured = os.environ.get("XDG_CONFIG_HOME")
    return Path(configured) if configured else Path(os.path.expanduser("~")) / ".config"


def _system_and_global_configs() -> list[Path]:
    configs = []
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        configs.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    explicit = os.environ.get("GIT_CONFIG_GLOBAL")
    if explicit is not None:
        configs.append(Path(explicit))
    else:
        configs.append(_xdg_config_home() / "git" / "config")
        configs.append(Path(os.path.expanduser("~")) / ".gitconfig")
    return configs


def _expand(value: str) -> Path:
    if value.startswith("~"):
        return Path(os.path.expanduser(value))
    return Path(value)


def read_config_value(path: Path, section: str, key: str) -> str | None:
    """The last value of ``section.key`` in one git configuration file (names compared case-insensitively)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    found = None
    current = None
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header, _, rest = line[1:].partition("]")
            current = header.strip().lower()
            line = rest.strip()
            if not line:
                continue
        if current != section:
            continue
        name, equals, value = line.partition("=")
        if name.strip().lower() == key:
            found = _config_value(value) if equals else "true"
    return found


def _config_value(raw: str) -> str:
    """git's value syntax: double quotes group, ``#`` and ``;`` start a comment outside them, backslash escapes."""
    out, quoted, index = [], False, 0
    raw = raw.strip()
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            following = raw[index + 1]
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(following, following))
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()
