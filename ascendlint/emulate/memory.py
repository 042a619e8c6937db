"""Reading and writing raw addresses, as interpreted pointers hold them.

Inside an interpreted kernel a pointer is a ``tl.tensor`` whose handle carries a numpy array of byte
addresses into live CPU tensors; block pointers carry a ``BlockPointerHandle`` with a ``base``.
"""

from __future__ import annotations

import ctypes

import numpy as np

from .environment import import_triton


def as_int(value) -> int:
    """A Python int from an int, constexpr, numpy scalar or one-element ``tl.tensor``."""
    value = getattr(value, "value", value)
    handle = getattr(value, "handle", None)
    if handle is not None:
        value = handle.data
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"expected a scalar, got a value of shape {array.shape}")
    return int(array.reshape(-1)[0])


def element_dtype(ptr) -> np.dtype:
    """numpy dtype of what a pointer tensor points to."""
    _, _, interpreter = import_triton()
    return np.dtype(interpreter._get_np_dtype(ptr.type.scalar.element_ty))


def scalar_address(ptr, op_name: str) -> int:
    """The one address held by a scalar pointer tensor."""
    data = getattr(getattr(ptr, "handle", None), "data", None)
    if data is None or not hasattr(ptr.type.scalar, "element_ty"):
        raise TypeError(f"{op_name} expects a pointer, got {ptr!r}")
    if np.asarray(data).size != 1:
        raise ValueError(f"{op_name} expects a scalar pointer, got a block of {np.asarray(data).size} pointers")
    return int(np.asarray(data).reshape(-1)[0])


def view(address: int, count: int, dtype) -> np.ndarray:
    """A writable numpy view of ``count`` elements at ``address`` (no copy)."""
    dtype = np.dtype(dtype)
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype=dtype, count=count)


def copy_bytes(destination: int, source: int, nbytes: int) -> None:
    ctypes.memmove(destination, source, nbytes)


def with_addresses(ptr, translate):
    """A copy of pointer tensor ``ptr`` whose addresses went through ``translate(ndarray) -> ndarray``."""
    _, tl, interpreter = import_triton()
    handle = ptr.handle
    if isinstance(handle, interpreter.BlockPointerHandle):
        base = interpreter.TensorHandle(translate(handle.base.data), handle.base.dtype)
        offsets = [offset.clone() for offset in handle.offsets]
        moved = interpreter.BlockPointerHandle(base, handle.shape, handle.strides, offsets, handle.tensor_shape,
                                               handle.order)
        return tl.tensor(moved, ptr.type)
    return tl.tensor(interpreter.TensorHandle(translate(handle.data), handle.dtype), ptr.type)


def int32_tensor(value: int):
    _, tl, interpreter = import_triton()
    return tl.tensor(interpreter.TensorHandle(np.array([value], dtype=np.int32), tl.int32), tl.int32)
