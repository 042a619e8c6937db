"""Where the compiler's pieces are: triton-ascend's frontend and BiShengIR's binaries, found without importing either
(the linter's own process never imports triton)."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from pathlib import Path

FRONTEND_DISTRIBUTION = "triton-ascend"
COMPILER_DISTRIBUTION = "ascendnpu-ir"
A5_PREFIXES = ("Ascend950", "Ascend910_95")  # targets compiled with the A5 binary (``bishengir-compile-a5``)
INSTALL_HINT = "pip install 'ascendlint[compiler]'"


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=None)
def binaries_dir() -> Path | None:
    spec = importlib.util.find_spec("ascendnpuir")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "bin"
    return folder if (folder / "bishengir-compile").is_file() else None


def compiler_binary(target: str) -> Path | None:
    folder = binaries_dir()
    if folder is None:
        return None
    name = "bishengir-compile-a5" if target.startswith(A5_PREFIXES) else "bishengir-compile"
    path = folder / name
    return path if path.is_file() else None


@functools.lru_cache(maxsize=None)
def versions() -> dict[str, str | None]:
    """Versions of the pieces a verdict depends on (part of every cache key)."""
    return {
        "frontend": _version(FRONTEND_DISTRIBUTION),
        "compiler": _version(COMPILER_DISTRIBUTION),
    }


def missing() -> str | None:
    """Why no verdict can be had here, or None when the frontend and the compiler are both installed."""
    found = versions()
    absent = [name for name, key in ((FRONTEND_DISTRIBUTION, "frontend"), (COMPILER_DISTRIBUTION, "compiler"))
              if found[key] is None]
    if not absent and binaries_dir() is None:
        absent = [COMPILER_DISTRIBUTION + " (its bin/bishengir-compile)"]
    if absent:
        return f"{' and '.join(absent)} not installed ({INSTALL_HINT})"
    return None


def available() -> bool:
    return missing() is None
