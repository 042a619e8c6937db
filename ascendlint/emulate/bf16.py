"""bf16 computed in fp32 and rounded, as the NPU does (``bf16_in_fp32``).

The interpreter keeps bf16 values as their raw 16 bits in ``uint16`` arrays. Its casts to and from
fp32 convert properly, but arithmetic, comparisons, reductions, casts to other types and ``tl.dot``
then work on the bit patterns as integers: a bf16 ``tl.dot`` comes out wrong by orders of magnitude,
and ``x * 2.0`` on a bf16 tensor fails for lack of a bf16 constant. With this layer every such
operation on bf16 operands widens them to fp32, computes there, and rounds the result to bf16 (round
to nearest even); ``tl.dot`` accumulates in fp32 like the cube unit. Active in emulated launches only.
"""

from __future__ import annotations

import numpy as np

from . import context
from .environment import import_triton

_installed = False

_BINARY = ("create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_precise_divf",
           "create_minimumf", "create_minnumf", "create_maximumf", "create_maxnumf")
_COMPARISONS = tuple(f"create_fcmp{suffix}" for suffix in (
    "OLT", "OGT", "OLE", "OGE", "OEQ", "ONE", "ULT", "UGT", "ULE", "UGE", "UEQ", "UNE"))
_UNARY = ("create_cos", "create_sin", "create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt",
          "create_precise_sqrt", "create_rsqrt", "create_floor", "create_ceil", "create_erf", "create_fabs")
_CASTS = ("create_si_to_fp", "create_ui_to_fp", "create_fp_to_si", "create_fp_to_ui", "create_fp_ext",
          "create_fp_trunc")


def to_float32(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) as fp32 values."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """fp32 values rounded to the nearest bf16 (ties to even), as uint16 bit patterns."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32)
    rounding = np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    rounded = ((bits + rounding) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(values)
    if nan.any():
        rounded = np.where(nan, ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16), rounded)
    return rounded


def _active() -> bool:
    ctx = context.current()
    return ctx is not None and ctx.launch.model.bf16_in_fp32


