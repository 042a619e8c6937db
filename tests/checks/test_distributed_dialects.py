"""The libshmem_device (aclshmem) dialect drives the ASC4xx rules as `dl.notify` / `dl.wait` do, and the misses
and false findings of issues 23 and 29, each as a small kernel of our own."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = """
import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton_dist.language.extra import libshmem_device
from triton.language.extra.cann.extension import sub_vec_id
"""


def codes(code: str, *rules: str) -> list[tuple[str, int]]:
    return [(d.code, d.location.row) for d in lint(HEADER + code, *rules)]


def lines_of(code: str, rule: str) -> list[int]:
    return [line for found, line in codes(code, rule) if found == rule]


def line_with(code: str, text: str, nth: int = 0) -> int:
    """The line (in the linted text, header included) of the ``nth`` line holding ``text``."""
    rows = [i for i, row in enumerate((HEADER + code).splitlines(), start=1) if text in row]
    return rows[nth]


# -- ASC403: the shmem dialect's signal write, and putmem -> fence -> signal_op -----------------------------------

STORE_THEN_SIGNAL_OP = """
@triton.jit
def push_tile(buf_ptr, sig_ptr, x_ptr, peer, epoch, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    remote = libshmem_device.remote_ptr(buf_ptr, peer)
    tl.store(remote + offs, tl.load(x_ptr + offs))
    libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""


def test_asc403_store_then_signal_op_without_fence():
    assert lines_of(STORE_THEN_SIGNAL_OP, "ASC403") == [line_with(STORE_THEN_SIGNAL_OP, "signal_op(")]


def test_asc403_store_fence_signal_op_is_the_safe_order():
    fenced = STORE_THEN_SIGNAL_OP.replace(
        "    libshmem_device.signal_op(", "    libshmem_device.fence()\n    libshmem_device.signal_op(")
    assert lines_of(fenced, "ASC403") == []


PUT_FENCE_SIGNAL_OP = """
@triton.jit
def push_rows(buf_ptr, sig_ptr, x_ptr, nbytes, peer, epoch):
    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
    libshmem_device.fence()
    libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""


def test_asc403_putmem_fence_signal_op_is_reported():
    assert lines_of(PUT_FENCE_SIGNAL_OP, "ASC403") == [line_with(PUT_FENCE_SIGNAL_OP, "signal_op(")]


def test_asc403_putmem_in_a_helper_then_fence_signal_op_is_reported():
    code = """
@triton.jit
def _push(buf_ptr, x_ptr, nbytes, peer):
    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)

@triton.jit
def push_rows(buf_ptr, sig_ptr, x_ptr, nbytes, peer, epoch):
    _push(buf_ptr, x_ptr, nbytes, peer)
    libshmem_device.fence()
    libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""
    assert lines_of(code, "ASC403") == [line_with(code, "signal_op(")]


def test_asc403_putmem_quiet_signal_op_and_fused_put_signal_are_safe():
    quiet = PUT_FENCE_SIGNAL_OP.replace("fence()", "quiet()")
    assert lines_of(quiet, "ASC403") == []
    fused = """
@triton.jit
def push_rows(buf_ptr, sig_ptr, x_ptr, nbytes, peer, epoch):
    libshmem_device.putmem_signal_nbi(buf_ptr, x_ptr, nbytes, sig_ptr, epoch,
                                      libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""
    assert lines_of(fused, "ASC403") == []


def test_asc403_putmem_nbi_chunks_then_fused_tail_without_quiet():
    code = """
