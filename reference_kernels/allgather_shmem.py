"""AllGather written in the libshmem_device (aclshmem) dialect: `putmem_signal`, `signal_op`,
`signal_wait_until`, no `dl.notify` / `dl.wait`.

Rank ``r`` holds ``x_r [M, K]``; every rank ends with ``out = concat(x_0, ..., x_{P-1})`` of shape
``[P*M, K]``. It is the shmem-dialect twin of the gather half of ``allgather_gemm.py``, kept as a lint
fixture: the ASC4xx rules read its calls as they read ``dl.notify`` / ``dl.wait``, and it lints clean.

Layout and protocol (``P`` ranks):

* ``window [P, M, K]`` symmetric: ``window[src]`` on rank ``q`` receives ``x_src``.
* ``signals [P]`` int32 slots, ``SLOT_STRIDE`` (16) elements apart so each sits on its own 64-byte line:
  slot ``src`` on rank ``q`` equals ``epoch`` once ``x_src`` has landed in ``q``'s window. The host passes a
  new ``epoch`` per launch, so the slots never need zeroing between launches.
* The first ``n_producers`` programs each own destination ranks ``for pe in range(pid, P, n_producers)``
  (one core per pe). A peer gets one ``putmem_signal``: the data and its signal travel in one request, so
  the signal cannot overtake the data. The own rank gets MTE stores (UDMA cannot copy local to local),
  ``fence()``, then ``signal_op`` on its own slot.
* The other programs take source ranks, wait until the source's slot reaches ``epoch`` and copy that
  block of the window into ``out``.
"""

import torch
import triton
import triton.language as tl
from triton_dist.language.extra import libshmem_device

from reference_kernels._cores import vector_core_count

SLOT_STRIDE = 16  # int32 signal slots per 64-byte DataCache line


@triton.jit
def _copy_block(dst_ptr, src_ptr, n_elems, BLOCK: tl.constexpr):
    """MTE copy of ``n_elems`` contiguous elements."""
    for start in range(0, n_elems, BLOCK):
        offs = tl.cast(start, tl.int64) + tl.arange(0, BLOCK)
        mask = offs < n_elems
        tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def allgather_shmem_kernel(
    x_ptr, window_ptr, signal_ptr, out_ptr, block_elems, epoch, n_producers,
    BLOCK: tl.constexpr, SLOT_STRIDE: tl.constexpr,
):
    rank = libshmem_device.my_pe()
    n_ranks = libshmem_device.n_pes()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    # `bitwidth // 8` does not compile in triton-ascend 3.2.0's frontend (the int's floor division
    # by a constexpr gives NotImplemented); tl.cdiv folds to the same constant.
    elem_bytes = tl.cdiv(x_ptr.dtype.element_ty.primitive_bitwidth, 8)
    if pid < n_producers:
        own = window_ptr + tl.cast(rank, tl.int64) * block_elems
        slot = signal_ptr + rank * SLOT_STRIDE
        for pe in range(pid, n_ranks, n_producers):
            if pe != rank:
                libshmem_device.putmem_signal(own, x_ptr, block_elems * elem_bytes, slot, epoch,
                                              libshmem_device.ACLSHMEM_SIGNAL_SET, pe)
            else:
                _copy_block(own, x_ptr, block_elems, BLOCK)
                libshmem_device.fence()
                libshmem_device.signal_op(slot, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
    else:
        for src in range(pid - n_producers, n_ranks, n_programs - n_producers):
            libshmem_device.signal_wait_until(signal_ptr + src * SLOT_STRIDE, libshmem_device.ACLSHMEM_CMP_EQ,
                                              epoch)
            block = tl.cast(src, tl.int64) * block_elems
            _copy_block(out_ptr + block, window_ptr + block, block_elems, BLOCK)


def allgather_shmem_reference(shards: list[torch.Tensor]) -> torch.Tensor:
    """``concat(x_0, ..., x_{P-1})``."""
    return torch.cat(shards, dim=0)


def allgather_shmem_on_npu(x: torch.Tensor, window: torch.Tensor, signals: torch.Tensor, epoch: int,
                           n_producers: int = 1, block: int = 1024) -> torch.Tensor:
    """Launch this process's rank; ``window`` and ``signals`` are aclshmem tensors, ``epoch`` grows per call."""
    world = window.shape[0]
    out = torch.empty((world * x.shape[0], x.shape[1]), dtype=x.dtype, device=x.device)
    n_cores = vector_core_count(x.device)
    if not 0 < n_producers < n_cores:
        raise ValueError(f"{n_producers} producer programs do not fit a grid of {n_cores}")
    allgather_shmem_kernel[(n_cores,)](
        x.contiguous(), window, signals, out, x.numel(), epoch, n_producers, BLOCK=block, SLOT_STRIDE=SLOT_STRIDE)
    return out
