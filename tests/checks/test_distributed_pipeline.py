"""A whole Triton-distributed module written right lints clean; breaking one protocol step gives that rule's finding.

The module holds a double-buffered ring pipeline (MTE broadcast: credit wait, store, fence, fine-grained
per-round signals on their own 64-byte lines, consumer credit return) and a UDMA row gather (pes partitioned across programs, summed tokens),
both launched on a grid of the device's vector cores.
"""

from __future__ import annotations

import pytest

from tests.helpers import fix, lint

PIPELINE = '''
import torch
import triton
import triton.language as tl
import triton_dist.language as dl
from triton.runtime import driver
from triton_dist.language.extra import libshmem_device


@triton.jit
def ring_pipeline_kernel(x_ptr, y_ptr, inbox_ptr, signal_ptr, n_rounds, n_producers,
                         BLOCK: tl.constexpr, BUFFER_NUM: tl.constexpr):
    """Producers broadcast round tiles into every rank's inbox; consumers copy them out and return the slot."""
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    if pid < n_producers:
        for rnd in range(pid, n_rounds, n_producers):
            ring = tl.cast(pid, tl.int64) * BUFFER_NUM + (rnd // n_producers) % BUFFER_NUM
            slot = signal_ptr + (ring * n_ranks + rank) * 8
            inbox = inbox_ptr + (ring * n_ranks + rank) * BLOCK
            tile = tl.load(x_ptr + tl.cast(rnd, tl.int64) * BLOCK + offs)
            for peer in range(n_ranks):
                credit = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                remote = dl.consume_token(dl.symm_at(inbox, peer), credit)
                tl.store(remote + offs, tile)
            libshmem_device.fence()
            for peer in range(n_ranks):
                dl.notify(slot, peer, signal=rnd + 1, sig_op="set")
    else:
        for task in range(pid - n_producers, n_rounds * n_ranks, n_programs - n_producers):
            rnd = task // n_ranks
            src = task % n_ranks
            ring = tl.cast(rnd % n_producers, tl.int64) * BUFFER_NUM + (rnd // n_producers) % BUFFER_NUM
            slot = signal_ptr + (ring * n_ranks + src) * 8
            token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
            inbox = dl.consume_token(inbox_ptr + (ring * n_ranks + src) * BLOCK, token)
            row = tl.cast(src, tl.int64) * n_rounds + rnd
            tl.store(y_ptr + row * BLOCK + offs, tl.load(inbox + offs))
            libshmem_device.fence()
            dl.notify(slot, rank, signal=0, sig_op="set")


@triton.jit
def gather_rows_kernel(x_ptr, gathered_ptr, signal_ptr, out_ptr, n_elems, BLOCK: tl.constexpr):
    """Every rank puts its rows into each peer's gathered buffer with one UDMA call per pe (its own share with
    MTE stores), then scales them."""
    rank = dl.rank()
    n_ranks = dl.num_ranks()
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    elem_bytes = tl.cdiv(x_ptr.dtype.element_ty.primitive_bitwidth, 8)  # `// 8` does not compile (3.2.0)
    mine = gathered_ptr + tl.cast(rank, tl.int64) * n_elems
    for pe in range(pid, n_ranks, n_programs):
        if pe != rank:
            libshmem_device.putmem(mine, x_ptr, n_elems * elem_bytes, pe)
            dl.notify(signal_ptr + rank * 8, pe, signal=1, sig_op="set")
    if pid == 0:  # the own share goes through MTE: UDMA cannot copy into the calling rank
        for start in range(0, n_elems, BLOCK):
            idx = start + tl.arange(0, BLOCK)
            tl.store(mine + idx, tl.load(x_ptr + idx, mask=idx < n_elems), mask=idx < n_elems)
        libshmem_device.fence()
        dl.notify(signal_ptr + rank * 8, rank, signal=1, sig_op="set")
    token = dl.wait(signal_ptr, 1, "gpu", "acquire")
    for src in range(1, n_ranks):
        token += dl.wait(signal_ptr + src * 8, 1, "gpu", "acquire")
    gathered = dl.consume_token(gathered_ptr, token)
    total = tl.cast(n_ranks, tl.int64) * n_elems
    for start in range(tl.cast(pid, tl.int64) * BLOCK, total, tl.cast(n_programs, tl.int64) * BLOCK):
        idx = start + tl.arange(0, BLOCK)
        tl.store(out_ptr + idx, tl.load(gathered + idx, mask=idx < total) * 2, mask=idx < total)


def vector_cores(device: torch.device) -> int:
    return driver.active.utils.get_device_properties(device.index)["num_vectorcore"]


def run_ring_pipeline(x, y, inbox, signals, n_rounds, block, buffer_num):
    n_cores = vector_cores(x.device)
    ring_pipeline_kernel[(n_cores,)](x, y, inbox, signals, n_rounds, n_cores // 2,
                                     BLOCK=block, BUFFER_NUM=buffer_num)


def run_gather_rows(x, gathered, signals, out, block):
    n_cores = vector_cores(x.device)
    gather_rows_kernel[(n_cores,)](x, gathered, signals, out, x.numel(), BLOCK=block)
'''