@triton.jit
def push_chunks(buf_ptr, sig_ptr, x_ptr, CHUNK: tl.constexpr, N_CHUNKS: tl.constexpr, peer, epoch):
    for c in tl.static_range(0, N_CHUNKS - 1):
        libshmem_device.putmem_nbi(buf_ptr + c * CHUNK, x_ptr + c * CHUNK, CHUNK * 2, peer)
    tail: tl.constexpr = (N_CHUNKS - 1) * CHUNK
    libshmem_device.putmem_signal_nbi(buf_ptr + tail, x_ptr + tail, CHUNK * 2, sig_ptr, epoch,
                                      libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""
    assert lines_of(code, "ASC403") == [line_with(code, "putmem_signal_nbi(")]
    drained = code.replace("    tail: tl.constexpr", "    libshmem_device.quiet()\n    tail: tl.constexpr")
    assert lines_of(drained, "ASC403") == []


def test_asc403_putmem_then_dl_notify_stays_exempt():
    code = """
@triton.jit
def push_rows(buf_ptr, sig_ptr, x_ptr, nbytes, peer):
    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
    dl.notify(sig_ptr, peer, signal=1, sig_op="set")
"""
    assert lines_of(code, "ASC403") == []


# -- ASC409: notify before a helper's store through a consumed pointer; the shmem dialect -------------------------

NOTIFY_BEFORE_HELPER_STORE = """
@triton.jit
def _copy_rows(dst_ptr, src_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)

@triton.jit
def gather(window_ptr, sig_ptr, x_ptr, n, BLOCK: tl.constexpr):
    rank = dl.rank()
    for rnd in range(4):
        slot = sig_ptr + rank * 8
        token = dl.wait(slot, 1, "gpu", "acquire", waitValue=0)
        dst = dl.consume_token(window_ptr + rank * BLOCK, token)
        dl.notify(slot, rank, signal=rnd + 1, sig_op="set")
        _copy_rows(dst, x_ptr + rnd * BLOCK, n, BLOCK)
"""


def test_asc409_notify_before_helper_store_through_consumed_pointer():
    assert lines_of(NOTIFY_BEFORE_HELPER_STORE, "ASC409") == [line_with(NOTIFY_BEFORE_HELPER_STORE, "dl.notify(")]


def test_asc409_helper_store_then_fence_then_notify_is_fine():
    code = NOTIFY_BEFORE_HELPER_STORE.replace(
        """        dl.notify(slot, rank, signal=rnd + 1, sig_op="set")
        _copy_rows(dst, x_ptr + rnd * BLOCK, n, BLOCK)""",
        """        _copy_rows(dst, x_ptr + rnd * BLOCK, n, BLOCK)
        libshmem_device.fence()
        dl.notify(slot, rank, signal=rnd + 1, sig_op="set")""")
    assert lines_of(code, "ASC409") == []


def test_asc409_helper_that_only_reads_the_pointer_is_no_publish():
    code = NOTIFY_BEFORE_HELPER_STORE.replace(
        "_copy_rows(dst, x_ptr + rnd * BLOCK, n, BLOCK)", "_copy_rows(x_ptr, dst, n, BLOCK)")
    assert lines_of(code, "ASC409") == []


def test_asc409_signal_op_before_the_remote_store():
    code = """
@triton.jit
def push_tile(buf_ptr, sig_ptr, x_ptr, peer, epoch, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    libshmem_device.signal_op(sig_ptr, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
    tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
"""
    assert lines_of(code, "ASC409") == [line_with(code, "signal_op(")]


# -- ASC411: computed pe, world size as a parameter ---------------------------------------------------------------

COMPUTED_PE = """
@triton.jit
def scatter(buf_ptr, x_ptr, nbytes, n_work, W: tl.constexpr, LOCAL_RANK: tl.constexpr):
    for work_id in range(tl.program_id(0), n_work, tl.num_programs(0)):
        dst = work_id % W
        libshmem_device.putmem(buf_ptr + LOCAL_RANK * nbytes, x_ptr + work_id * nbytes, nbytes, dst)
"""


def test_asc411_putmem_to_a_computed_pe_that_can_be_the_own_rank():
    assert lines_of(COMPUTED_PE, "ASC411") == [line_with(COMPUTED_PE, "putmem(")]


def test_asc411_computed_pe_guarded_or_shifted_is_fine():
    guarded = COMPUTED_PE.replace(
        "        libshmem_device.putmem(", "        if dst != LOCAL_RANK:\n            libshmem_device.putmem(")
    assert lines_of(guarded, "ASC411") == []
    shifted = COMPUTED_PE.replace("dst = work_id % W", "dst = (LOCAL_RANK + 1 + work_id % (W - 1)) % W")
    assert lines_of(shifted, "ASC411") == []


@pytest.mark.parametrize("signature, stop", [
    ("WORLD: tl.constexpr", "WORLD"),
    ("world_size", "world_size"),
    ("num_ranks", "num_ranks"),
    ("WORLD_SIZE: tl.constexpr", "WORLD_SIZE"),
])
def test_asc411_loop_over_every_pe_with_the_world_size_a_parameter(signature, stop):
    code = f"""
@triton.jit
def all_gather(buf_ptr, x_ptr, nbytes, rank, {signature}):
    pid = tl.program_id(0)
    npg = tl.num_programs(0)
    for pe in range(pid, {stop}, npg):
        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
"""
    assert lines_of(code, "ASC411") == [line_with(code, "putmem(")]
    guarded = code.replace("        libshmem_device.putmem(", "        if pe != rank:\n            libshmem_device.putmem(")
    assert lines_of(guarded, "ASC411") == []


# -- ASC406: follow the caller's guard ----------------------------------------------------------------------------

HELPER_UNDER_SINGLE_PROGRAM_GUARD = """
@triton.jit
def _push_all(buf_ptr, x_ptr, nbytes, rank, n_pes):
    for pe in range(n_pes):
        if pe != rank:
            libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)

@triton.jit
def gather(buf_ptr, x_ptr, nbytes, rank, n_pes):
    pid = tl.program_id(0)
    if (sub_vec_id() == 0) & (pid == 0):
        _push_all(buf_ptr, x_ptr, nbytes, rank, n_pes)
"""


def test_asc406_helper_whose_only_caller_runs_it_on_one_program():
    assert lines_of(HELPER_UNDER_SINGLE_PROGRAM_GUARD, "ASC406") == []


def test_asc406_same_helper_called_by_every_program_is_reported():
    code = HELPER_UNDER_SINGLE_PROGRAM_GUARD.replace("if (sub_vec_id() == 0) & (pid == 0):", "if sub_vec_id() == 0:")
    assert lines_of(code, "ASC406") == [line_with(code, "putmem(")]


def test_asc406_bitwise_and_guard_in_the_kernel_itself():
    code = """
@triton.jit
def gather(buf_ptr, x_ptr, nbytes, rank, n_pes):
    pid = tl.program_id(0)
    for pe in range(n_pes):
        if (sub_vec_id() == 0) & (pid == 0):
            libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
"""
    assert lines_of(code, "ASC406") == []


OWNER_PULL_ON_ONE_PROGRAM = """
@triton.jit
def _pull_one(staging_ptr, slot_ptr, peer, nbytes, NUM_CHUNKS: tl.constexpr):
    for chunk in tl.static_range(0, NUM_CHUNKS):
        libshmem_device.getmem(staging_ptr, slot_ptr + chunk * nbytes, nbytes, peer)

@triton.jit
def owner_pull(staging_ptr, slot_ptr, peer_ptr, n_desc, pid, num_programs, nbytes, NUM_CHUNKS: tl.constexpr):
    for i in range(pid, n_desc, num_programs):
        peer = tl.load(peer_ptr + i)
        _pull_one(staging_ptr, slot_ptr, peer, nbytes, NUM_CHUNKS)

def launch_owner_pull(staging, slots, peers, nbytes, num_programs=1):
    if num_programs != 1:
        raise ValueError("the pull keeps its accumulation order on one program")
    owner_pull[(num_programs, 1, 1)](staging, slots, peers, peers.numel(), 0, num_programs, nbytes, NUM_CHUNKS=4)
"""


def test_asc406_launch_the_host_pins_to_one_program_drives_each_pe_from_one_core():
    assert lines_of(OWNER_PULL_ON_ONE_PROGRAM, "ASC406") == []


def test_asc406_same_launch_without_the_pin_is_reported():
    code = OWNER_PULL_ON_ONE_PROGRAM.replace(
        '    if num_programs != 1:\n        raise ValueError("the pull keeps its accumulation order on one program")\n', "")
    assert lines_of(code, "ASC406") == [line_with(code, "getmem(")]


# -- ASC408: the grid is what it is, not what it is called; barrier-only kernels on a literal grid -----------------

PERSISTENT_WAITER = """
@triton.jit
def consume(buf_ptr, sig_ptr, out_ptr, n_tiles, BLOCK: tl.constexpr):
    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        libshmem_device.signal_wait_until(sig_ptr + tile * 16, libshmem_device.ACLSHMEM_CMP_GE, 1)
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(buf_ptr + offs))

def run(buf, sig, out, n_tiles, {name}):
    consume[({name}, 1, 1)](buf, sig, out, n_tiles, BLOCK=128)
"""


@pytest.mark.parametrize("name", ["num_programs", "num_cores", "workers"])
def test_asc408_grid_passed_in_by_the_caller_is_not_judged_by_its_name(name):
    assert lines_of(PERSISTENT_WAITER.format(name=name), "ASC408") == []


def test_asc408_data_sized_grid_is_still_reported():
    code = PERSISTENT_WAITER.format(name="n").replace("consume[(n, 1, 1)]", "consume[(triton.cdiv(buf.numel(), 128), 1, 1)]")
    assert lines_of(code, "ASC408") == [line_with(code, "consume[(")]


BARRIER_ONLY = """
@triton.jit
def fence_all_puts():
    libshmem_device.barrier_all_vec()

def run():
    fence_all_puts[(1, 1, 1)]()
"""


def test_asc408_barrier_only_kernel_on_a_literal_one_program_grid():
    assert lines_of(BARRIER_ONLY, "ASC408") == [line_with(BARRIER_ONLY, "fence_all_puts[(")]


def test_asc408_barrier_only_kernel_on_the_core_grid_is_fine():
    code = BARRIER_ONLY.replace(
        "def run():\n    fence_all_puts[(1, 1, 1)]()",
        "def run():\n    from triton.backends.ascend.driver import NPUUtils\n"
        "    fence_all_puts[(NPUUtils().get_aicore_num(), 1, 1)]()")
    assert lines_of(code, "ASC408") == []


def test_asc408_kernel_doing_its_own_work_before_a_barrier_on_one_program_is_fine():
    code = """
@triton.jit
def bump(counter_ptr, rank, n):
    val = tl.load(counter_ptr)
    libshmem_device.barrier_all_vec()
    tl.store(libshmem_device.remote_ptr(counter_ptr, (rank + 1) % n), val + 1)

def run(counter, rank, n):
    bump[(1, 1, 1)](counter, rank, n)
"""
    assert lines_of(code, "ASC408") == []


# -- ASC412: slots packed by a host constant ----------------------------------------------------------------------

def test_asc412_slot_stride_from_a_host_constant():
    code = """
SIGNAL_SLOT_STRIDE = 1

@triton.jit
def signal_all(sig_ptr, n_tasks, STRIDE: tl.constexpr):
    for i in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        dl.notify(sig_ptr + i * STRIDE, 0, signal=1, sig_op="set")

def run(sig, n_tasks):
    signal_all[(20,)](sig, n_tasks, STRIDE=SIGNAL_SLOT_STRIDE)
"""
    assert lines_of(code, "ASC412") == [line_with(code, "dl.notify(")]
    wide = code.replace("SIGNAL_SLOT_STRIDE = 1", "SIGNAL_SLOT_STRIDE = 8")
    assert lines_of(wide, "ASC412") == []


def test_asc412_module_constant_used_in_the_kernel():
    code = """
SIGNAL_SLOT_STRIDE = 1

@triton.jit
def signal_all(sig_ptr, n_tasks):
    for i in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        dl.notify(sig_ptr + i * SIGNAL_SLOT_STRIDE, 0, signal=1, sig_op="set")
"""
    assert lines_of(code, "ASC412") == [line_with(code, "dl.notify(")]


# -- ASC414: a kernel that only waits on other ranks' signals, launched per step ----------------------------------

WAIT_ONLY = """
@triton.jit
def wait_and_copy(buf_ptr, sig_ptr, out_ptr, rank, BLOCK: tl.constexpr):
    token = dl.wait(sig_ptr + rank * 8, 1, "gpu", "acquire")
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

def train(buf, sig, out, rank, steps):
    for _ in range(steps):
        wait_and_copy[(1,)](buf, sig, out, rank, BLOCK=128)
"""


def test_asc414_waiting_kernel_relaunched_without_zeroing():
    assert lines_of(WAIT_ONLY, "ASC414") == [line_with(WAIT_ONLY, "wait_and_copy[(")]


def test_asc414_waiting_kernel_relaunched_after_zero_and_barrier_is_fine():
    code = WAIT_ONLY.replace(
        "    for _ in range(steps):\n",
        "    for _ in range(steps):\n        sig.zero_()\n        torch.distributed.barrier()\n")
    assert lines_of(code, "ASC414") == []


def test_asc414_waiting_on_a_value_passed_per_launch_is_fine():
    code = WAIT_ONLY.replace('"acquire")', '"acquire", waitValue=epoch)').replace(
        "rank, BLOCK: tl.constexpr", "rank, epoch, BLOCK: tl.constexpr").replace(
        "    for _ in range(steps):\n        wait_and_copy[(1,)](buf, sig, out, rank, BLOCK=128)",
        "    for step in range(steps):\n        wait_and_copy[(1,)](buf, sig, out, rank, step + 1, BLOCK=128)")
    assert lines_of(code, "ASC414") == []


# -- ASC404 / ASC410 / ASC413 / ASC402 read the shmem dialect -------------------------------------------------------

RING_CONSUMER_SHMEM = """
@triton.jit
def consume(buf_ptr, sig_ptr, out_ptr, n_rounds, BUFFER_NUM: tl.constexpr, BLOCK: tl.constexpr):
    rank = dl.rank()
    for rnd in range(tl.program_id(0), n_rounds, tl.num_programs(0)):
        buf = rnd % BUFFER_NUM
        slot = sig_ptr + buf * 16
        libshmem_device.signal_wait_until(slot, libshmem_device.ACLSHMEM_CMP_EQ, 1)
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
        libshmem_device.fence()
        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
"""


def test_asc404_shmem_ring_consumer_with_its_credit_return_is_fine():
    assert lines_of(RING_CONSUMER_SHMEM, "ASC404") == []


def test_asc404_shmem_ring_consumer_without_credit_return():
    code = RING_CONSUMER_SHMEM.replace(
        "        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)\n", "")
    assert lines_of(code, "ASC404") == [line_with(code, "signal_wait_until(")]


def test_asc410_shmem_credit_returned_before_the_read():
    code = RING_CONSUMER_SHMEM.replace(
        """        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))
        libshmem_device.fence()
        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)""",
        """        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + rnd * BLOCK + offs, tl.load(buf_ptr + buf * BLOCK + offs))""")
    assert lines_of(RING_CONSUMER_SHMEM, "ASC410") == []
    assert lines_of(code, "ASC410") == [line_with(code, "signal_op(")]


def test_asc402_shmem_signal_loop_over_another_range():
    code = """
@triton.jit
def publish(buf_ptr, sig_ptr, x_ptr, n_tiles, peer, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for t in range(pid, n_tiles, tl.num_programs(0)):
        offs = t * BLOCK + tl.arange(0, BLOCK)
        tl.store(libshmem_device.remote_ptr(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
    libshmem_device.fence()
    for t in range(0, n_tiles):
        libshmem_device.signal_op(sig_ptr + t * 16, 1, libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""
    assert lines_of(code, "ASC402") == [line_with(code, "for t in range(0, n_tiles)")]
    same = code.replace("for t in range(0, n_tiles):", "for t in range(pid, n_tiles, tl.num_programs(0)):")
    assert lines_of(same, "ASC402") == []


def test_asc409_allgather_reference_with_the_own_rank_notify_moved_before_the_helper_copy():
    from pathlib import Path

    from tests.helpers import lint as lint_text

    source = (Path(__file__).resolve().parents[2] / "reference_kernels" / "allgather_gemm.py").read_text()
    own_rank = """                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, COPY_K)
                    libshmem_device.fence()
                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
