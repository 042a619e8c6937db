"""Interpreter support for the Ascend-only ``tl`` ops of triton-ascend.

The ops themselves (``tl.extract_slice``, ``tl.compile_hint``, ``tl.sort``, ...) exist in
triton-ascend, but its interpreter builder lacks the methods they call. Supplying those methods
lets the real op code run; nothing in ``tl`` is replaced, so compiling kernels is unaffected.
Hints and intra-core cube/vector syncs only matter to the compiler and hardware: they do nothing here.
"""

from __future__ import annotations

import numpy as np

from .. import sub_blocks
from ..environment import import_triton

_installed = False


def _as_int(value) -> int:
    value = getattr(value, "value", value)
    data = getattr(value, "data", value)
    return int(np.asarray(data).reshape(-1)[0]) if not isinstance(data, int) else data


def _slices(offsets, sizes, strides) -> tuple:
    return tuple(
        slice(_as_int(o), _as_int(o) + _as_int(n) * _as_int(s), _as_int(s))
        for o, n, s in zip(offsets, sizes, strides)
    )


def _builder_methods(interpreter) -> dict:
    TensorHandle = interpreter.TensorHandle

    def create_extract_slice(self, ful, offsets, sizes, strides):
        return TensorHandle(ful.data[_slices(offsets, sizes, strides)].copy(), ful.dtype.scalar)

    def create_insert_slice(self, ful, sub, offsets, sizes, strides):
        out = ful.data.copy()
        out[_slices(offsets, sizes, strides)] = sub.data
        return TensorHandle(out, ful.dtype.scalar)

    def create_extract_scalar(self, src, indices):
        index = tuple(_as_int(i) for i in indices)
        return TensorHandle(np.array([src.data[index]], dtype=src.data.dtype), src.dtype.scalar)

    def create_gather(self, src, index, axis):
        return TensorHandle(np.take_along_axis(src.data, index.data.astype(np.int64), axis), src.dtype.scalar)

    def create_sort(self, src, dim, descending):
        data = np.sort(src.data, axis=dim, kind="stable")
        return TensorHandle(np.flip(data, axis=dim).copy() if descending else data, src.dtype.scalar)

    def create_flip(self, src, dim):
        return TensorHandle(np.flip(src.data, axis=dim).copy(), src.dtype.scalar)

    def create_annotation(self, handle, name, value):
        return None

    def create_custom_op_for_inter_core_sync(self, op_name, mode_or_sender, event_id):
        return None

    def attribute(self, value=None):
        return value

    return {
        "create_extract_slice": create_extract_slice,
        "create_insert_slice": create_insert_slice,
        "create_extract_scalar": create_extract_scalar,
        "create_gather": create_gather,
        "create_sort": create_sort,
        "create_flip": create_flip,
        "create_annotation": create_annotation,
        "create_custom_op_for_inter_core_sync": create_custom_op_for_inter_core_sync,
        "get_unit_attr": attribute,
        "get_bool_attr": attribute,
        "get_int32_attr": attribute,
        "get_str_attr": attribute,
        "get_i64_array_attr": attribute,
    }


def install() -> None:
    """Add the missing builder methods to the interpreter (only those it lacks; idempotent)."""
    global _installed
    if _installed:
        return
    _, _, interpreter = import_triton()
    for name, method in _builder_methods(interpreter).items():
        if not hasattr(interpreter.InterpreterBuilder, name):
            setattr(interpreter.InterpreterBuilder, name, method)
    _installed = True


def parallel(arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None, bind_sub_block=False):
    """``tl.parallel`` as a plain range, run one iteration after another.

    With ``bind_sub_block=True`` in a mix kernel, each vector sub-block runs its half of the iterations.
    """
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    start, end, step = _as_int(start), _as_int(end), 1 if step is None else _as_int(step)
    if _as_int(bind_sub_block):
        return sub_blocks.share_of_iterations(start, end, step)
    return range(start, end, step)


def _with_constexpr_ints(op, position: int):
    """Wrap a patched ``tl`` slice op so literal int offsets/indices arrive as constexpr.

    Compiled kernels see list literals as constexprs; the interpreter passes plain ints, which the
    ops' frontends do not convert.
    """
    _, tl, _ = import_triton()

    def call(*args, **kwargs):
        args = list(args)
        if len(args) > position:
            args[position] = [tl.constexpr(v) if isinstance(v, int) else v for v in args[position]]
        return op(*args, **kwargs)

    return call


def launch_patches() -> dict:
    """``tl`` attributes replaced for the duration of an emulated launch only.

    Called after the interpreter has patched ``tl``, so wrappers wrap the interpreted ops.
    """
    _, tl, _ = import_triton()
    return {
        "parallel": parallel,
        "extract_slice": _with_constexpr_ints(tl.extract_slice, 1),
        "insert_slice": _with_constexpr_ints(tl.insert_slice, 2),
        "get_element": _with_constexpr_ints(tl.get_element, 1),
    }
