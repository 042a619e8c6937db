from __future__ import annotations

import libcst as cst

from ascendlint.analysis.values import KernelAnalysis
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_RANGES = {"range", "tl.range"}
_SYNC_PREFIXES = ("dl.", "shmem.")
_SYNC_CALLS = {"tl.debug_barrier", "tl.atomic_cas", "tl.atomic_xchg"}


class CoreGridNotFlattened(Rule):
    """Flags a core-grid task loop (`for task in range(pid, n_tasks, num_programs)`) nested inside a sequential
    loop over blocks.

    An outer loop that synchronizes between rounds (`dl.wait`, `dl.notify`, `libshmem_device` barriers,
    `tl.debug_barrier`, atomics) is a real dependency and is left alone, as is an outer loop with a literal trip
    count (`range(2)`) or a `tl.static_range`.
    """

    code = "ASC502"
    name = "core-grid-not-flattened"
    message = "core-grid task loop runs once per iteration of an outer loop; flatten the outer loop into the task id"
    severity = Severity.ADVISORY
    default = False
    opt_in_reason = "a performance advisory"
    fix_safety = FixSafety.NONE
    why = """
        A core grid launches one program per physical core, and each program takes every `num_programs`-th task.
        Inside a sequential outer loop each round only has that round's tasks: when there are fewer tasks than
        cores (`active = min(tasks, cores)`), the remaining cores idle in every round, and the tail of each round
        serialises.
    """
    fix_notes = """
        Iterate one task loop over `n_blocks * n_tasks` and split the work id inside it
        (`i_block, task = wid // n_tasks, wid % n_tasks`).
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunk_states(h_ptr, n_blocks, n_tasks, BK: tl.constexpr):
                pid = tl.program_id(0)
                n_cores = tl.num_programs(0)
                for i_s in range(n_blocks):
                    for task in range(pid, n_tasks, n_cores):
                        offs = (i_s * n_tasks + task) * BK + tl.arange(0, BK)
                        tl.store(h_ptr + offs, tl.load(h_ptr + offs) * 2)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def two_levels(x_ptr, n_rows, n_tasks, n_cores, BLOCK: language.constexpr):
                core = language.program_id(0)
                for row in language.range(0, n_rows):
                    for task in language.range(core, n_tasks, n_cores):
                        x_ptr_t = x_ptr + (row * n_tasks + task) * BLOCK
                        language.store(x_ptr_t + language.arange(0, BLOCK), 0.0)
                    for task in range(
                        core,
                        n_tasks,
                        n_cores,
                    ):
                        x_ptr_t = x_ptr + (row * n_tasks + task) * BLOCK
                        language.store(x_ptr_t + language.arange(0, BLOCK), 1.0)
            """,
            count=2,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunk_states(h_ptr, n_blocks, n_tasks, BK: tl.constexpr):
                pid = tl.program_id(0)
                n_cores = tl.num_programs(0)
                for wid in range(pid, n_blocks * n_tasks, n_cores):
                    i_s, task = wid // n_tasks, wid % n_tasks
                    offs = (i_s * n_tasks + task) * BK + tl.arange(0, BK)
                    tl.store(h_ptr + offs, tl.load(h_ptr + offs) * 2)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def task_with_inner_k_loop(a_ptr, n_tasks, K, BK: tl.constexpr):
                pid = tl.program_id(0)
                for task in range(pid, n_tasks, tl.num_programs(0)):
                    acc = tl.zeros((BK,), dtype=tl.float32)
                    for k in range(0, K, BK):
                        acc += tl.load(a_ptr + task * K + k + tl.arange(0, BK))
                    tl.store(a_ptr + task * K + tl.arange(0, BK), acc)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def ring_steps(x_ptr, signal_ptr, world, n_tasks, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                for step in range(world):
                    token = dl.wait(signal_ptr + step, 1, "gpu", "acquire")
                    x_step = dl.consume_token(x_ptr + step * n_tasks * BLOCK, token)
                    for task in range(pid, n_tasks, tl.num_programs(0)):
                        offs = task * BLOCK + tl.arange(0, BLOCK)
                        tl.store(x_step + offs, tl.load(x_step + offs) + 1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def two_phases(x_ptr, n_tasks, BLOCK: tl.constexpr, STAGES: tl.constexpr):
                pid = tl.program_id(0)
                for phase in range(2):
                    for task in range(pid, n_tasks, tl.num_programs(0)):
                        tl.store(x_ptr + task * BLOCK + tl.arange(0, BLOCK), phase * 1.0)
                for stage in tl.static_range(STAGES):
                    for task in range(pid, n_tasks, tl.num_programs(0)):
                        tl.store(x_ptr + task * BLOCK + tl.arange(0, BLOCK), stage * 1.0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def nested_plain_loops(x_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
                for row in range(n_rows):
                    for col in range(0, n_cols, BLOCK):
                        tl.store(x_ptr + row * n_cols + col + tl.arange(0, BLOCK), 0.0)
            """
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        bounds = self._range_bounds(node)
        if bounds is None or len(bounds) != 3:
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        if not self._is_task_loop(analysis, node):
            return
        for ancestor in self.context.index.ancestors(node):
            if ancestor is kernel.node:
                return
            if isinstance(ancestor, cst.For) and self._is_sequential_block_loop(analysis, ancestor):
                self.report(node)
                return

    def _is_task_loop(self, analysis: KernelAnalysis, loop: cst.For) -> bool:
        bounds = self._range_bounds(loop)
        if bounds is None or len(bounds) != 3:
            return False
        start, _, step = bounds
        return analysis.derives_from_program_id(start) and not analysis.is_constexpr(step)

    def _is_sequential_block_loop(self, analysis: KernelAnalysis, loop: cst.For) -> bool:
        bounds = self._range_bounds(loop)
        if bounds is None or self._is_task_loop(analysis, loop):
            return False
        stop = bounds[0] if len(bounds) == 1 else bounds[1]
        if isinstance(stop, cst.Integer):
            return False
        return not any(self._synchronizes(node) for node in self.context.index.subtree(loop))

    def _range_bounds(self, loop: cst.For) -> list[cst.BaseExpression] | None:
        iterator = loop.iter
        if not isinstance(iterator, cst.Call):
            return None
        name = iterator.func.value if isinstance(iterator.func, cst.Name) else self.facts.qualname(iterator.func)
        if name not in _RANGES:
            return None
        return [a.value for a in iterator.args if a.keyword is None and not a.star]

    def _synchronizes(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        name = self.facts.qualname(node.func) or ""
        return name in _SYNC_CALLS or name.startswith(_SYNC_PREFIXES)