"""
    moved = """                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, COPY_K)
                    libshmem_device.fence()
"""
    assert own_rank in source
    broken = source.replace(own_rank, moved)
    notify_line = broken.splitlines().index(moved.splitlines()[0]) + 1
    assert [d.location.row for d in lint_text(source, "ASC409")] == []
    assert [d.location.row for d in lint_text(broken, "ASC409")] == [notify_line]


def test_asc413_shmem_slot_reset_twice_in_one_round():
    code = RING_CONSUMER_SHMEM.replace(
        "        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)\n",
        "        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)\n"
        "        libshmem_device.signal_op(slot, 0, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)\n")
    assert lines_of(RING_CONSUMER_SHMEM, "ASC413") == []
    assert lines_of(code, "ASC413") == [line_with(code, "signal_op(slot, 0", nth=1)]


def test_asc405_putmem_to_a_remote_ptr_mapped_address():
    code = """
@triton.jit
def push(buf_ptr, x_ptr, nbytes, peer):
    libshmem_device.putmem(libshmem_device.remote_ptr(buf_ptr, peer), x_ptr, nbytes, peer)
"""
    assert lines_of(code, "ASC405") == [line_with(code, "putmem(")]
    assert lines_of(code.replace("libshmem_device.remote_ptr(buf_ptr, peer)", "buf_ptr"), "ASC405") == []


def test_asc403_quiet_under_the_compile_time_guard_of_the_chunk_count():
    code = """
