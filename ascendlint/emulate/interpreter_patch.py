"""Changes to triton's interpreter that make concurrent program instances possible.

* The builder's grid index and grid size become thread-local, so each program thread sees its own.
* ``@triton.jit`` functions decorated while interpreter mode was off (kernels' helpers, and the
  ``tl`` library functions such as ``tl.sum`` when triton was imported before the mode was set)
  are interpreted when called from interpreted kernel code, in emulated and plain interpreter
  launches alike.
* ``tl`` patches done by the interpreter during a launch are undone afterwards, so interpreted
  launches do not leak into later compilation of kernels in the same process.
"""

from __future__ import annotations

import contextlib
import threading

from . import context
from .environment import import_triton

_grid_local = threading.local()
_plain_launch = threading.local()
_installed = False


def _thread_local_attribute(name: str) -> property:
    def get(self):
        return getattr(_grid_local, name, None)

    def set_(self, value):
        setattr(_grid_local, name, value)

    return property(get, set_)


def install() -> None:
    """Make grid index and grid size thread-local on the interpreter's builder (idempotent)."""
    global _installed
    if _installed:
        return
    _, _, interpreter = import_triton()
    builder_class = interpreter.InterpreterBuilder
    builder_class.grid_idx = _thread_local_attribute("grid_idx")
    builder_class.grid_dim = _thread_local_attribute("grid_dim")
    _interpret_jit_calls_from_interpreted_code(interpreter)
    _installed = True


_twins: dict = {}


def interpreted_twin(jit_fn):
    """An InterpretedFunction standing in for a kernel decorated while interpreter mode was off."""
    _, _, interpreter = import_triton()
    if jit_fn not in _twins:
        _twins[jit_fn] = interpreter.InterpretedFunction(jit_fn.fn)
    return _twins[jit_fn]


def _interpret_jit_calls_from_interpreted_code(interpreter) -> None:
    from triton.runtime.jit import JITFunction

    compiled_call = JITFunction.__call__
    plain_grid_call = interpreter.GridExecutor.__call__

    def run_plain_grid(self, *args, **kwargs):
        _plain_launch.active = True
        try:
            return plain_grid_call(self, *args, **kwargs)
        finally:
            _plain_launch.active = False

    def call_jit_function(self, *args, **kwargs):
        if context.current() is not None or getattr(_plain_launch, "active", False):
            return interpreted_twin(self)(*args, **kwargs)
        return compiled_call(self, *args, **kwargs)

    interpreter.GridExecutor.__call__ = run_plain_grid
    JITFunction.__call__ = call_jit_function


def _patched_namespaces(tl):
    return [tl, tl.core, tl.math, tl.tensor, tl.dtype]


@contextlib.contextmanager
def language_patched_for(fn, extra_patches=None):
    """Apply the interpreter's ``tl`` patches for ``fn`` and restore every namespace afterwards.

    ``extra_patches()``, called once the interpreter's patches are in place, returns ``tl``
    attribute replacements valid during the launch only. While the launch runs, the interpreter's
    own re-patching (done on every call of a jit helper such as ``tl.zeros``) only happens for
    language modules not patched yet, so program threads never see half-patched namespaces.
    """
    _, tl, interpreter = import_triton()
    namespaces = _patched_namespaces(tl)
    saved = [dict(vars(ns)) for ns in namespaces]
    patch_lang = interpreter._patch_lang
    patched: set = set()
    lock = threading.Lock()
    extras = {}

    def patch_lang_once(function):
        langs = {id(v) for v in function.__globals__.values() if v is tl or v is tl.core}
        if langs <= patched:
            return
        with lock:
            patch_lang(function)
            tl.tensor.__index__ = _scalar_index
            for name, value in extras.items():
                setattr(tl, name, value)
            patched.update(langs)

    try:
        patch_lang_once(fn)
        extras.update(extra_patches() if extra_patches else {})
        for name, value in extras.items():
            setattr(tl, name, value)
        interpreter._patch_lang = patch_lang_once
        yield
    finally:
        interpreter._patch_lang = patch_lang
        for ns, before in zip(namespaces, saved):
            _restore_namespace(ns, before)


def patch_language_for(fn) -> None:
    """Inside ``language_patched_for``: patch the ``tl`` modules another kernel of the same run uses."""
    _, _, interpreter = import_triton()
    interpreter._patch_lang(fn)


def _scalar_index(tensor) -> int:
    """``range(t)`` on a one-element tensor, without numpy's deprecated array-to-int conversion."""
    return int(tensor.handle.data.reshape(-1)[0]) if tensor.handle.data.size == 1 else int(tensor.handle.data)


def _restore_namespace(ns, before: dict) -> None:
    now = vars(ns)
    for name in [n for n in now if n not in before]:
        with contextlib.suppress(AttributeError, TypeError):
            delattr(ns, name)
    for name, value in before.items():
        if now.get(name) is not value:
            with contextlib.suppress(AttributeError, TypeError):
                setattr(ns, name, value)
