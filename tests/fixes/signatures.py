"""Representative launch signatures for the kernels of an example, for the offline compile and the interpreter.

Rule examples are snippets without launchers, so the harness derives what a launch would pass from the kernel
itself (using ascendlint's own analysis of the source, never importing it):

- a ``tl.constexpr`` parameter is a constant: a *flag* (tested by an ``if``, ``not`` or ``and``/``or``) takes
  both ``False`` and ``True``; any other constexpr takes ``TILE`` (16, a tile size every example accepts);
- a pointer parameter (the base of pointer arithmetic reaching a load, store, block pointer or distributed call)
  is a *data* pointer, varied over ``*fp32``, ``*fp16``, ``*bf16`` and ``*i8`` (the tile types a fix can meet),
  unless its loaded values are used as integers (an index pointer such as ``cu_seqlens``, whose load is cast to
  an integer type: always ``*i32``) or it is a signal slot of ``dl.notify``/``dl.wait`` (``*i64``);
- any other parameter is a runtime ``i32``. One more variant passes every such integer as the constant 1, as
  the launcher specialises an argument equal to 1 (a fix must keep compiling then too).

The interpreter gets the same roles with values: ``TILE`` for integers as well (tiles then fit their extents
exactly, so a boundary check added by a fix changes nothing), buffers of ``offline_worker.BUFFER_ELEMENTS``
elements (random data, small non-decreasing integers for index pointers, zeros for signals).

``OVERRIDES`` adjusts what inference cannot know, per (case id, kernel): values, roles, grids, or a reason
why the example cannot run in the interpreter.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import libcst as cst

from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.values import KernelAnalysis
from ascendlint.analysis.walk import NodeIndex

TILE = 16
DATA_TYPES = ("fp32", "fp16", "bf16", "i8")
INTERPRETED_TYPES = ("fp32", "fp16", "i8")  # the interpreter reads bf16 buffers wrongly (numpy has no bf16)
MAX_FLAG_COMBINATIONS = 4

_SIGNAL_CALLS = {"dl.notify", "dl.wait", "shmem.signal_op", "shmem.signal_wait_until"}
_INT_TYPES = {"tl.int8", "tl.int16", "tl.int32", "tl.int64", "tl.uint8", "tl.uint16", "tl.uint32", "tl.uint64"}
_DISTRIBUTED_PREFIXES = ("dl.", "shmem.")


@dataclass(frozen=True)
class Param:
    name: str
    role: str  # "flag" | "constexpr" | "data" | "index" | "signal" | "int" | "float"


@dataclass
class KernelPlan:
    """How to launch one kernel of a case: its parameters, and whether and how it can be interpreted."""

    name: str
    params: list[Param]
    distributed: bool
    values: dict = field(default_factory=dict)  # per-parameter value overrides (interpreter and constants)
    grid: tuple = (1,)
    world: int | None = None
    not_interpreted: str | None = None  # why the example cannot run in the interpreter
    signal_value: int = 0  # what signal slots hold before a run
    expect: dict | None = None  # what the fixed kernel must leave (``expectations.py``: name and arguments)

    def compile_variants(self) -> list[tuple[str, dict, dict]]:
        """(label, signature, constants) for every data type and flag setting, plus the ones-specialised one."""
        found = []
        for dtype, flags in itertools.product(self._data_types(DATA_TYPES), self._flag_settings()):
            found.append(self._variant(dtype, flags, ones=False))
        if any(p.role == "int" for p in self.params):
            found.append(self._variant("fp32", self._flag_settings()[0], ones=True))
        return found

    def interpret_variants(self) -> list[tuple[str, list[dict]]]:
        found = []
        types = INTERPRETED_TYPES if not self.distributed else ("fp32",)
        for dtype, flags in itertools.product(self._data_types(types), self._flag_settings()):
            label = _label(dtype, flags, ones=False)
            found.append((label, self._arguments(dtype, flags)))
        return found

    def _rank_value(self, name: str):
        """On emulated ranks, peers are the next rank and rank counts the world size; elsewhere TILE."""
        if self.world is None:
            return TILE
        if name in _PEER_NAMES:
            return {"rank": 1, "offset": 1, "modulo": self.world}
        if name in _RANK_NAMES:
            return {"rank": 1, "offset": 0}
        if name in _WORLD_NAMES:
            return self.world
        return TILE

    def _data_types(self, types) -> tuple:
        return types if any(p.role == "data" for p in self.params) else types[:1]

    def _flag_settings(self) -> list[dict]:
        flags = [p.name for p in self.params if p.role == "flag" and p.name not in self.values]
        settings = [dict(zip(flags, bits)) for bits in itertools.product((False, True), repeat=len(flags))]
        return settings[:MAX_FLAG_COMBINATIONS]

    def _variant(self, dtype: str, flags: dict, ones: bool) -> tuple[str, dict, dict]:
        signature, constants = {}, {}
        for param in self.params:
            role = param.role
            if role in ("flag", "constexpr") or (ones and role == "int"):
                signature[param.name] = "constexpr"
                constants[param.name] = 1 if role == "int" else self._constant(param, flags)
            else:
                signature[param.name] = _SIGNATURE_OF_ROLE.get(role) or f"*{dtype}"
        return _label(dtype, flags, ones), signature, constants

    def _constant(self, param: Param, flags: dict):
        if param.name in self.values:
            return self.values[param.name]
        return flags[param.name] if param.role == "flag" else TILE

    def _arguments(self, dtype: str, flags: dict) -> list[dict]:
        found = []
        for param in self.params:
            role = param.role
            if role in ("flag", "constexpr", "int", "float"):
                default = 0.5 if role == "float" else self._rank_value(param.name)
                value = self.values.get(param.name, flags.get(param.name, default))
                found.append({"name": param.name, "kind": "scalar", "value": value})
            else:
                tensor_type = {"index": "i32", "signal": "i64"}.get(role, dtype)
                fill = role if role in ("index", "signal") else "data"
                found.append({"name": param.name, "kind": "tensor", "dtype": tensor_type, "fill": fill,
                              "value": self.signal_value})
        return found


_PEER_NAMES = {"peer", "pe", "target_rank", "dst_rank", "peer_rank"}
_RANK_NAMES = {"rank", "my_rank", "local_rank"}
_WORLD_NAMES = {"n_ranks", "world", "world_size", "num_ranks", "n_pes"}
_SIGNATURE_OF_ROLE = {"index": "*i32", "signal": "*i64", "int": "i32", "float": "fp32"}


def _label(dtype: str, flags: dict, ones: bool) -> str:
    parts = [dtype] + [f"{name}={value}" for name, value in flags.items()]
    if ones:
        parts.append("ints=1")
    return ",".join(parts)


def plan_kernels(text: str, names: set[str] | None = None) -> dict[str, KernelPlan]:
    """Plans for the launchable kernels of a module (jit helpers are compiled through their callers)."""
    module = cst.parse_module(text)
    index = NodeIndex(module)
    facts = ModuleFacts(module, index)
    plans = {}
    for kernel in facts.kernels.values():
        if kernel.name in facts.helpers or (names is not None and kernel.name not in names):
            continue
        analysis = KernelAnalysis.of(kernel, facts, index)
        params = [Param(name, _role(analysis, name)) for name in kernel.params]
        distributed = any(
            (facts.qualname(node.func) or "").startswith(_DISTRIBUTED_PREFIXES)
            for node in _calls_reached(facts, kernel)
        )
        plans[kernel.name] = KernelPlan(kernel.name, params, distributed, world=2 if distributed else None)
    return plans


def _calls_reached(facts: ModuleFacts, kernel) -> list[cst.Call]:
    """Calls in the kernel and in the jit helpers it calls (transitively)."""
    found, seen, pending = [], set(), [kernel]
    while pending:
        current = pending.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        for node in facts.index.subtree(current.node):
            if isinstance(node, cst.Call):
                found.append(node)
                if isinstance(node.func, cst.Name) and node.func.value in facts.kernels:
                    pending.append(facts.kernels[node.func.value])
    return found


def _role(analysis: KernelAnalysis, name: str) -> str:
    kernel = analysis.kernel
    if kernel.is_constexpr_param(name):
        return "flag" if _tested_as_condition(analysis, name) else "constexpr"
    if name in analysis.pointer_params or name in _udma_pointers(analysis):
        if _is_signal_slot(analysis, name):
            return "signal"
        if _loaded_as_integer(analysis, name):
            return "index"
        return "data"
    return "int"


def _udma_pointers(analysis: KernelAnalysis) -> set[str]:
    """Bases of putmem/getmem operands: ``pointer_params`` counts only a call's first argument as a pointer."""
    from ascendlint.analysis.distributed_calls import GET_CALLS, PUT_CALLS, udma_argument

    found = set()
    for node in analysis.nodes:
        name = analysis.facts.qualname(node.func) if isinstance(node, cst.Call) else None
        if name in PUT_CALLS or name in GET_CALLS:
            for role in ("dest", "source"):
                operand = udma_argument(node, name, role)
                base = _base_name(operand) if operand is not None else None
                if base is not None:
                    found.add(base)
    return found


