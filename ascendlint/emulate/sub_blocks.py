"""The two vector sub-blocks of an AI core (``vector_sub_blocks``).

A kernel that calls ``sub_vec_id()`` is a mix kernel: the compiler splits it into a cube function (its
``tl.dot`` work, on the AI core's cube unit) and a vector function that runs on both vector units of
the core, ``sub_vec_id()`` returning 0 on one and 1 on the other; ``barrier_all`` exists in both
functions and waits for all of them. The emulator runs each program of such a kernel as one thread
per vector sub-block. Code under a ``sub_vec_id()`` test runs where the test sends it; code outside
runs on both sub-blocks, which compute the same values and store them twice (on the device the
compiler divides plain vector work between the sub-blocks and the cube runs the dot work once; the
results are the same, but a non-idempotent side effect outside a ``sub_vec_id()`` branch, such as a
``notify(sig_op="add")``, happens twice here). ``barrier_all`` counts every sub-block of every
program of every rank.

Kernels that never call ``sub_vec_id()`` run one thread per program: the compiler's automatic split of
their vector work between the sub-blocks does not change what they compute.
"""

from __future__ import annotations

import types

from . import context, memory

_SUB_VEC_ID = "sub_vec_id"


def is_mix_kernel(fn) -> bool:
    """Whether ``fn`` or a ``@triton.jit`` helper it calls refers to ``sub_vec_id``."""
    return _mentions_sub_vec_id(fn, set())


def _mentions_sub_vec_id(fn, seen: set) -> bool:
    fn = getattr(fn, "fn", fn)  # JITFunction / InterpretedFunction -> the Python function
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    names = _names(code)
    if _SUB_VEC_ID in names:
        return True
    namespace = getattr(fn, "__globals__", {})
    for name in names:
        helper = namespace.get(name)
        if helper is not None and hasattr(helper, "fn") and callable(getattr(helper, "fn")):
            if _mentions_sub_vec_id(helper, seen):
                return True
    return False


def _names(code: types.CodeType) -> set:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


def sub_vec_id(*_args, **_kwargs):
    """Index of the vector sub-block running this code (0 outside a mix kernel's second sub-block)."""
    ctx = context.current()
    return memory.int32_tensor(ctx.sub_block if ctx is not None else 0)


def share_of_iterations(start: int, end: int, step: int) -> range:
    """The iterations of ``tl.parallel(..., bind_sub_block=True)`` that this sub-block runs.

    The first sub-block takes the first half of the iterations, the second the rest.
    """
    whole = range(start, end, step)
    ctx = context.current()
    if ctx is None or ctx.stage.sub_blocks == 1:
        return whole
    half = (len(whole) + 1) // 2
    return whole[:half] if ctx.sub_block == 0 else whole[half:]
