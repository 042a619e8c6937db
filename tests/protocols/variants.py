"""Each protocol kernel broken on purpose, one mistake at a time, and who must catch it.

A variant is a set of exact text edits to a correct kernel module (each old text must occur exactly
once). ``rule``: the rule that must report the variant under the default selection (and not the
correct kernel), or None; ``opt_in_rule``: an opt-in rule that reports it when selected.
``emulator``: whether the emulator, with its defaults, must fail it at
every world size in ``worlds``, with ``outcome``. Every variant needs at least one of the two.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    id: str
    module: str
    edits: tuple
    rule: str | None = None
    opt_in_rule: str | None = None  # an opt-in rule that reports it under `--select ALL`
    emulator: bool = True
    outcome: str = "wrong"  # what the emulator shows: "wrong" (a check against torch fails), "hang" or "error"
    worlds: tuple = (2, 4)
    why: str = ""
    # what hides it: "run-ahead" (ranks kept in lockstep by host barriers) or a DeviceModel layer's name
    hidden_without: str | None = None

    def apply(self, source: str) -> str:
        for old, new in self.edits:
            count = source.count(old)
            if count != 1:
                raise AssertionError(f"{self.id}: expected the text to change exactly once, found {count}:\n{old}")
            source = source.replace(old, new)
        return source


_PRODUCER_WAIT = '''    token = dl.wait(ack_ptr, 1, "gpu", "acquire", waitValue=step)
    inbox = dl.consume_token(dl.symm_at(inbox_ptr, right), token)
'''

VARIANTS = [
    Variant("stream_pair-producer-ignores-ack", "stream_pair",
            ((_PRODUCER_WAIT, "    inbox = dl.symm_at(inbox_ptr, right)\n"),),
            hidden_without="run-ahead",
            outcome="hang", why="the next step's producer overwrites an inbox its consumer has not read"),
    Variant("stream_pair-ack-to-wrong-neighbour", "stream_pair",
            (("dl.notify(ack_ptr, left, signal=step + 1)", "dl.notify(ack_ptr, (rank + 1) % dl.num_ranks(), "
              "signal=step + 1)"),), worlds=(4,),
            hidden_without="run-ahead",
            why="at world 2 both neighbours are one rank"),
    Variant("stream_pair-ready-never-reset", "stream_pair",
            (("dl.notify(ready_ptr, right, signal=step + 1)", "dl.notify(ready_ptr, right, signal=1)"),
             ('dl.wait(ready_ptr, 1, "gpu", "acquire", waitValue=step + 1)',
              'dl.wait(ready_ptr, 1, "gpu", "acquire", waitValue=1)')),
            hidden_without="run-ahead",
            outcome="hang", why="a flag set to 1 and never reset: the next launch's consumer reads the old message"),
    Variant("one_shot_all_reduce-no-closing-barrier", "one_shot_all_reduce",
            (("    tl.store(out_ptr + offs, total)\n    libshmem_device.barrier_all()\n",
              "    tl.store(out_ptr + offs, total)\n"),),
            hidden_without="run-ahead",
            opt_in_rule="ASC419", why="a fast rank's next launch overwrites a staging buffer a slow rank still reads"),
    Variant("one_shot_all_reduce-constant-epoch", "one_shot_all_reduce",
            (("signal=epoch)", "signal=1)"),
             ('"acquire", waitValue=epoch)\n    for', '"acquire", waitValue=1)\n    for'),
             ('        tokens += dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=epoch)',
              '        tokens += dl.wait(slots + src * 8, 1, "gpu", "acquire", waitValue=1)')),
            why="the second launch finds the first launch's flags set and reads before the peers wrote"),
    Variant("barrier_all_gather-barrier-after-compute", "barrier_all_gather",
            (("    libshmem_device.barrier_all()\n    for block in", "    for block in"),
             ("        tl.store(out_ptr + offs, total)\n",
              "        tl.store(out_ptr + offs, total)\n    libshmem_device.barrier_all()\n")),
            opt_in_rule="ASC418", why="the gathered rows are read before the barrier that publishes them"),
    Variant("barrier_all_gather-barrier-in-task-loop", "barrier_all_gather",
            (("            tl.store(dl.symm_at(gathered_ptr, peer) + rank * N + offs, x)\n"
              "    libshmem_device.barrier_all()\n",
              "            tl.store(dl.symm_at(gathered_ptr, peer) + rank * N + offs, x)\n"
              "        libshmem_device.barrier_all()\n"),),
            opt_in_rule="ASC417", outcome="hang",
            why="program 0 runs two blocks and program 1 one: they reach different barrier counts"),
    Variant("barrier_all_gather-no-barrier", "barrier_all_gather",
            (("    libshmem_device.barrier_all()\n", ""),),
            why="nothing orders the peers' stores before the reads"),
    Variant("nbi_ring_shift-no-quiet", "nbi_ring_shift",
            (("        libshmem_device.quiet()\n", ""),),
            hidden_without="nbi_in_flight_until_quiet",
            rule="ASC403", why="the signal reaches the neighbour before the non-blocking put has landed"),
    Variant("pull_all_gather_gemm-no-quiet", "pull_all_gather_gemm",
            (("            libshmem_device.quiet()\n", ""),),
            hidden_without="nbi_in_flight_until_quiet",
            why="the block is read while its getmem_nbi is still in flight"),
    Variant("pull_all_gather_gemm-refill-too-early", "pull_all_gather_gemm",
            (("getmem_nbi(staging_ptr + ((step + 2) % 3) * M * K",
              "getmem_nbi(staging_ptr + ((step + 1) % 3) * M * K"),),
             worlds=(4,), why="the fetch for two steps ahead lands in the buffer of the next step; needs three ranks"),
    Variant("ring_reduce_scatter-sender-ignores-credit", "ring_reduce_scatter",
            (('        freed = dl.wait(credit_ptr + slot * 8, 1, "gpu", "acquire", waitValue=laps)\n'
              '        send = dl.consume_token(dl.symm_at(inbox_ptr, right), freed)\n',
              "        send = dl.symm_at(inbox_ptr, right)\n"),),
            worlds=(4,), outcome="hang",
            why="a slot is reused only from the third step on, so world 2 never reuses one"),
    Variant("ring_reduce_scatter-credit-before-read", "ring_reduce_scatter",
            (("        libshmem_device.fence()\n        dl.notify(credit_ptr + slot * 8, left, signal=laps + 1)\n", ""),
             ("        received = tl.load(",
              "        dl.notify(credit_ptr + slot * 8, left, signal=laps + 1)\n        received = tl.load(")),
            worlds=(4,), why="ASC410 knows credit returns as slots set back to 0; this credit counts up in another "
            "buffer, so only the emulator sees the slot overwritten before it is read"),
    Variant("ring_reduce_scatter-counter-index-no-credit", "ring_reduce_scatter",
            (("    for step in range(world - 1):\n        slot = step % 2\n        laps = step // 2\n",
              "    msg = 0\n    for step in range(world - 1):\n        slot = msg % 2\n        laps = msg // 2\n"),
             ("        libshmem_device.fence()\n        dl.notify(credit_ptr + slot * 8, left, signal=laps + 1)\n",
              "        msg += 1\n")),
            rule="ASC404", worlds=(4,), outcome="hang",
            why="the ring index is a counter; without credits the third step waits forever"),
    Variant("expert_all_to_all-no-fence", "expert_all_to_all",
            (("        sent += total\n    libshmem_device.fence()\n", "        sent += total\n"),),
            rule="ASC403"),
    Variant("expert_all_to_all-one-sender-short", "expert_all_to_all",
            (('waitValue=world)', 'waitValue=world - 1)'),),
            outcome="hang", why="the receiver reads before the last sender has counted itself in"),
    Variant("stream_pair-ack-before-loads-complete", "stream_pair",
            (("    tl.store(out_ptr + step * N + offs, row)\n    libshmem_device.fence()\n",
              "    tl.store(out_ptr + step * N + offs, row)\n"),),
            rule="ASC403", outcome="error", hidden_without="loads_complete_at_fence",
            why="the acknowledgement overtakes the consumer's loads of the inbox"),
    Variant("one_shot_all_reduce-no-fence", "one_shot_all_reduce",
            (("    libshmem_device.fence()\n", ""),),
            rule="ASC403", why="the flags can arrive before the staged blocks"),
    Variant("nbi_ring_shift-fence-instead-of-quiet", "nbi_ring_shift",
            (("        libshmem_device.quiet()\n", "        libshmem_device.fence()\n"),),
            rule="ASC403", hidden_without="nbi_in_flight_until_quiet",
            why="fence() orders stores; it does not wait for a non-blocking put"),
]