def _tested_as_condition(analysis: KernelAnalysis, name: str) -> bool:
    for read in analysis.reads.get(name, ()):
        parent = analysis.index.parent(read)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return True
        if isinstance(parent, cst.BooleanOperation):
            return True
        if isinstance(parent, (cst.If, cst.While, cst.IfExp)) and parent.test is read:
            return True
    return False


def _base_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.BinaryOperation, cst.Subscript)):
        expr = expr.left if isinstance(expr, cst.BinaryOperation) else expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _is_signal_slot(analysis: KernelAnalysis, name: str) -> bool:
    for node in analysis.nodes:
        if isinstance(node, cst.Call) and analysis.facts.qualname(node.func) in _SIGNAL_CALLS and node.args:
            if name in _parameter_bases(analysis, node.args[0].value):
                return True
    return False


def _parameter_bases(analysis: KernelAnalysis, expr: cst.BaseExpression) -> set[str]:
    """The parameters an address is computed from, through local names (``slots = signal_ptr + ...``)."""
    found, seen, pending = set(), set(), [expr]
    while pending:
        base = _base_name(pending.pop())
        if base is None or base in seen:
            continue
        seen.add(base)
        if base in analysis.kernel.params:
            found.add(base)
        pending.extend(v for v in analysis.assignments.get(base, ()) if isinstance(v, cst.BaseExpression))
    return found


