"""Finding rules: the ``ascendlint.checks`` entry-point group (built-in rules and third-party packages alike)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import lru_cache
from importlib.metadata import entry_points
from types import ModuleType

from .rule import Rule

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


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    for rule in all_rules():
        if key.upper() == rule.code or key == rule.name:
            return rule
    return None
