"""Each fused reference kernel broken on purpose, one protocol mistake at a time.

A mutation is a set of exact text edits to a reference kernel module (each old text must occur exactly
once, so a change to the reference that moves the text breaks the test loudly rather than silently).
The same mutated source is linted and, as a module of its own, run on the emulator. Every row of the
distributed-protocol table (the Triton-distributed performance guide: missing credit return, notify range, reset range, dropped
``consume_token``, dropped fence, notify before the store, credit returned before the read, putmem to
the own rank) and every failure mode of its troubleshooting list (credit erased by several resetters,
signals left set between launches, a grid larger than the cores, a slot formula that outgrows the
allocation, slots sharing a cache line) appears on each fused kernel where it applies.

``rule``: the rule that must report the mistake on the line holding ``anchor`` (None when no rule can).
``outcome``: what the emulator (full device model, hazards on, default schedule exploration) must show:
"hang" (EmulatorHang whose report holds every text of ``report``), "wrong" (a schedule's numbers differ
from torch), "error" (an exception matching ``report``), alternatives joined by " or " (the mistake
lets the protocol run on with stale data, stall or trip a check, whichever the first failing schedule
gives; each counts as seen), or None when the emulator cannot show it. ``why`` says why the other side
is blind. ``hidden_without`` names the device-model layer that exposes the mistake: rerunning the
schedule that failed with that layer off passes, as it did on the emulator before that layer
existed; ``"exploration"`` means the
fixed schedule alone passes it and only the explored interleavings show it. ``worlds`` lists the world
sizes the emulator runs it at (the issue-25 classes run at 2 and 4). Every emulator run uses the
default schedule exploration and compares with torch after every schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mutation:
    id: str
    module: str
    edits: tuple
    rule: str | None
    anchor: str | None = None
    anchor_occurrence: int = 0
    outcome: str | None = None
    report: tuple = ()
    why: str = ""
    shape: dict = field(default_factory=dict)
    world: int = 2
    cores: int = 4
    model: dict = field(default_factory=dict)
    launches: int = 1
    hidden_without: str | None = None
    extra_source: str = ""
    worlds: tuple = ()  # world sizes the emulator tests run it at (default: just ``world``)
    rule_to_come: str | None = None  # a rule not in this tree yet that is meant to report it

    @property
    def world_sizes(self) -> tuple:
        return self.worlds or (self.world,)

    def apply(self, source: str) -> str:
        for old, new in self.edits:
            count = source.count(old)
            if count != 1:
                raise AssertionError(f"{self.id}: expected the text to change exactly once, found {count}:\n{old}")
            source = source.replace(old, new)
        return source + self.extra_source


_BOTH_WORLDS = (2, 4)
_NO_WAIT_SEMANTICS_RULE = "no rule of this tree reads a wait's scope or semantic (ASC415 is planned for it)"
_LINTER_CANNOT_SIZE = "the linter does not know the host's allocation size, so it cannot see a slot index outgrow it"


# A single buffer generation: the producer reuses a buffer the moment its credit comes back, so a credit
# returned before the read is overwritten at once (with two, the consumer must also lag a round behind).
_ONE_BUFFER = {"buffer_num": 1}


def _ag(id, edits, **kwargs):
    return Mutation(f"allgather_gemm-{id}", "allgather_gemm", edits, **kwargs)


def _ar(id, edits, **kwargs):
    return Mutation(f"gemm_allreduce-{id}", "gemm_allreduce", edits, **kwargs)


def _rs(id, edits, **kwargs):
    return Mutation(f"gemm_reducescatter-{id}", "gemm_reducescatter", edits, **kwargs)


def _ra(id, edits, **kwargs):
    return Mutation(f"reverse_all2all-{id}", "reverse_all2all", edits, **kwargs)


def _tp(id, edits, **kwargs):
    return Mutation(f"allgather_gemm_two_phase-{id}", "allgather_gemm_two_phase", edits, **kwargs)


# -- AllGather + GEMM (signals) ---------------------------------------------------------------------------

_AG_RESET = '            libshmem_device.fence()\n            dl.notify(slot, rank, signal=0, sig_op="set")\n'
_AG_CONSUME = ("            a_block = dl.consume_token(window_ptr + (tl.cast(buf, tl.int64) * n_ranks + src) "
               "* block_elems, token)\n")
_AG_BRANCHES = '''                if pe == rank:
                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, COPY_K)
                    libshmem_device.fence()
                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
                else:
                    libshmem_device.putmem(dst, a_ptr + row0 * K, n_rows * K * elem_bytes, pe)
                    dl.notify(slot, pe, signal=rnd + 1, sig_op="set")
'''

ALLGATHER_GEMM = [
    _ag("credit-return-removed", ((_AG_RESET, ""),), rule="ASC404",
        anchor='token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)',
        outcome="hang", report=("to equal 0", "dl.wait(dl.symm_at(slot, pe)")),
    _ag("consume-token-dropped",
        ((_AG_CONSUME, _AG_CONSUME.replace("dl.consume_token(", "(").replace(", token)", ")")),),
        rule="ASC401", anchor='token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)',
        outcome="hang or wrong", hidden_without="drop_unconsumed_waits"),
    _ag("fence-dropped", (("                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, "
                           "COPY_K)\n                    libshmem_device.fence()\n",
                           "                    _copy_rows_to_window(dst, a_ptr + row0 * K, n_rows, K, BLOCK_M, "
                           "COPY_K)\n"),),
        rule="ASC403", anchor='dl.notify(slot, pe, signal=rnd + 1, sig_op="set")', outcome="wrong",
        world=1, hidden_without="hold_stores_until_fence"),
    _ag("notify-before-putmem", (("                    libshmem_device.putmem(dst, a_ptr + row0 * K, n_rows * K * "
                                  "elem_bytes, pe)\n                    dl.notify(slot, pe, signal=rnd + 1, "
                                  "sig_op=\"set\")\n",
                                  "                    dl.notify(slot, pe, signal=rnd + 1, sig_op=\"set\")\n"
                                  "                    libshmem_device.putmem(dst, a_ptr + row0 * K, n_rows * K * "
                                  "elem_bytes, pe)\n"),),
        rule="ASC409", anchor='dl.notify(slot, pe, signal=rnd + 1, sig_op="set")', anchor_occurrence=1,
        outcome="wrong", hidden_without="yield_on_signal"),
    _ag("credit-returned-before-read", ((_AG_RESET, ""),
                                        (_AG_CONSUME, _AG_CONSUME + '            dl.notify(slot, rank, signal=0, '
                                                                    'sig_op="set")\n')),
        rule="ASC410", anchor='dl.notify(slot, rank, signal=0, sig_op="set")', outcome="wrong or error",
        shape=_ONE_BUFFER),
    _ag("credit-returned-before-read-two-buffers", ((_AG_RESET, "            libshmem_device.fence()\n"),
                                                    (_AG_CONSUME, _AG_CONSUME + '            dl.notify(slot, rank, '
                                                                                'signal=0, sig_op="set")\n')),
        rule="ASC410", anchor='dl.notify(slot, rank, signal=0, sig_op="set")', outcome="hang or wrong",
        worlds=_BOTH_WORLDS),
    _ag("consumer-wait-relaxed", (('token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)',
                                   'token = dl.wait(slot, 1, "gpu", "relaxed", waitValue=rnd + 1)'),),
        rule=None, rule_to_come="ASC415", outcome="wrong", why=_NO_WAIT_SEMANTICS_RULE, worlds=_BOTH_WORLDS,
        hidden_without="acquire_by_wait_semantics"),
    _ag("putmem-to-own-rank", ((_AG_BRANCHES,
                                "                libshmem_device.putmem(dst, a_ptr + row0 * K, n_rows * K * "
                                "elem_bytes, pe)\n                dl.notify(slot, pe, signal=rnd + 1, "
                                "sig_op=\"set\")\n"),),
        rule="ASC411", anchor="libshmem_device.putmem(dst,", outcome="error",
        report=("putmem with pe 0, the calling rank itself",), world=1, hidden_without="check_udma_addresses"),
    _ag("credits-reset-by-every-consumer", (('            dl.notify(slot, rank, signal=0, sig_op="set")\n',
                                             "            for other in range(n_ranks):\n"
                                             "                dl.notify(signal_ptr + (tl.cast(buf, tl.int64) * "
                                             "n_ranks + other) * SLOT_STRIDE, rank, signal=0, sig_op=\"set\")\n"),),
        rule="ASC413", anchor="dl.notify(signal_ptr + (tl.cast(buf, tl.int64) * n_ranks + other)",
        outcome="hang or wrong"),
    _ag("slots-share-a-line", (("                slot = signal_ptr + (tl.cast(buf, tl.int64) * n_ranks + rank) * "
                                "SLOT_STRIDE\n",
                                "                slot = signal_ptr + tl.cast(buf, tl.int64) * n_ranks + rank\n"),
                               ("            slot = signal_ptr + (tl.cast(buf, tl.int64) * n_ranks + src) * "
                                "SLOT_STRIDE\n",
                                "            slot = signal_ptr + tl.cast(buf, tl.int64) * n_ranks + src\n")),
        rule="ASC412", anchor='dl.notify(slot, pe, signal=rnd + 1, sig_op="set")',
        outcome="hang or wrong", worlds=_BOTH_WORLDS, hidden_without="incoherent_cache_lines"),
    _ag("slot-formula-outgrows-allocation", (("    signals = signal_slots(alloc, config.buffer_num * world_size)\n",
                                              "    signals = signal_slots(alloc, config.buffer_num * world_size - 1)"
                                              "\n"),),
        rule=None, outcome="error", report=("dl.wait", "overrun"), why=_LINTER_CANNOT_SIZE),
    _ag("grid-larger-than-the-cores", (("    allgather_gemm_kernel[(n_cores,)](*args, **kwargs)\n",
                                        "    allgather_gemm_kernel[(triton.cdiv(a.shape[0], 64),)](*args, **kwargs)\n"),
                                       ),
        rule="ASC408", anchor="allgather_gemm_kernel[(triton.cdiv(a.shape[0], 64),)]", outcome="hang",
        report=("never started", "to equal 0"), model={"resident_programs": 2}, hidden_without="resident_programs"),
]

# -- GEMM + AllReduce -------------------------------------------------------------------------------------

_AR_STORE_LOOP = '''            for peer in range(n_ranks):
                token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)
                dst = dl.consume_token(dl.symm_at(my_inbox, peer), token)
                tl.store(dst + tile_offs, partial.to(inbox_ptr.dtype.element_ty))
            libshmem_device.fence()
'''
_AR_NOTIFY_LOOP = '''            for peer in range(n_ranks):
                dl.notify(slot, peer, signal=tile + 1, sig_op="set")
'''
_RESET_LOOP = '''            libshmem_device.fence()
            for src in range(n_ranks):
                dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")
'''
_SUM_START = '''            total = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for src in range(n_ranks):  # add each partial as soon as it has landed
'''
_PARTIAL = "                partial = dl.consume_token(inbox_ptr + (group * n_ranks + src) * tile_elems, token)\n"
_PARTIAL_NO_TOKEN = "                partial = inbox_ptr + (group * n_ranks + src) * tile_elems\n"
_AR_PRODUCER_CONSUME = "                dst = dl.consume_token(dl.symm_at(my_inbox, peer), token)\n"
_AR_CONSUMER_WAIT = ('                token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", '
                     'waitValue=tile + 1)\n')
_EARLY_RESET = '''            for src in range(n_ranks):
                dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")
'''

GEMM_ALLREDUCE = [
    _ar("credit-return-removed", ((_RESET_LOOP, ""),), rule="ASC404",
        anchor='token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=tile + 1)',
        outcome="hang", report=("to equal 0",)),
    _ar("notify-range-differs", ((_AR_NOTIFY_LOOP, _AR_NOTIFY_LOOP.replace("range(n_ranks)", "range(1, n_ranks)")),),
        rule="ASC402", anchor="for peer in range(1, n_ranks):", outcome="hang",
        report=("rank 0 program", "to equal")),
    _ar("reset-loop-shortened", ((_RESET_LOOP, _RESET_LOOP.replace("range(n_ranks)", "range(1, n_ranks)")),),
        rule="ASC402", anchor="for src in range(1, n_ranks):", outcome="hang", report=("to equal 0",)),
    _ar("consume-token-dropped", ((_PARTIAL, _PARTIAL_NO_TOKEN),), rule="ASC401",
        anchor='token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=tile + 1)',
        outcome="hang or wrong"),
    _ar("fence-dropped", ((_AR_STORE_LOOP, _AR_STORE_LOOP.replace("            libshmem_device.fence()\n", "")),),
        rule="ASC403", anchor='dl.notify(slot, peer, signal=tile + 1, sig_op="set")', outcome="wrong"),
    _ar("notify-before-store", ((_AR_STORE_LOOP + _AR_NOTIFY_LOOP, _AR_NOTIFY_LOOP + _AR_STORE_LOOP),),
        rule="ASC409", anchor='dl.notify(slot, peer, signal=tile + 1, sig_op="set")', outcome="hang or wrong"),
    _ar("credit-returned-before-read", ((_RESET_LOOP, ""), (_SUM_START, _EARLY_RESET + _SUM_START)),
        rule="ASC410", anchor='dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")',
        outcome="hang or wrong or error"),
    _ar("consumer-fence-dropped", ((_RESET_LOOP, _RESET_LOOP.replace("            libshmem_device.fence()\n", "")),),
        rule="ASC403", anchor='dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")', outcome="error",
        report=("LoadOvertakenError", "without a fence"), worlds=_BOTH_WORLDS,
        hidden_without="loads_complete_at_fence"),
    _ar("producer-consume-token-dropped", ((_AR_PRODUCER_CONSUME, _AR_PRODUCER_CONSUME.replace(
        "dl.consume_token(dl.symm_at(my_inbox, peer), token)", "dl.symm_at(my_inbox, peer)")),),
        rule="ASC401", anchor='token = dl.wait(dl.symm_at(slot, peer), 1, "gpu", "acquire", waitValue=0)',
        outcome="hang or wrong", worlds=_BOTH_WORLDS, hidden_without="exploration"),
    _ar("consumer-wait-relaxed", ((_AR_CONSUMER_WAIT, _AR_CONSUMER_WAIT.replace('"acquire"', '"relaxed"')),),
        rule=None, rule_to_come="ASC415", outcome="wrong", why=_NO_WAIT_SEMANTICS_RULE, worlds=_BOTH_WORLDS,
        hidden_without="acquire_by_wait_semantics"),
    _ar("consumer-wait-cta-scope", ((_AR_CONSUMER_WAIT, _AR_CONSUMER_WAIT.replace('"gpu"', '"cta"')),),
        rule=None, rule_to_come="ASC415", outcome="wrong", why=_NO_WAIT_SEMANTICS_RULE, worlds=_BOTH_WORLDS,
        hidden_without="acquire_by_wait_semantics"),
    _ar("undersized-inbox", (("    inbox = alloc.symmetric_zeros((groups, world_size, config.block_m, config.block_n), "
                              "dtype)\n",
                              "    inbox = alloc.symmetric_zeros((groups - 1, world_size, config.block_m, "
                              "config.block_n), dtype)\n"),),
        rule=None, outcome="error", report=("OutOfBoundsError", "signal buffer #1"),
        why=_LINTER_CANNOT_SIZE, worlds=_BOTH_WORLDS),
    _ar("grid-larger-than-the-cores", (("    gemm_allreduce_kernel[(n_cores,)](*args, **kwargs)\n",
                                        "    gemm_allreduce_kernel[(triton.cdiv(a.shape[0], 64),)](*args, "
                                        "**kwargs)\n"),),
        rule="ASC408", anchor="gemm_allreduce_kernel[(triton.cdiv(a.shape[0], 64),)]", outcome="hang",
        report=("never started",), model={"resident_programs": 2}),
]

# -- GEMM + ReduceScatter ---------------------------------------------------------------------------------

_RS_PUBLISH = '''            tl.store(dst + tile_offs, partial.to(inbox_ptr.dtype.element_ty))
            libshmem_device.fence()
            dl.notify(slot, owner, signal=work + 1, sig_op="set")
'''

GEMM_REDUCESCATTER = [
    _rs("credit-return-removed", ((_RESET_LOOP, ""),), rule="ASC404",
        anchor='token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=work + 1)',
        outcome="hang", report=("to equal 0",)),
    _rs("reset-loop-shortened", ((_RESET_LOOP, _RESET_LOOP.replace("range(n_ranks)", "range(1, n_ranks)")),),
        rule="ASC402", anchor="for src in range(1, n_ranks):", outcome="hang", report=("to equal 0",)),
    _rs("consume-token-dropped", ((_PARTIAL, _PARTIAL_NO_TOKEN),), rule="ASC401",
        anchor='token = dl.wait(slots + src * SLOT_STRIDE, 1, "gpu", "acquire", waitValue=work + 1)',
        outcome="hang or wrong"),
    _rs("fence-dropped", ((_RS_PUBLISH, _RS_PUBLISH.replace("            libshmem_device.fence()\n", "")),),
        rule="ASC403", anchor='dl.notify(slot, owner, signal=work + 1, sig_op="set")', outcome="wrong"),
    _rs("notify-before-store", ((_RS_PUBLISH, '''            dl.notify(slot, owner, signal=work + 1, sig_op="set")
            tl.store(dst + tile_offs, partial.to(inbox_ptr.dtype.element_ty))
            libshmem_device.fence()
'''),), rule="ASC409", anchor='dl.notify(slot, owner, signal=work + 1, sig_op="set")', outcome="wrong"),
    _rs("credit-returned-before-read", ((_RESET_LOOP, ""), (_SUM_START, _EARLY_RESET + _SUM_START)),
        rule="ASC410", anchor='dl.notify(slots + src * SLOT_STRIDE, rank, signal=0, sig_op="set")',
        outcome="hang or wrong or error"),
]

# -- Reverse All2All --------------------------------------------------------------------------------------

_RA_RESET = '            libshmem_device.fence()\n            dl.notify(slot, rank, signal=0, sig_op="set")\n'
_RA_PUBLISH = '''            tl.store(dst + tile_offs, tile)
            libshmem_device.fence()
            dl.notify(slot, dst_rank, signal=work + 1, sig_op="set")
'''
_RA_PRODUCER_CONSUME = ("            dst = dl.consume_token(dl.symm_at(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), "
                        "dst_rank), token)\n")
_RA_CONSUME = "            src = dl.consume_token(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), token)\n"
# 1 sequence block x 2 peers x 2 heads = 4 tiles per rank: 2 producers x 2 generations hold them all
_RA_NO_WRAP = {"seq_per_rank": 8, "head_dim": 16}
_RA_STEP_LOOP = '''

def reverse_all2all_steps(xs, workspace, rank):
    """One launch per step, reusing the workspace."""
    outputs = []
    for x in xs:
        outputs.append(reverse_all2all_on_npu(x, workspace, rank))
    return outputs
'''

REVERSE_ALL2ALL = [
    _ra("credit-return-removed", ((_RA_RESET, ""),), rule="ASC404",
        anchor='token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)', outcome="hang",
        report=("to equal 0", 'dl.wait(dl.symm_at(slot, dst_rank), 1, "gpu", "acquire", waitValue=0)')),
    _ra("credit-return-removed-small-shape", ((_RA_RESET, ""),), rule="ASC404",
        anchor='token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)', outcome=None, shape=_RA_NO_WRAP,
        why="while no producer needs a buffer generation twice, nothing waits for the missing credit: small shapes "
            "pass on the device and on the emulator alike (the performance guide: all small shapes pass, large shapes hang)"),
    _ra("signals-left-set-across-launches", ((_RA_RESET, ""),), rule="ASC414", anchor="reverse_all2all_kernel[",
        outcome="hang", report=("to equal 0",), shape=_RA_NO_WRAP, launches=2, extra_source=_RA_STEP_LOOP),
    _ra("consume-token-dropped", ((_RA_CONSUME, "            src = inbox_ptr + slot_id * (BLOCK_S * BLOCK_D)\n"),),
        rule="ASC401", anchor='token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)',
        outcome="hang or wrong"),
    _ra("fence-dropped", ((_RA_PUBLISH, _RA_PUBLISH.replace("            libshmem_device.fence()\n", "")),),
        rule="ASC403", anchor='dl.notify(slot, dst_rank, signal=work + 1, sig_op="set")', outcome="wrong"),
    _ra("notify-before-store", ((_RA_PUBLISH, '''            dl.notify(slot, dst_rank, signal=work + 1, sig_op="set")
            tl.store(dst + tile_offs, tile)
            libshmem_device.fence()
'''),), rule="ASC409", anchor='dl.notify(slot, dst_rank, signal=work + 1, sig_op="set")', outcome="wrong"),
    _ra("credit-returned-before-read", ((_RA_RESET, ""),
                                        (_RA_CONSUME, _RA_CONSUME + '            dl.notify(slot, rank, signal=0, '
                                                                    'sig_op="set")\n')),
        rule="ASC410", anchor='dl.notify(slot, rank, signal=0, sig_op="set")', outcome="wrong or error",
        shape=_ONE_BUFFER),
    _ra("credits-reset-for-every-generation", (('            dl.notify(slot, rank, signal=0, sig_op="set")\n',
                                                "            for other in range(BUFFER_NUM):\n"
                                                "                dl.notify(signal_ptr + (slot_id - generation + "
                                                "other) * SLOT_STRIDE, rank, signal=0, sig_op=\"set\")\n"),),
        rule="ASC413", anchor="dl.notify(signal_ptr + (slot_id - generation + other) * SLOT_STRIDE",
        outcome="hang or wrong"),
    _ra("producer-consume-token-dropped", ((_RA_PRODUCER_CONSUME, _RA_PRODUCER_CONSUME.replace(
        "dl.consume_token(dl.symm_at(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), dst_rank), token)",
        "dl.symm_at(inbox_ptr + slot_id * (BLOCK_S * BLOCK_D), dst_rank)")),),
        rule="ASC401", anchor='token = dl.wait(dl.symm_at(slot, dst_rank), 1, "gpu", "acquire", waitValue=0)',
        outcome="hang or wrong", worlds=_BOTH_WORLDS, hidden_without="exploration"),
    _ra("credit-returned-before-read-two-buffers", ((_RA_RESET, "            libshmem_device.fence()\n"),
                                                    (_RA_CONSUME, _RA_CONSUME + '            dl.notify(slot, rank, '
                                                                                'signal=0, sig_op="set")\n')),
        rule="ASC410", anchor='dl.notify(slot, rank, signal=0, sig_op="set")', outcome="hang or wrong",
        worlds=_BOTH_WORLDS, hidden_without="exploration"),
    _ra("consumer-wait-cta-scope", (('token = dl.wait(slot, 1, "gpu", "acquire", waitValue=work + 1)',
                                     'token = dl.wait(slot, 1, "cta", "acquire", waitValue=work + 1)'),),
        rule=None, rule_to_come="ASC415", outcome="wrong", why=_NO_WAIT_SEMANTICS_RULE, worlds=_BOTH_WORLDS,
        hidden_without="acquire_by_wait_semantics"),
    _ra("slots-packed-8-bytes-apart", (('"SLOT_STRIDE": SIGNAL_SLOT_STRIDE}', '"SLOT_STRIDE": 1}'),),
        rule=None, outcome="hang or wrong", worlds=_BOTH_WORLDS, hidden_without="incoherent_cache_lines",
        why="the stride arrives as a launch value; the linter sees the slot formula, not the 1 it is given"),
]

# -- AllGather + GEMM, two-phase (barriers, UDMA + MTE, sub-blocks) ---------------------------------------

_TP_PUT = '''                if pe != rank:
                    libshmem_device.putmem(window_ptr + own_row0 * K, a_ptr + row0 * stride_am,
                                           rows * K * elem_bytes, pe)
'''

_TP_PUT_EVERY_PE = '''                libshmem_device.putmem(window_ptr + own_row0 * K, a_ptr + row0 * stride_am,
                                       rows * K * elem_bytes, pe)
'''

ALLGATHER_GEMM_TWO_PHASE = [
    _tp("both-sub-blocks-drive-one-pe", (("        if sub_block == 1 and pid < n_ranks:\n",
                                          "        if pid < n_ranks:\n"),),
        rule=None, outcome="error", report=("UdmaAddressError", "already drives pe"), worlds=_BOTH_WORLDS,
        rule_to_come="ASC416",
        why="ASC406 follows a pe loop split by program id, not which sub-blocks run the phase (ASC416 is planned for "
            "it)"),
    _tp("putmem-to-own-rank", ((_TP_PUT, _TP_PUT_EVERY_PE),), rule="ASC411",
        anchor="libshmem_device.putmem(window_ptr + own_row0 * K", outcome="error",
        report=("the calling rank itself",), hidden_without="check_udma_addresses"),
    _tp("barrier-dropped", (("        libshmem_device.barrier_all()\n", ""),), rule=None, outcome="wrong",
        why="no rule knows which loads a barrier orders after which stores; the emulator sees the GEMM read "
            "window rows that are not there yet"),
    _tp("single-buffer", (), rule=None, outcome="wrong", shape={"buffer_num": 1},
        why="the buffer count is a launch value; with one buffer the next iteration's copies overwrite rows that "
            "slower programs still multiply, which the emulator's held-back stores expose as NaN"),
    _tp("seed-fp16-element-size", (("    elem_bytes = tl.cdiv(a_ptr.dtype.element_ty.primitive_bitwidth, 8)\n",
                                     "    elem_bytes = tl.cdiv(tl.float16.primitive_bitwidth, 8)\n"),
                                    ("acc.to(c_ptr.dtype.element_ty)", "acc.to(tl.float16)")),
        rule=None, outcome="wrong", world=2,
        why="the linter does not know the tensors' dtypes; in fp32 each putmem moves half of the rows' bytes"),
    _tp("grid-larger-than-the-cores", (("    allgather_gemm_two_phase_kernel[(cube_core_count(a.device),)](*args, "
                                        "**kwargs)\n",
                                        "    allgather_gemm_two_phase_kernel[(triton.cdiv(a.shape[0], 64),)](*args, "
                                        "**kwargs)\n"),),
        rule="ASC408", anchor="allgather_gemm_two_phase_kernel[(triton.cdiv(a.shape[0], 64),)]", outcome="hang",
        report=("never started", "barrier_all"), model={"resident_programs": 2}),
]

# -- a ring all-gather of the tests' own (tests/reference_kernels/ring_allgather.py) ----------------------------

_RING_FORWARD_SLOT = "\n            slot = signal_ptr + (tl.cast(chunk, tl.int64) * n_blocks + block) * SLOT_STRIDE\n"
_RING_LAST_SLOT = "\n        slot = signal_ptr + (tl.cast(chunk, tl.int64) * n_blocks + block) * SLOT_STRIDE\n"

RING_ALLGATHER = [
    Mutation("ring_allgather-slot-leaves-out-the-block",
             "ring_allgather", ((_RING_FORWARD_SLOT, _RING_FORWARD_SLOT.replace(" * n_blocks + block)", ")")),
                                (_RING_LAST_SLOT, _RING_LAST_SLOT.replace(" * n_blocks + block)", ")"))),
             rule=None, outcome="hang or wrong", worlds=_BOTH_WORLDS, hidden_without="exploration", cores=1,
             why="each slot has one writer per program and is waited on once: nothing in the text says two programs "
                 "share it, only that the index misses the block"),
]

MUTATIONS = (ALLGATHER_GEMM + GEMM_ALLREDUCE + GEMM_REDUCESCATTER + REVERSE_ALL2ALL + ALLGATHER_GEMM_TWO_PHASE
             + RING_ALLGATHER)
