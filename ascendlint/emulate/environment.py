"""Lazy access to triton in interpreter mode.

``@triton.jit`` reads TRITON_INTERPRET when a kernel is decorated, so the variable is set before
triton is first imported by the emulator and before any kernel module is imported by the caller.
"""

from __future__ import annotations

import os


def enable_interpreter_mode() -> None:
    os.environ["TRITON_INTERPRET"] = "1"


def import_triton():
    """Return ``(triton, triton.language, triton.runtime.interpreter)`` with interpreter mode on."""
    enable_interpreter_mode()
    import triton
    import triton.language as tl
    from triton.runtime import interpreter

    return triton, tl, interpreter
