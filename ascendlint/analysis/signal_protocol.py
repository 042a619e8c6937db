"""Producer/consumer protocol facts shared by ASC402, ASC404 and ASC409-ASC414.

Where a kernel returns credits (``dl.notify(slot, rank, 0)``) and waits for them, which reads a consumed token
guards, and whether a read follows the credit return that frees its buffer. Built on ``distributed_values``.
"""

from __future__ import annotations


import libcst as cst

from .syntax import is_integer
from .distributed_calls import (
    CONSUME_TOKEN,
    LOAD,
    SIGNAL_WAIT_UNTIL,
    SIGNAL_WRITES,
    STORE,
    WAIT,
    call_argument,
    signal_argument,
    signal_is_zero_set,
)
from .distributed_values import DistAnalysis


def statement_of(dist: DistAnalysis, node: cst.CSTNode) -> cst.CSTNode:
    """The statement (simple line or compound statement) that holds ``node`` directly in a block."""
    child = node
    for ancestor in dist.index.ancestors(node):
        if type(ancestor) in (cst.IndentedBlock, cst.Module):
            return child
        child = ancestor
    return child


def credit_return_slot(dist: DistAnalysis, call: cst.Call) -> cst.BaseExpression | None:
    """The slot pointer of a credit return: ``dl.notify(slot, rank, 0)``, ``signal_op(slot, 0, SET, pe)`` or
    ``tl.store(slot, 0)``; else None."""
    name = dist.qualname_of(call)
    if name in SIGNAL_WRITES:
        return signal_argument(call, name, "slot") if signal_is_zero_set(call, name) else None
    if name == STORE and is_integer(call_argument(call, 1, "value"), 0):
        return call_argument(call, 0, "pointer")
    return None


def credit_returns_in(dist: DistAnalysis, node: cst.CSTNode) -> list[tuple[cst.Call, cst.BaseExpression]]:
    """(call, slot pointer) of every credit return below ``node``."""
    found = []
    for call in dist.calls_in(node, SIGNAL_WRITES | {STORE}):
        slot = credit_return_slot(dist, call)
        if slot is not None:
            found.append((call, slot))
    return found


def signal_writes_in(dist: DistAnalysis, node: cst.CSTNode) -> list[cst.Call]:
    """``dl.notify`` and ``signal_op`` calls below ``node`` (the fused ``putmem_signal`` is a data put)."""
    return list(dist.calls_in(node, SIGNAL_WRITES))


def wait_slot(call: cst.Call, qualname: str | None = WAIT) -> cst.BaseExpression | None:
    """The slot a wait of either dialect polls."""
    return signal_argument(call, qualname, "slot")


def waits_for_zero(call: cst.Call, qualname: str | None = WAIT) -> bool:
    """A producer's wait for a free slot: ``dl.wait(..., waitValue=0)``, ``signal_wait_until(slot, CMP_EQ, 0)``."""
    if not is_integer(signal_argument(call, qualname, "value"), 0):
        return False
    if qualname != SIGNAL_WAIT_UNTIL:
        return True
    cmp = signal_argument(call, qualname, "cmp")
    name = cmp.attr.value if type(cmp) is cst.Attribute else cmp.value if type(cmp) is cst.Name else None
    return is_integer(cmp, 0) or (name is not None and name.upper().endswith("EQ"))


