"""What the emulator reproduces of the Ascend hardware and compiler, one switch per behaviour.

A kernel that is wrong on the NPU should be wrong on the emulator too, so every behaviour of the
device that can turn a wrong kernel into a seemingly right one is modelled, and on by default. Each
switch exists so that a test can show what the behaviour adds (turn it off and the bug hides again),
and so that a user can find which behaviour a failure comes from. Importable without triton or torch.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# An Ascend 910B (A2) has 24 AI cores, each one cube unit and two vector units: 48 vector cores.
A2_VECTOR_CORES = 48
VECTOR_SUB_BLOCKS_PER_AI_CORE = 2


@dataclass(frozen=True)
class DeviceModel:
    """The layers of an emulated launch (defaults: the most faithful setting of each).

    ``drop_unconsumed_waits``: a ``dl.wait`` whose token never reaches a use with an effect (through
    ``dl.consume_token`` or otherwise) is removed, as the compiler's dead-code elimination removes it.

    ``hold_stores_until_fence``: a program's ``tl.store`` writes reach memory only at its next
    ``fence()``, ``barrier_all()``, release atomic or when it ends; the program itself reads its own
    pending stores, every other program and rank reads what memory held before. With ``hazards=True``
    a read of a location that another program has a pending store to gives NaN (floats), since the
    device may return the old value, the new one or a mix.

    ``check_udma_addresses``: ``putmem``/``getmem`` to the calling rank's own pe, or through a
    pointer mapped to a peer (``dl.symm_at``/``remote_ptr``), fail with an error saying why.

    ``vector_sub_blocks``: a kernel that calls ``sub_vec_id()`` is a mix kernel; each of its programs
    runs on an AI core with this many vector sub-blocks, one thread each, ``sub_vec_id()`` telling them
    apart, and ``barrier_all`` counting every one. 1 runs a single sub-block whose id is 0.

    ``bf16_in_fp32``: bf16 arithmetic, casts, reductions and ``tl.dot`` are computed in fp32 and
    rounded to bf16 (round to nearest even), as the NPU does; the stock interpreter computes on the
    raw bits.

    ``resident_programs``: how many programs of one rank run at once (one per core); the others start
    only when a running program ends, as the device schedules a grid larger than its core count in
    batches. ``None`` makes every program resident.

    ``yield_on_signal``: programs run one at a time and switch at synchronisation points; a program
    that sets a signal (``dl.notify``, ``signal_op``, ``putmem_signal``, an atomic) lets every other
    runnable program go first, so a consumer it wakes acts on the signal before the producer does
    anything else. Off, a program keeps running until it blocks (under the fixed schedule; explored
    schedules may still preempt it at its other scheduling points).

    ``acquire_by_wait_semantics``: a ``dl.wait`` orders the program's later loads after it only with an
    acquiring semantic (not ``"relaxed"``) at a scope that covers the producer (not ``"cta"``, which
    covers one core): after a wait without acquire, the program's loads may return what memory held
    when the wait began (floats read NaN with hazards on), until its next acquiring wait, fence, barrier
    or atomic.

    ``incoherent_cache_lines``: signal slots set by ``dl.notify``/``signal_op`` go through the writing
    core's DataCache, a whole 64-byte line at a time: the core writes back its copy of the line, taken
    when it last read (waited on) or wrote that line, so a slot on the same line set by another
    program meanwhile is overwritten with the old value. Adds are atomic and exact.

    ``loads_complete_at_fence``: a load from symmetric memory is complete only at the program's next
    fence, barrier or end; a program that sets a signal before that lets its loads be overtaken, and
    a write by another program to those addresses before the fence raises ``LoadOvertakenError`` (the
    device may let the load return the new data).

    ``check_bounds``: every live lane of a ``tl.load``/``tl.store`` must lie in one buffer of the
    launch (a tensor argument's storage or one symmetric allocation); otherwise ``OutOfBoundsError``
    names the buffer and where the lanes went.

    ``udma_one_core_per_pe``: every UDMA transfer of a launch to one pe must come from one core (one
    program's one sub-block), since ``quiet()`` keeps a single completion slot per pe; a second core
    driving the same pe raises ``UdmaAddressError``.

    ``nbi_in_flight_until_quiet``: ``putmem_nbi``/``getmem_nbi`` only start a transfer; it reads its
    source and writes its destination when the program calls ``quiet()`` (or ``barrier_all()``, or
    ends), so a signal set before ``quiet()`` reaches the peer before the data does.
    """

    drop_unconsumed_waits: bool = True
    hold_stores_until_fence: bool = True
    check_udma_addresses: bool = True
    vector_sub_blocks: int = VECTOR_SUB_BLOCKS_PER_AI_CORE
    bf16_in_fp32: bool = True
    resident_programs: int | None = A2_VECTOR_CORES
    yield_on_signal: bool = True
    acquire_by_wait_semantics: bool = True
    incoherent_cache_lines: bool = True
    loads_complete_at_fence: bool = True
    check_bounds: bool = True
    udma_one_core_per_pe: bool = True
    nbi_in_flight_until_quiet: bool = True

    def __post_init__(self) -> None:
        if self.vector_sub_blocks not in (1, 2):
            raise ValueError(f"vector_sub_blocks must be 1 or 2, got {self.vector_sub_blocks}")
        if self.resident_programs is not None and self.resident_programs < 1:
            raise ValueError(f"resident_programs must be at least 1 or None, got {self.resident_programs}")

    def without(self, *layers: str) -> "DeviceModel":
        """This model with the named layers switched off (``vector_sub_blocks`` goes to 1,
        ``resident_programs`` to None)."""
        off = {"vector_sub_blocks": 1, "resident_programs": None}
        names = {field.name for field in dataclasses.fields(self)}
        unknown = set(layers) - names
        if unknown:
            raise ValueError(f"unknown layer(s) {sorted(unknown)}; the layers are {sorted(names)}")
        return dataclasses.replace(self, **{name: off.get(name, False) for name in layers})


FAITHFUL = DeviceModel()