@triton.jit
def push_chunks(buf_ptr, sig_ptr, x_ptr, CHUNK: tl.constexpr, N_CHUNKS: tl.constexpr, peer, epoch):
    for c in tl.static_range(0, N_CHUNKS - 1):
        libshmem_device.putmem_nbi(buf_ptr + c * CHUNK, x_ptr + c * CHUNK, CHUNK * 2, peer)
    if N_CHUNKS > 1:
        libshmem_device.quiet()
    tail: tl.constexpr = (N_CHUNKS - 1) * CHUNK
    libshmem_device.putmem_signal_nbi(buf_ptr + tail, x_ptr + tail, CHUNK * 2, sig_ptr, epoch,
                                      libshmem_device.ACLSHMEM_SIGNAL_SET, peer)
"""
    assert lines_of(code, "ASC403") == []
    runtime_guard = code.replace("if N_CHUNKS > 1:", "if epoch > 1:")
    assert lines_of(runtime_guard, "ASC403") == [line_with(runtime_guard, "putmem_signal_nbi(")]


# -- the shmem-dialect reference fixture: clean as written, each protocol mistake reported on its line ----------

SHMEM_FIXTURE = "allgather_shmem.py"

_SHMEM_MUTATIONS = [
    # (rule, text replaced, replacement, line fragment of the expected finding)
    ("ASC403", """                _copy_block(own, x_ptr, block_elems, BLOCK)
                libshmem_device.fence()
