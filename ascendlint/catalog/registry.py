"""Finding rules: the ``ascendlint.checks`` entry-point group (built-in rules and third-party packages alike)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import lru_cache
from types import ModuleType

from ..rule import Rule

GROUP = "ascendlint.checks"
BUILTIN = "ascendlint.checks"


class RegistryError(RuntimeError):
    pass


def _rules_in(obj) -> list[type[Rule]]:
    if inspect.isclass(obj) and issubclass(obj, Rule) and obj is not Rule:
        return [obj]
    if isinstance(obj, ModuleType):
        found = [
            value
            for value in vars(obj).values()
            if inspect.isclass(value) and issubclass(value, Rule) and value is not Rule and getattr(value, "code", None)
            and value.__module__ == obj.__name__
        ]
        if hasattr(obj, "__path__"):
            for info in pkgutil.iter_modules(obj.__path__):
                if not info.name.startswith("_"):
                    found.extend(_rules_in(importlib.import_module(f"{obj.__name__}.{info.name}")))
        return found
    return []


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every known rule, sorted by code; built-in rules load even when the package is not installed."""
    from importlib.metadata import entry_points  # the scan of installed distributions: only for the whole set

    rules: dict[str, type[Rule]] = {}
    targets = [BUILTIN]
    for entry in entry_points(group=GROUP):
        if entry.value != BUILTIN:
            targets.append(entry)
    for target in targets:
        obj = importlib.import_module(target) if isinstance(target, str) else target.load()
        for rule in _rules_in(obj):
            existing = rules.get(rule.code)
            if existing is not None and existing is not rule:
                raise RegistryError(f"two rules claim code {rule.code}: {existing.__module__} and {rule.__module__}")
            rules[rule.code] = rule
    return tuple(sorted(rules.values(), key=lambda r: r.code))


def builtin_modules() -> dict[str, str]:
    """Built-in rule modules by the code their file name carries (``asc101_launch_num_warps.py`` holds ASC101),
    found by listing the package, not by importing it: whatever rule files ``checks/`` holds, nothing is listed
    by hand."""
    package = importlib.import_module(BUILTIN)
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        head = info.name.split("_", 1)[0]
        if not info.name.startswith("_") and head[:3] == "asc" and head[3:].isdigit():
            found[head.upper()] = f"{BUILTIN}.{info.name}"
    return found


def rules_for_codes(codes) -> list[type[Rule]]:
    """The rule classes of ``codes`` (in that order), importing only the built-in rule modules that hold them.

    For callers whose codes come from a current rule index (``rule_index``): the index was built by
    ``all_rules``, which refused two rules claiming one code, and it is rebuilt whenever a distribution is
    installed or removed, so a code that is a built-in file's is that file's rule. A code no built-in file
    carries (a plugin's), or a file that turns out not to hold its code, falls back to the whole registry with
    its entry-point scan."""
    codes = list(codes)
    modules = builtin_modules()
    if all(code in modules for code in codes):
        by_code: dict[str, type[Rule]] = {}
        for name in dict.fromkeys(modules[code] for code in codes):
            for rule in _rules_in(importlib.import_module(name)):
                by_code.setdefault(rule.code, rule)
        if all(code in by_code for code in codes):
            return [by_code[code] for code in codes]
    every = {rule.code: rule for rule in all_rules()}
    return [every[code] for code in codes if code in every]


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for rule in all_rules():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None
