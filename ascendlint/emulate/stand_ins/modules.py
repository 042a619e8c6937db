"""Put stand-in modules into ``sys.modules`` where the real ones cannot be imported."""

from __future__ import annotations

import importlib
import sys
import types

from . import algorithm, cann, dist, shmem

STAND_IN_MARK = "__ascendlint_stand_in__"


def _public_names(module) -> dict:
    exported = {name: value for name, value in vars(module).items() if not name.startswith("_")}
    return {name: value for name, value in exported.items() if not isinstance(value, types.ModuleType)}


def _new_module(name: str, attributes: dict, package: bool = False) -> types.ModuleType:
    module = types.ModuleType(name, f"ascendlint.emulate stand-in for {name}")
    module.__dict__.update(attributes)
    setattr(module, STAND_IN_MARK, True)
    if package:
        module.__path__ = []
    return module


def _importable(name: str) -> bool:
    """Whether ``name`` imports; a failed attempt leaves no half-imported modules behind."""
    if name in sys.modules:
        return True
    before = set(sys.modules)
    try:
        importlib.import_module(name)
        return True
    except Exception:  # noqa: BLE001 - any failure to import means the stand-in is needed
        for added in set(sys.modules) - before:
            del sys.modules[added]
        return False


def _register(name: str, module: types.ModuleType) -> None:
    sys.modules[name] = module
    parent_name, _, child = name.rpartition(".")
    if parent_name in sys.modules:
        setattr(sys.modules[parent_name], child, module)


def install_triton_dist() -> None:
    """``triton_dist``, ``triton_dist.language``, ``...language.extra.libshmem_device`` and the Ascend
    ``...language.extra.ascend.algorithm`` swizzles."""
    if _importable("triton_dist.language") and _importable("triton_dist.language.extra.libshmem_device"):
        _install_algorithm()
        return
    libshmem = _new_module("triton_dist.language.extra.libshmem_device", _public_names(shmem))
    extra = _new_module("triton_dist.language.extra", {"libshmem_device": libshmem}, package=True)
    language = _new_module("triton_dist.language", {**_public_names(dist), "extra": extra}, package=True)
    root = _new_module("triton_dist", {"language": language}, package=True)
    for module in (root, language, extra, libshmem):
        _register(module.__name__, module)
    _install_algorithm()


def _install_algorithm() -> None:
    name = "triton_dist.language.extra.ascend.algorithm"
    if _importable(name):
        return
    extra = sys.modules["triton_dist.language.extra"]
    ascend = getattr(extra, "ascend", None)
    if not isinstance(ascend, types.ModuleType) or not hasattr(ascend, "__path__"):
        ascend = _new_module("triton_dist.language.extra.ascend", {}, package=True)
        _register(ascend.__name__, ascend)
    _register(name, _new_module(name, _public_names(algorithm)))


def install_cann_extension() -> None:
    """``triton.language.extra.cann`` and its ``extension`` module."""
    if _importable("triton.language.extra.cann.extension"):
        return
    extension = _new_module("triton.language.extra.cann.extension", cann.namespace())
    package = _new_module("triton.language.extra.cann", {"extension": extension}, package=True)
    _register(package.__name__, package)
    _register(extension.__name__, extension)