def _loaded_as_integer(analysis: KernelAnalysis, name: str) -> bool:
    """A ``tl.load`` from this pointer whose value is cast to an integer type (``.to(tl.int32)``) or flows into
    the offsets of pointer arithmetic (``bos = tl.load(cu + i); x + bos * T``)."""
    loads = [
        node for node in analysis.nodes
        if analysis.facts.is_call_to(node, "tl.load") and node.args and _base_name(node.args[0].value) == name
    ]
    for load in loads:
        parent = analysis.index.parent(load)
        cast = analysis.cast_target(parent) if isinstance(parent, cst.Call) else None
        if cast is None and isinstance(parent, cst.Attribute):
            grandparent = analysis.index.parent(parent)
            cast = analysis.cast_target(grandparent) if isinstance(grandparent, cst.Call) else None
        if cast is not None and cast[0] is load and analysis.facts.qualname(cast[1]) in _INT_TYPES:
            return True
    load_ids = {id(load) for load in loads}
    for _, offsets in analysis.pointer_expressions:
        if any(id(node) in load_ids for node in _offset_sources(analysis, offsets)):
            return True
    return False


def _offset_sources(analysis: KernelAnalysis, offsets: list) -> list:
    """What offsets are computed from, through casts too (``tl.cast(bos, tl.int64) * T`` reaches ``bos``)."""
    found, pending, seen = [], list(offsets), set()
    while pending:
        for node in analysis.offset_nodes(pending):
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.append(node)
        pending = [
            cast[0] for node in found if isinstance(node, cst.Call)
            for cast in [analysis.cast_target(node)] if cast is not None and id(cast[0]) not in seen
        ]
    return found


