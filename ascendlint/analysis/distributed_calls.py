"""The calls of Triton-distributed (and its Ascend SHMEM dialect) that the ASC4xx rules speak of, and their arguments.

Waits, notifies and signal operations, puts and gets (UDMA), barriers, fences, token consumption and symmetric
mappings, by qualified name; where each call keeps its slot, value, operation and peer (``signal_argument``,
``udma_argument``) and whether a signal write sets zero (a credit return). Read by every distributed analysis and
rule.
"""

from __future__ import annotations


import libcst as cst

from .syntax import is_integer


WAIT = "dl.wait"


NOTIFY = "dl.notify"


# The libshmem_device (aclshmem) dialect of the same protocol: `signal_op(slot, value, SET/ADD, pe)` writes a
# signal, `signal_wait_until(slot, cmp, value)` waits for one, `putmem_signal(_nbi)` writes data and then a signal
# in one request. `SIGNAL_WRITES` / `SIGNAL_WAITS` are what every ASC4xx rule reads as "notify" and "wait".
SIGNAL_OP = "shmem.signal_op"


SIGNAL_WAIT_UNTIL = "shmem.signal_wait_until"


FUSED_PUTS = frozenset({"shmem.putmem_signal", "shmem.putmem_signal_nbi"})


SIGNAL_WRITES = frozenset({NOTIFY, SIGNAL_OP})


SIGNAL_WAITS = frozenset({WAIT, SIGNAL_WAIT_UNTIL})


QUIET = "shmem.quiet"


NONBLOCKING_PUTS = frozenset({"shmem.putmem_nbi", "shmem.putmem_signal_nbi"})


CONSUME_TOKEN = "dl.consume_token"


MAPPING_CALLS = frozenset({"dl.symm_at", "shmem.remote_ptr"})


PUT_CALLS = frozenset({"shmem.putmem", "shmem.putmem_nbi", "shmem.putmem_signal", "shmem.putmem_signal_nbi"})


GET_CALLS = frozenset({"shmem.getmem", "shmem.getmem_nbi"})


UDMA_CALLS = PUT_CALLS | GET_CALLS


BARRIERS = frozenset({"shmem.barrier_all", "shmem.barrier_all_vec"})


FENCE = "shmem.fence"


SYNCHRONOUS_PUT = "shmem.putmem"


PROGRAM_ID = "tl.program_id"


RANK_COUNTS = frozenset({"dl.num_ranks", "shmem.n_pes"})


# Calls that block until other programs (or ranks) have done something.
PROGRAM_WAITS = frozenset({WAIT, "shmem.signal_wait_until", "gpu.shmem.signal_wait_until"}) | BARRIERS


# Calls that synchronise per iteration: a transfer in such a loop is a pipeline step, not a per-tile copy.
PIPELINE_SYNC = PROGRAM_WAITS | {NOTIFY, "shmem.signal_op"}


# Positions and keyword spellings of the pointer, size and pe arguments of the UDMA calls.
_UDMA_PE_POSITION = {"shmem.putmem_signal": 6, "shmem.putmem_signal_nbi": 6}


_UDMA_KEYWORDS = {
    "dest": ("dest", "dst", "dest_ptr"),
    "source": ("source", "src", "source_ptr"),
    "bytes": ("bytes", "nbytes", "size"),
    "pe": ("pe",),
}


def call_argument(call: cst.Call, position: int, *keywords: str) -> cst.BaseExpression | None:
    """The argument passed at ``position`` or under any of ``keywords``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keywords:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if position < len(positional) else None


def udma_argument(call: cst.Call, qualname: str, role: str) -> cst.BaseExpression | None:
    """``dest``, ``source``, ``bytes`` or ``pe`` of a putmem/getmem-family call."""
    position = {"dest": 0, "source": 1, "bytes": 2, "pe": _UDMA_PE_POSITION.get(qualname, 3)}[role]
    return call_argument(call, position, *_UDMA_KEYWORDS[role])


def udma_remote_operand(call: cst.Call, qualname: str) -> cst.BaseExpression | None:
    """The operand that names the peer's memory: putmem's ``dest``, getmem's ``source``."""
    return udma_argument(call, qualname, "dest" if qualname in PUT_CALLS else "source")


# Where each signal call keeps its slot, value, operation and target: (position, keywords) per role.
_SIGNAL_ARGUMENTS = {
    NOTIFY: {"slot": (0, ("ptr",)), "value": (2, ("signal",)), "op": (3, ("sig_op",)), "pe": (1, ("rank",))},
    SIGNAL_OP: {"slot": (0, ("sig_addr",)), "value": (1, ("signal",)), "op": (2, ("sig_op",)), "pe": (3, ("pe",))},
    "shmem.putmem_signal": {"slot": (3, ("sig_addr",)), "value": (4, ("signal",)), "op": (5, ("sig_op",)),
                            "pe": (6, ("pe",))},
    WAIT: {"slot": (0, ("barrierPtrs",)), "value": (4, ("waitValue",)), "count": (1, ("numBarriers",))},
    SIGNAL_WAIT_UNTIL: {"slot": (0, ("sig_addr",)), "value": (2, ("cmp_val",)), "cmp": (1, ("cmp_", "cmp"))},
}


def signal_argument(call: cst.Call, qualname: str | None, role: str) -> cst.BaseExpression | None:
    """``slot``, ``value``, ``op``, ``pe`` (writes) or ``cmp``, ``count`` (waits) of a signal call of either
    dialect; None when the call has no such argument."""
    spec = _SIGNAL_ARGUMENTS.get(qualname or "", {}).get(role)
    return call_argument(call, spec[0], *spec[1]) if spec else None


def signal_operation(call: cst.Call, qualname: str | None) -> str | None:
    """"set" or "add" for a signal write (``sig_op="set"``, ``ACLSHMEM_SIGNAL_SET``, ``SIGNAL_ADD``...); None when
    the operation is not spelled so that it can be read. ``dl.notify`` without ``sig_op`` sets."""
    op = signal_argument(call, qualname, "op")
    if op is None:
        return "set" if qualname == NOTIFY else None
    if type(op) is cst.SimpleString:
        text = op.evaluated_value.lower()
        return text if text in ("set", "add") else None
    name = op.attr.value if type(op) is cst.Attribute else op.value if type(op) is cst.Name else None
    if name is not None:
        upper = name.upper()
        if upper.endswith("SET"):
            return "set"
        if upper.endswith("ADD"):
            return "add"
    return None


def signal_is_zero_set(call: cst.Call, qualname: str | None = NOTIFY) -> bool:
    """A credit return: ``dl.notify(slot, rank, 0)`` with the default ``sig_op="set"``, or
    ``signal_op(slot, 0, SIGNAL_SET, pe)``."""
    return is_integer(signal_argument(call, qualname, "value"), 0) and signal_operation(call, qualname) == "set"


STORE = "tl.store"


LOAD = "tl.load"


RANK_IDS = frozenset({"dl.rank", "shmem.my_pe"})