def install() -> None:
    """Wrap the interpreter builder's float operations for bf16 operands (idempotent)."""
    global _installed
    if _installed:
        return
    _, tl, interpreter = import_triton()
    builder_class = interpreter.InterpreterBuilder
    TensorHandle = interpreter.TensorHandle

    def is_bf16(handle) -> bool:
        return getattr(handle, "dtype", None) is not None and handle.dtype.scalar == tl.bfloat16

    def widened(handle) -> np.ndarray:
        return to_float32(handle.data) if is_bf16(handle) else handle.data

    def binary(name):
        plain = getattr(builder_class, name)

        def op(self, lhs, rhs):
            if not (_active() and (is_bf16(lhs) or is_bf16(rhs))):
                return plain(self, lhs, rhs)
            result = plain(self, TensorHandle(widened(lhs), tl.float32), TensorHandle(widened(rhs), tl.float32))
            return TensorHandle(to_bf16_bits(result.data), tl.bfloat16)

        return op

    def comparison(name):
        plain = getattr(builder_class, name)

        def op(self, lhs, rhs):
            if not (_active() and (is_bf16(lhs) or is_bf16(rhs))):
                return plain(self, lhs, rhs)
            return plain(self, TensorHandle(widened(lhs), tl.float32), TensorHandle(widened(rhs), tl.float32))

        return op

    def unary(name):
        plain = getattr(builder_class, name)

        def op(self, arg, *rest):
            if not (_active() and is_bf16(arg)):
                return plain(self, arg, *rest)
            result = plain(self, TensorHandle(widened(arg), tl.float32), *rest)
            return TensorHandle(to_bf16_bits(result.data), tl.bfloat16)

        return op

    def cast(name):
        plain = getattr(builder_class, name)

        def op(self, src, dst_type, *rest):
            if not _active():
                return plain(self, src, dst_type, *rest)
            to_bf16 = dst_type.scalar == tl.bfloat16
            if is_bf16(src) and not to_bf16:
                return plain(self, TensorHandle(to_float32(src.data), tl.float32), dst_type, *rest)
            if to_bf16 and not is_bf16(src):
                return TensorHandle(to_bf16_bits(src.data.astype(np.float32)), tl.bfloat16)
            return plain(self, src, dst_type, *rest)

        return op

    plain_fma = builder_class.create_fma
    plain_clamp = builder_class.create_clampf
    plain_dot = builder_class.create_dot

    def create_fma(self, x, y, z):
        if not (_active() and any(map(is_bf16, (x, y, z)))):
            return plain_fma(self, x, y, z)
        return TensorHandle(to_bf16_bits(widened(x) * widened(y) + widened(z)), tl.bfloat16)

    def create_clampf(self, arg, lo, hi, propagate_nans):
        if not (_active() and is_bf16(arg)):
            return plain_clamp(self, arg, lo, hi, propagate_nans)
        return TensorHandle(to_bf16_bits(np.clip(widened(arg), widened(lo), widened(hi))), tl.bfloat16)

    def create_dot(self, a, b, d, *rest, **kwargs):
        if not (_active() and (is_bf16(a) or is_bf16(b) or is_bf16(d))):
            return plain_dot(self, a, b, d, *rest, **kwargs)
        product = np.matmul(widened(a).astype(np.float32), widened(b).astype(np.float32), dtype=np.float32)
        total = product + widened(d).astype(np.float32)
        if is_bf16(d):
            return TensorHandle(to_bf16_bits(total), tl.bfloat16)
        return TensorHandle(total.astype(d.data.dtype), d.dtype.scalar)

    def get_bf16(self, value):
        if not _active():  # the stock interpreter has no bf16 constants
            raise AttributeError("'InterpreterBuilder' object has no attribute 'get_bf16'")
        return TensorHandle(to_bf16_bits(np.array([value], dtype=np.float32)), tl.bfloat16)

    for name in _BINARY:
        if hasattr(builder_class, name):
            setattr(builder_class, name, binary(name))
    for name in _COMPARISONS:
        if hasattr(builder_class, name):
            setattr(builder_class, name, comparison(name))
    for name in _UNARY:
        if hasattr(builder_class, name):
            setattr(builder_class, name, unary(name))
    for name in _CASTS:
        if hasattr(builder_class, name):
            setattr(builder_class, name, cast(name))
    builder_class.create_fma = create_fma
    builder_class.create_clampf = create_clampf
    builder_class.create_dot = create_dot
    if not hasattr(builder_class, "get_bf16"):
        builder_class.get_bf16 = get_bf16
    _patch_reductions(interpreter, tl)
    _installed = True


def _patch_reductions(interpreter, tl) -> None:
    """``tl.sum``/``tl.max``/``tl.min``/``tl.cumsum``/``tl.cumprod`` of bf16 in fp32, rounded back."""
    reduce_ops, scan_ops = interpreter.ReduceOps, interpreter.ScanOps

    def widen_input(op_self, input):
        if not (_active() and input.dtype.scalar == tl.bfloat16):
            return None
        return tl.core.tensor(interpreter.TensorHandle(to_float32(input.handle.data), tl.float32),
                              _retyped(input.type, tl.float32, tl))

    def narrow(result):
        return tl.core.tensor(interpreter.TensorHandle(to_bf16_bits(result.handle.data), tl.bfloat16),
                              _retyped(result.type, tl.bfloat16, tl))

    plain_sum = reduce_ops.sum
    plain_min_max = reduce_ops.min_max

    def reduce_sum(self, input):
        wide = widen_input(self, input)
        return plain_sum(self, input) if wide is None else narrow(plain_sum(self, wide))

    def min_max(self, input, val_reduce_op, idx_reduce_op=None):
        value = input[0] if isinstance(input, tuple) else input
        wide = widen_input(self, value)
        if wide is None:
            return plain_min_max(self, input, val_reduce_op, idx_reduce_op)
        result = plain_min_max(self, wide, val_reduce_op, idx_reduce_op)
        if isinstance(result, tuple):
            return narrow(result[0]), result[1]
        return narrow(result) if val_reduce_op is not None else result

    reduce_ops.sum = reduce_sum
    reduce_ops.min_max = min_max
    for name in ("cumsum", "cumprod"):
        plain = getattr(scan_ops, name)

        def scan(self, input, plain=plain):
            wide = widen_input(self, input)
            return plain(self, input) if wide is None else [narrow(r) for r in plain(self, wide)]

        setattr(scan_ops, name, scan)


def _retyped(ty, element, tl):
    return tl.block_type(element, ty.shape) if isinstance(ty, tl.block_type) else element