""", """                _copy_block(own, x_ptr, block_elems, BLOCK)
""", "libshmem_device.signal_op(slot"),
    ("ASC403", """                libshmem_device.putmem_signal(own, x_ptr, block_elems * elem_bytes, slot, epoch,
                                              libshmem_device.ACLSHMEM_SIGNAL_SET, pe)
""", """                libshmem_device.putmem(own, x_ptr, block_elems * elem_bytes, pe)
                libshmem_device.fence()
                libshmem_device.signal_op(slot, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, pe)
""", "libshmem_device.signal_op(slot, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, pe)"),
    ("ASC409", """                _copy_block(own, x_ptr, block_elems, BLOCK)
                libshmem_device.fence()
                libshmem_device.signal_op(slot, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
""", """                libshmem_device.signal_op(slot, epoch, libshmem_device.ACLSHMEM_SIGNAL_SET, rank)
                _copy_block(own, x_ptr, block_elems, BLOCK)
                libshmem_device.fence()
""", "libshmem_device.signal_op(slot, epoch"),
    ("ASC411", "            if pe != rank:\n", "            if True:\n", "libshmem_device.putmem_signal("),
    ("ASC412", "SLOT_STRIDE=SLOT_STRIDE)", "SLOT_STRIDE=1)", ("libshmem_device.putmem_signal(",
                                                               "libshmem_device.signal_wait_until(")),
    ("ASC406", "        for pe in range(pid, n_ranks, n_producers):", "        for pe in range(n_ranks):",
     "libshmem_device.putmem_signal("),
]


def _fixture_text() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[2] / "reference_kernels" / SHMEM_FIXTURE).read_text()


def test_shmem_reference_fixture_is_clean_under_every_rule():
    from tests.helpers import lint as lint_text

    assert lint_text(_fixture_text(), filename=SHMEM_FIXTURE, options=None) == []
    assert [d.code for d in lint_text(_fixture_text(), "ASC", filename=SHMEM_FIXTURE)] == []


@pytest.mark.parametrize("rule, old, new, fragment", _SHMEM_MUTATIONS,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(_SHMEM_MUTATIONS)])
def test_shmem_reference_fixture_mutation_is_reported(rule, old, new, fragment):
    from tests.helpers import lint as lint_text

    text = _fixture_text()
    assert old in text
    broken = text.replace(old, new, 1)
    fragments = (fragment,) if isinstance(fragment, str) else fragment
    expected = [next(row for row, line in enumerate(broken.splitlines(), start=1) if f in line) for f in fragments]
    assert [d.location.row for d in lint_text(broken, rule, filename=SHMEM_FIXTURE)] == expected