# Per-case adjustments, keyed by (case id, kernel name). Each says why.
OVERRIDES: dict[tuple[str, str], dict] = {
    # The originals hand UDMA an address mapped by symm_at / remote_ptr, which the emulator rejects (the trap):
    # the fixed kernels are judged by what a one-sided put / get of `nbytes` must leave on the ranks.
    ("ASC405-example-0", "push"): {"expect": {"name": "udma_put", "args": {"dest": "buf_ptr", "source": "x_ptr"}}},
    # The page's example: the same push in both dialects (`dl.symm_at`, `libshmem_device.remote_ptr`).
    ("ASC405-example-3", "push"): {"expect": {"name": "udma_put", "args": {"dest": "buf_ptr", "source": "x_ptr"}}},
    ("ASC405-example-3", "push_shmem"): {
        "expect": {"name": "udma_put", "args": {"dest": "buf_ptr", "source": "x_ptr"}},
    },
    ("ASC405-example-1", "pull"): {
        "expect": {"name": "udma_get", "args": {"dest": "y_ptr", "source": "buf_ptr", "offset": "offset"}},
    },
    # The kernel waits for a signal its peer would have set before the launch.
    ("ASC405-example-2", "push"): {
        "signal_value": 1,
        "expect": {"name": "udma_put", "args": {"dest": "buf_ptr", "source": "x_ptr", "offset": "offset"}},
    },
    # The unfenced stores may land after the notify (the trap the fix repairs): the fixed kernel is judged by
    # what the all-gather must leave (BLOCK rows of every rank at rank * M * N, rank 0's rows read back).
    ("examples/allgather_traps.py", "gather_rows_kernel"): {
        "expect": {"name": "allgather_rows",
                   "args": {"source": "x_ptr", "gathered": "gathered_ptr", "block": TILE, "stride": TILE * TILE}},
    },
    # Rank 0 puts to pe 0, itself: a UDMA local transfer (ASC411, not what ASC402's fix changes) that the
    # emulator rejects before and after the fix, so the example cannot run; it is judged by its compiles.
    ("ASC402-example-2", "scatter"): {
        "not_interpreted": "rank 0 puts to itself (pe 0), a UDMA local transfer the emulator rejects (ASC411)",
    },
    # The example is the consumer half of a ring: the producers' signals for the first tile are set before the
    # launch, and one tile runs (later tiles wait for rounds that no producer in the example sends).
    ("ASC402-example-3", "reducer"): {"signal_value": 1, "values": {"n_tiles": 1}},
    # The block of 16 is advanced by `lo` = 16: a tensor of 32 elements holds it, so the fix's boundary check
    # has nothing to clip and the numbers must be the same (past N the two differ by design: that is the fix).
    ("ASC303-example-6", "scan"): {"values": {"N": 2 * TILE}},
    # `x.cast(..., overflow_mode=...)`, the fix, lowers to a compile hint that 3.2.0's interpreter rejects
    # (`ValueError: Unsupported hint value type`): the example is judged by its compiles (the original fails).
    ("ASC108-example-1", "quantise"): {
        "not_interpreted": "triton-ascend 3.2.0's interpreter rejects the overflow_mode compile hint",
    },
    # Every rank stores its tile into the same slots of every peer: with two ranks the final contents depend on
    # which one writes last, so the comparison runs on one rank.
    ("ASC403-example-1", "broadcast"): {"world": 1},
}


def plans_for(case_id: str, text: str, names: set[str] | None = None) -> dict[str, KernelPlan]:
    plans = plan_kernels(text, names)
    for (override_case, kernel_name), changes in OVERRIDES.items():
        if override_case == case_id and kernel_name in plans:
            plan = plans[kernel_name]
            for key, value in changes.items():
                if key == "roles":
                    plan.params = [Param(p.name, value.get(p.name, p.role)) for p in plan.params]
                else:
                    setattr(plan, key, value)
    return plans
