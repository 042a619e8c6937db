from __future__ import annotations

import libcst as cst

from ascendlint.analysis.distributed import for_kernel
from ascendlint.analysis.distributed_calls import NOTIFY, UDMA_CALLS, call_argument, udma_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_WRITES = {"tl.store": 0, NOTIFY: 0, "shmem.signal_op": 0, "shmem.int_p": 0}
_CUBE = frozenset({"tl.dot"})


class SubVecIdMisuse(Rule):
    """Flags, in a kernel that splits its vector work with `sub_vec_id()`, a write both vector sub-blocks of a core
    execute at the same place."""

    decides = """
    Both sub-blocks of an AI core run the kernel's vector code with the same program id. A `tl.store`,
    `dl.notify`, `signal_op` or `int_p` is reported when no enclosing `if` pins one sub-block
    (`if sub_id == 1:`, `if sub_id:` and their `else`, also as a conjunct of an `and`) and its address does not
    depend on the sub-block id (through names and loop bounds). A `putmem` / `getmem` is reported when no such `if`
    pins a sub-block and its pe does not depend on the sub-block id: two sub-blocks would drive the same pe from
    one core. Stores of a `tl.dot` result and writes inside a `with al.scope(core_mode="cube")` block belong to
    the cube core (one per AI core) and are left alone, as is a store whose mask depends on the sub-block id (each
    sub-block writes only the elements its mask selects).
    """

    code = "ASC416"
    name = "sub-vec-id-misuse"
    message = "both vector sub-blocks run this {what}; {remedy}"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    default = False
    opt_in_reason = (
        "Not yet measured: the rule reports nothing in the shared corpus, the held-out set or the fresh set "
        "(it is silent on the three `sub_vec_id()` kernels there, which follow the two-phase design), so its "
        "precision on real code is unknown; it can join the default set once measured."
    )
    why = """
        An Ascend AI core has one cube core and two vector sub-cores; a mixed kernel is split into a cube function
        and a vector function, and the vector function runs once on each sub-core with the same program id.
        `sub_vec_id()` (0 or 1) is the only thing that tells the two apart. Vector code that writes without
        looking at it runs twice per core: two stores to the same address race, and a `dl.notify` with
        `sig_op="add"` counts double, so a consumer waiting for `n` arrivals goes on early. UDMA adds a hardware
        constraint: one core drives one pe at a time, so a phase that lets both sub-blocks `putmem` to the same pe
        breaks it. The fused AllGather+GEMM design this follows gives the remote transfers to sub-block 1
        (`if sub_id == 1 and pid < world_size:`) and the local stores to sub-block 0 and the rest of sub-block
        1, each over its own share of the tiles.
    """
    fix_notes = """
        Give each write to one sub-block (`if sub_id == 0:`), or make its address depend on the sub-block
        (split the tiles: `for t in range(pid * 2 + sub_id, n, 2 * ncore)`). For UDMA, pin the phase to one
        sub-block so each core drives one pe.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton.language.extra.cann.extension import sub_vec_id

            @triton.jit
            def publish(src, dst, signal_ptr, peer, n_tiles, BLOCK: tl.constexpr):
                sub_id = sub_vec_id()
                pid = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                for t in range(pid * 2 + sub_id, n_tiles, 2 * tl.num_programs(0)):
                    tl.store(dst + t * BLOCK + offs, tl.load(src + t * BLOCK + offs))
                dl.notify(signal_ptr + pid, peer, signal=1, sig_op="add", comm_scope="intra_node")
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device
            from triton.language.extra.cann.extension import sub_vec_id

            @triton.jit
            def gather(a_ptr, peer_mem, rank, rank_size, nbytes, BLOCK: tl.constexpr):
                sub_id = sub_vec_id()
                pid = tl.program_id(0)
                ncore = tl.num_programs(0)
                if sub_id == 0 or pid < rank_size:
                    for target in range(pid, rank_size, ncore):
                        libshmem_device.putmem(peer_mem + rank * BLOCK, a_ptr, nbytes, target)
                tl.store(peer_mem + pid * BLOCK + tl.arange(0, BLOCK), tl.zeros([BLOCK], dtype=tl.float16))
            """,
            count=2,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device
            from triton.language.extra.cann.extension import sub_vec_id

            @triton.jit
            def publish(src, dst, signal_ptr, peer, n_tiles, BLOCK: tl.constexpr):
                sub_id = sub_vec_id()
                pid = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                for t in range(pid * 2 + sub_id, n_tiles, 2 * tl.num_programs(0)):
                    tl.store(dst + t * BLOCK + offs, tl.load(src + t * BLOCK + offs))
                libshmem_device.fence()
                if sub_id == 0:
                    dl.notify(signal_ptr + pid * 8, peer, signal=1, sig_op="add", comm_scope="intra_node")
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device
            from triton.language.extra.cann.extension import sub_vec_id

            @triton.jit
            def allgather_gemm(a_ptr, b_ptr, c_ptr, peer_mem, rank, rank_size, nbytes, n_tiles, BLOCK: tl.constexpr):
                sub_id = sub_vec_id()
                pid = tl.program_id(0)
                ncore = tl.num_programs(0)
                offs = tl.arange(0, BLOCK)
                if sub_id == 1 and pid < rank_size:
                    for target in range(pid, rank_size, ncore):
                        libshmem_device.putmem(peer_mem + rank * BLOCK, a_ptr, nbytes, target)
                if sub_id == 0 or (sub_id == 1 and pid >= rank_size):
                    local_pid = pid
                    if sub_id == 1:
                        local_pid = ncore + pid - rank_size
                    for k in range(local_pid, n_tiles, ncore * 2 - rank_size):
                        tl.store(peer_mem + k * BLOCK + offs, tl.load(a_ptr + k * BLOCK + offs))
                else:
                    tl.store(c_ptr + offs, tl.zeros([BLOCK], dtype=tl.float16))
                libshmem_device.barrier_all()
                acc = tl.dot(tl.load(peer_mem + offs[:, None] * BLOCK + offs[None, :]),
                             tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :]))
                tl.store(c_ptr + pid * BLOCK * BLOCK + offs[:, None] * BLOCK + offs[None, :], acc)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def plain(x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernel_nodes().get(id(node))
        if kernel is None:
            return
        dist = for_kernel(self.context, kernel)
        sources = frozenset(name for name in dist.calls if name.split(".")[-1] == "sub_vec_id")
        if not sources:
            return
        sub_names = self._sub_block_names(dist, sources)
        for name, position in _WRITES.items():
            for call in dist.calls_to(name):
                target = call_argument(call, position, "pointer", "ptr", "dest")
                if target is None or self._pinned(dist, call, sub_names) or self._depends(dist, target, sources, sub_names):
                    continue
                if _in_cube_scope(dist, call):
                    continue  # the cube core runs it, once per AI core
                mask = call_argument(call, 2, "mask") if name == "tl.store" else None
                if mask is not None and self._depends(dist, mask, sources, sub_names):
                    continue  # each sub-block stores only the elements its mask selects
                if name == "tl.store" and dist.derives_from_call(call_argument(call, 1, "value") or target, _CUBE):
                    continue  # the cube core's result: stored once per core
                what = "store" if name == "tl.store" else f"`{name.split('.')[-1]}`"
                self.report(call, self.message.format(
                    what=what, remedy="its address does not depend on `sub_vec_id()`; give it to one sub-block"))
        for name in sorted(UDMA_CALLS):
            for call in dist.calls_to(name):
                pe = udma_argument(call, name, "pe")
                if pe is None or self._pinned(dist, call, sub_names) or self._depends(dist, pe, sources, sub_names):
                    continue
                if _in_cube_scope(dist, call):
                    continue
                self.report(call, self.message.format(
                    what=f"`{name.split('.')[-1]}`",
                    remedy="both drive the same pe from one core; pin the phase to one sub-block"))

    def _depends(self, dist: DistAnalysis, expr: cst.BaseExpression, sources: frozenset, sub_names: set[str]) -> bool:
        """``expr`` takes a value from ``sub_vec_id()``, or from a definition only one sub-block makes
        (``if sub_id == 1: local_pid = ncore + pid - rank_size``)."""
        if dist.derives_from_call(expr, sources):
            return True
        return any(
            definition.statement is not None and self._pinned(dist, definition.statement, sub_names)
            for definition in dist.definitions_reaching(expr)
        )

    def _sub_block_names(self, dist: DistAnalysis, sources: frozenset) -> set[str]:
        """Names bound (anywhere in the kernel) to a value derived from ``sub_vec_id()``."""
        names = set()
        for node in dist.nodes:
            if type(node) is cst.Name and dist.values.is_read(node) and dist.derives_from_call(node, sources):
                names.add(node.value)
        return names

    def _pinned(self, dist: DistAnalysis, call: cst.CSTNode, sub_names: set[str]) -> bool:
        for guard in dist.guards(call):
            in_else = not any(a is guard.body for a in dist.index.ancestors(call))
            if _pins_one(guard.test, sub_names, negated=in_else):
                return True
        return False


def _pins_one(test: cst.BaseExpression, sub_names: set[str], negated: bool = False) -> bool:
    """Where ``test`` holds (or, ``negated``, where it fails) only one sub-block runs: a conjunct of the condition
    compares the sub-block id with a literal (``sub_id == 1 and pid < n``; in an ``else``, a disjunct of it)."""
    if type(test) is cst.BooleanOperation:
        if (type(test.operator) is cst.And) != negated:
            return _pins_one(test.left, sub_names, negated) or _pins_one(test.right, sub_names, negated)
        return False
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        return _pins_one(test.expression, sub_names, not negated)
    if type(test) is cst.Name:
        return test.value in sub_names
    if _is_sub_vec_id_call(test):
        return True
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        operator = type(test.comparisons[0].operator)
        if operator not in (cst.Equal, cst.NotEqual):
            return False
        sides = (test.left, test.comparisons[0].comparator)
        return any((type(s) is cst.Name and s.value in sub_names) or _is_sub_vec_id_call(s) for s in sides) and any(
            type(s) is cst.Integer for s in sides)
    return False


def _is_sub_vec_id_call(expr: cst.BaseExpression) -> bool:
    """``sub_vec_id()`` written in the condition itself (under any module path)."""
    if type(expr) is not cst.Call:
        return False
    func = expr.func
    name = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
    return name == "sub_vec_id"


def _in_cube_scope(dist: DistAnalysis, call: cst.CSTNode) -> bool:
    """``call`` sits in a ``with ....scope(core_mode="cube")`` block: cube code, which no vector sub-block runs."""
    for ancestor in dist.index.ancestors(call):
        if type(ancestor) is not cst.With:
            continue
        for item in ancestor.items:
            scope = item.item
            if type(scope) is not cst.Call:
                continue
            func = scope.func
            if (func.attr.value if type(func) is cst.Attribute else getattr(func, "value", "")) != "scope":
                continue
            mode = call_argument(scope, 99, "core_mode")
            if type(mode) is cst.SimpleString and mode.evaluated_value == "cube":
                return True
    return False
