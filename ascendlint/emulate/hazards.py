"""The Ascend ``tl.dot`` lhs-clobber hazard, made visible on CPU.

On Ascend the compiler may reuse the buffer holding a ``tl.dot`` lhs operand once the cube unit has
consumed it, so reading that operand again after the dot yields garbage. The interpreter keeps it
intact, hiding the bug. With hazards on, the lhs data is overwritten right after every dot: floats
become NaN, integers the most negative value of their type. A copy made with ``a + 0.0`` is a new
buffer, so only the copy is clobbered and the original stays correct, as on the device.
"""

from __future__ import annotations

import numpy as np

from . import context
from .environment import import_triton

_installed = False


def poison_value(dtype: np.dtype):
    if np.issubdtype(dtype, np.floating):
        return np.nan
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return 0


def clobber(handle) -> None:
    """Overwrite a TensorHandle's data in place (or replace it when the array is read-only)."""
    data = handle.data
    value = poison_value(data.dtype)
    if isinstance(data, np.ndarray) and data.flags.writeable:
        data[...] = value
    else:
        handle.data = np.full_like(data, value)


def install() -> None:
    """Wrap the interpreter's dot so launches with ``hazards=True`` clobber the lhs (idempotent)."""
    global _installed
    if _installed:
        return
    _, _, interpreter = import_triton()
    builder_class = interpreter.InterpreterBuilder
    plain_dot = builder_class.create_dot

    def create_dot(self, a, b, *rest, **kwargs):
        result = plain_dot(self, a, b, *rest, **kwargs)
        ctx = context.current()
        if ctx is not None and ctx.launch.hazards:
            clobber(a)
        return result

    builder_class.create_dot = create_dot
    _installed = True
