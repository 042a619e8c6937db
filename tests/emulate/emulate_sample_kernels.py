"""Tiny single-device kernels exercising what the emulator must get right.

Imported only after ``emulate.install_stand_ins()``.
"""

import triton
import triton.language as tl
from triton.language.extra.cann.extension import sub_vec_id
from triton.runtime.jit import JITFunction


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def relay_kernel(flags_ptr, out_ptr):
    """Program i waits (volatile spin) for program i-1, so it only works if programs overlap."""
    pid = tl.program_id(0)
    if pid > 0:
        while tl.load(flags_ptr + pid - 1, volatile=True) == 0:
            pass
    previous = tl.load(out_ptr + pid - 1, mask=pid > 0, other=0)
    tl.store(out_ptr + pid, previous + 1)
    tl.store(flags_ptr + pid, 1)


@triton.jit
def grid_barrier_kernel(counter_ptr, data_ptr, out_ptr):
    """Each program writes its slot, meets the others at an atomic grid barrier, reads a neighbour's."""
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    tl.store(data_ptr + pid, pid * 10)
    tl.atomic_add(counter_ptr, 1)
    while tl.atomic_cas(counter_ptr, n, n) != n:
        pass
    tl.store(out_ptr + pid, tl.load(data_ptr + (pid + 1) % n, volatile=True))


@triton.jit
def crossed_wait_kernel(flags_ptr):
    """Two programs each wait for the other to go first: a deadlock."""
    pid = tl.program_id(0)
    while tl.load(flags_ptr + 1 - pid, volatile=True) == 0:
        pass
    tl.store(flags_ptr + pid, 1)


@triton.jit
def dot_reusing_lhs_kernel(a_ptr, b_ptr, c_ptr, a_again_ptr, N: tl.constexpr, COPY_LHS: tl.constexpr):
    """``c = a @ b``, then ``a`` is read again; ``COPY_LHS`` feeds the dot with ``a + 0.0`` instead."""
    tile = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    if COPY_LHS:
        c = tl.dot(a + 0.0, b)
    else:
        c = tl.dot(a, b)
    tl.store(c_ptr + tile, c)
    tl.store(a_again_ptr + tile, a)


@triton.jit
def program_shape_kernel(out_ptr):
    """Records (program id, number of programs) for every program."""
    pid = tl.program_id(0)
    tl.store(out_ptr + 2 * pid, pid)
    tl.store(out_ptr + 2 * pid + 1, tl.num_programs(0))


@triton.jit
def failing_kernel(x_ptr, BAD_PROGRAM: tl.constexpr):
    """Program BAD_PROGRAM reshapes 4 elements into 3, which fails."""
    pid = tl.program_id(0)
    if pid == BAD_PROGRAM:
        tl.reshape(tl.arange(0, 4), (3,))
    tl.store(x_ptr + pid, 1)


@triton.jit
def _double(x):
    return x * 2


@triton.jit
def helper_call_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _double(tl.load(x_ptr + offs)))


def _triple_source(x):
    return x * 3


_triple = JITFunction(_triple_source)  # what @triton.jit gives when interpreter mode is off


@triton.jit
def compiled_helper_call_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, _triple(tl.load(x_ptr + offs)))


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def autotuned_fill_kernel(out_ptr, n, BLOCK: tl.constexpr):
    """Each program writes BLOCK into its block, so the output reveals which config ran."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), BLOCK, tl.int32), mask=offs < n)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heuristic_kernel(out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.full((BLOCK,), EVEN, tl.int32), mask=offs < n)


@triton.jit
def ascend_ops_kernel(x_ptr, out_ptr, head_ptr, first_ptr, sub_ptr, N: tl.constexpr, HALF: tl.constexpr):
    """extract_slice, insert_slice, get_element, compile_hint, sort, parallel and sub_vec_id."""
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.compile_hint(x, "multi_buffer", 2)
    head = tl.extract_slice(x, [0], [HALF], [1])
    tl.store(head_ptr + tl.arange(0, HALF), tl.sort(head, 0, descending=True))
    swapped = tl.insert_slice(x, tl.extract_slice(x, [HALF], [HALF], [1]), [0], [HALF], [1])
    tl.store(out_ptr + offs, swapped)
    tl.store(first_ptr, tl.get_element(x, [1]))
    for vec in tl.parallel(0, 2, bind_sub_block=True):
        tl.store(sub_ptr + vec, sub_vec_id() + vec * 10)


@triton.jit
def bf16_kernel(a_ptr, b_ptr, dot_ptr, scaled_ptr, sum_ptr, N: tl.constexpr):
    """bf16 tl.dot, a bf16 tile times a float constant plus a tile, and a row sum."""
    tile = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + tile)
    b = tl.load(b_ptr + tile)
    tl.store(dot_ptr + tile, tl.dot(a + 0.0, b))  # a copy: the lhs buffer may be reused after the dot
    tl.store(scaled_ptr + tile, a * 2.0 + b)
    tl.store(sum_ptr + tl.arange(0, N), tl.sum(a, axis=1))


@triton.jit
def ticket_kernel(counter_ptr, order_ptr):
    """Each program takes the next ticket from an atomic counter: the tickets record the interleaving."""
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(order_ptr + ticket, tl.program_id(0))
