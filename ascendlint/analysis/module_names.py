"""Dotted module names, shared by the module facts (relative imports) and the tree's import order (``project``)."""

from __future__ import annotations


def resolve_relative(module: str, level: int, target: str, is_package: bool) -> str:
    """``from ..x import y`` in ``module``: the absolute name of ``..x``."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join([*package, target] if target else package)