# (rule, the text a broken variant replaces, its replacement)
BROKEN = [
    pytest.param(
        "ASC401",
        "inbox = dl.consume_token(inbox_ptr + (ring * n_ranks + src) * BLOCK, token)",
        "inbox = inbox_ptr + (ring * n_ranks + src) * BLOCK",
        id="ASC401-token-of-the-consumer-wait-dropped",
    ),
    pytest.param(
        "ASC402",
        "            for peer in range(n_ranks):\n                dl.notify(",
        "            for peer in range(1, n_ranks):\n                dl.notify(",
        id="ASC402-notify-loop-skips-a-peer",
    ),
    pytest.param(
        "ASC403",
        "                tl.store(remote + offs, tile)\n            libshmem_device.fence()\n",
        "                tl.store(remote + offs, tile)\n",
        id="ASC403-broadcast-notified-without-fence",
    ),
    pytest.param(
        "ASC404",
        '            dl.notify(slot, rank, signal=0, sig_op="set")\n',
        "",
        id="ASC404-consumer-keeps-the-credit",
    ),
    pytest.param(
        "ASC413",
        "for task in range(pid - n_producers, n_rounds * n_ranks, n_programs - n_producers):",
        "for task in range(n_rounds * n_ranks):",
        id="ASC413-every-consumer-program-returns-the-same-credit",
    ),
    pytest.param(
        "ASC405",
        "libshmem_device.putmem(mine, x_ptr,",
        "libshmem_device.putmem(dl.symm_at(mine, pe), x_ptr,",
        id="ASC405-putmem-to-a-mapped-pointer",
    ),
    pytest.param(
        "ASC406",
        "for pe in range(pid, n_ranks, n_programs):",
        "for pe in range(n_ranks):",
        id="ASC406-every-program-drives-every-pe",
    ),
    pytest.param(
        "ASC407",
        "            libshmem_device.putmem(mine, x_ptr, n_elems * elem_bytes, pe)\n",
        "            for chunk in range(0, n_elems, BLOCK):\n"
        "                libshmem_device.putmem(mine + chunk, x_ptr + chunk, BLOCK * elem_bytes, pe)\n",
        id="ASC407-one-putmem-per-tile",
    ),
    pytest.param(
        "ASC408",
        "gather_rows_kernel[(n_cores,)]",
        "gather_rows_kernel[(64,)]",
        id="ASC408-literal-grid-larger-than-the-cores",
    ),
]


FIXABLE = [p for p in BROKEN if p.values[0] in ("ASC402", "ASC403", "ASC405")]


def broken_pipeline(variant_id: str) -> str:
    """The pipeline with the one step of the ``BROKEN`` variant ``variant_id`` broken."""
    _, before, after = next(p for p in BROKEN if p.id == variant_id).values
    return PIPELINE.replace(before, after)


def test_correct_pipeline_has_no_finding_at_all():
    found = lint(PIPELINE)
    assert found == [], [f"{d.code} {d.location.row}: {d.message}" for d in found]


@pytest.mark.parametrize("code, before, after", BROKEN)
def test_each_broken_protocol_step_gives_exactly_its_rule(code, before, after):
    assert PIPELINE.count(before) == 1, "the variant must change exactly one place"
    found = lint(PIPELINE.replace(before, after))
    assert [d.code for d in found] == [code], [f"{d.code} {d.location.row}: {d.message}" for d in found]


@pytest.mark.parametrize("code, before, after", FIXABLE)
def test_fix_of_a_broken_step_restores_the_correct_pipeline(code, before, after):
    outcome = fix(PIPELINE.replace(before, after), code)
    assert outcome.text == PIPELINE


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("indent", ["    ", "\t"], ids=["spaces", "tabs"])
def test_fence_fix_keeps_the_files_newline_and_indentation(newline, indent):
    def spelled(text: str) -> str:
        return text.replace("    ", indent).replace("\n", newline)

    outcome = fix(spelled(broken_pipeline("ASC403-broadcast-notified-without-fence")), "ASC403")
    assert outcome.text == spelled(PIPELINE)