def same_code(dist: DistAnalysis, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """The two expressions are spelled the same (whitespace aside)."""
    code = dist.facts.module.code_for_node
    return "".join(code(a).split()) == "".join(code(b).split())


def consumed_pointers(dist: DistAnalysis, scope: cst.CSTNode, slot: cst.BaseExpression) -> list[cst.Call]:
    """``dl.consume_token(value, token)`` calls in ``scope`` whose token comes from a wait (not for 0) on
    ``slot`` (the same expression): the reads these calls order are what the slot guards."""
    waits = [
        w for w in dist.calls_in(scope, {WAIT})
        if not waits_for_zero(w) and wait_slot(w) is not None and same_code(dist, wait_slot(w), slot)
    ]
    if not waits:
        return []
    wait_ids = {id(w) for w in waits}
    found = []
    for call in dist.calls_in(scope, {CONSUME_TOKEN}):
        token = call_argument(call, 1, "token")
        if token is None:
            continue
        sources = [token, *(d.value for d in dist.definitions_reaching(token) if d.value is not None)]
        if any(id(n) in wait_ids for source in sources for n in (source, *dist.below(source))):
            found.append(call)
    return found


def reads_through(dist: DistAnalysis, scope: cst.CSTNode, consumed: list[cst.Call]) -> list[cst.Call]:
    """Loads in ``scope`` whose pointer comes from one of the ``consumed`` calls: ``tl.load``, or a call of a
    helper (any function outside ``tl``/``dl``/``libshmem_device``) that is handed such a pointer."""
    consumed_ids = {id(c) for c in consumed}
    targets: set[str] = set()
    for call in consumed:
        statement = statement_of(dist, call)
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:
                if type(small) is cst.Assign:
                    targets.update(t.target.value for t in small.targets if type(t.target) is cst.Name)
    helpers = {n for n in dist.calls if not n.startswith(("tl.", "dl.", "shmem.", "local.range"))}
    found = []
    for call in dist.calls_in(scope, {LOAD} | helpers):
        if dist.qualname_of(call) == LOAD:
            pointers = [call_argument(call, 0, "pointer")]
        else:
            pointers = [a.value for a in call.args]
        for pointer in pointers:
            if pointer is None:
                continue
            nodes = (pointer, *dist.below(pointer))
            if any(id(n) in consumed_ids for n in nodes) or (targets and dist.names_feeding(pointer) & targets):
                found.append(call)
                break
    return found


def untokened_reads(dist: DistAnalysis, scope: cst.CSTNode, slot: cst.BaseExpression) -> list[cst.Call]:
    """Loads that a ``signal_wait_until`` on ``slot`` guards in ``scope``: the shmem dialect has no token, so a
    guarded read is a ``tl.load`` after the wait whose address shares a variable of ``scope`` with the slot (the
    ring index ``buf`` of ``sig + buf * 16`` and ``inbox + buf * BLOCK``), off another buffer than the slot's."""
    waits = [
        w for w in dist.calls_in(scope, {SIGNAL_WAIT_UNTIL})
        if not waits_for_zero(w, SIGNAL_WAIT_UNTIL) and wait_slot(w, SIGNAL_WAIT_UNTIL) is not None
        and same_code(dist, wait_slot(w, SIGNAL_WAIT_UNTIL), slot)
    ]
    if not waits:
        return []
    first = min(dist.index.order(w) for w in waits)
    root = dist.pointer_root(slot)
    params = set(dist.kernel.params)
    shared = dist.names_feeding(slot) - params - {root}
    found = []
    for call in dist.calls_in(scope, {LOAD}):
        pointer = call_argument(call, 0, "pointer")
        if pointer is None or dist.index.order(call) < first or dist.pointer_root(pointer) in (root, None):
            continue
        if dist.names_feeding(pointer) & shared:
            found.append(call)
    return found


def read_after_credit_return(dist: DistAnalysis, reset: cst.Call, slot: cst.BaseExpression) -> cst.CSTNode | None:
    """The first read of the buffer a slot guards that comes after the slot's credit return ``reset`` (ASC410):
    the producer may overwrite the buffer before it is read. None when every read comes first."""
    position = dist.index.order(reset)
    for scope in dist.enclosing_loops(reset) or [dist.kernel.node]:
        consumed = consumed_pointers(dist, scope, slot)
        reads = reads_through(dist, scope, consumed) if consumed else []
        reads += untokened_reads(dist, scope, slot)
        if not reads:
            continue
        later = sorted((r for r in reads if dist.index.order(r) > position
                        and not dist.values.compile_time_exclusive(reset, r)), key=dist.index.order)
        return later[0] if later else None
    return None


def credits_returned_early(dist: DistAnalysis) -> set[int]:
    """Ids of the credit returns that come before a read of the buffer they free (``read_after_credit_return``)."""
    if not dist.has_call(CONSUME_TOKEN, SIGNAL_WAIT_UNTIL):
        return set()
    return {id(reset) for reset, slot in credit_returns_in(dist, dist.kernel.node)
            if read_after_credit_return(dist, reset, slot) is not None}
