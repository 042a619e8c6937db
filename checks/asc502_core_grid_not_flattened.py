from __future__ import annotations

import re

import libcst as cst

from ascendlint.analysis.values import KernelAnalysis
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.text.lazy_regex import lazy

_RANGES = {"range", "tl.range"}
# Trip counts of loops over ranks or ring steps: world_size, num_ranks, n_pes, rank_size, world.
_RANKS = lazy(r"(world(_?size)?|(num_|n_?)?ranks?|rank_?size|(num_|n_?)?pes|(num_|n_?)?ring_?steps?)", re.I)


class CoreGridNotFlattened(Rule):
    """Flags a core-grid task loop, or a manual split of the work between cores, nested inside a sequential loop
    over data blocks."""

    decides = """
    A core-grid task loop is `for task in range(pid, n_tasks, num_programs)`; a manual core split is
    `start = pid * per_core; for i in range(start, start + per_core)`; a sequential loop over data blocks is a
    `range` with a runtime trip count.

    Signals or barriers in the outer loop (`dl.wait`, `dl.notify`, `barrier_all`) are no excuse: the
    Triton-distributed Ascend tutorials' own example of this mistake synchronizes every round. Left alone: task loops whose start already rotates
    globally, following a count carried across the outer loop (`start = (pid - prev) % n_cores` with
    `prev += tasks`, or `(prev + pid) % n`), so that the round-robin continues from one round to the next and
    leaves no core idle; outer loops over ranks or ring steps (`range(world_size)`), and outer loops with a
    literal or compile-time trip count (`range(2)`, `tl.static_range`).
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
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def gather_then_reduce(x_ptr, signal_ptr, num_blocks_s, n_tasks, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                n_cores = tl.num_programs(0)
                for s in range(num_blocks_s):
                    token = dl.wait(signal_ptr + s, 1, "gpu", "acquire")
                    x_s = dl.consume_token(x_ptr + s * n_tasks * BLOCK, token)
                    for task in range(pid, n_tasks, n_cores):
                        offs = task * BLOCK + tl.arange(0, BLOCK)
                        tl.store(x_s + offs, tl.load(x_s + offs) * 2)
                    dl.notify(signal_ptr + s, 0, signal=0, sig_op="set", comm_scope="gpu")
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def split_per_core(x_ptr, num_blocks_s, n_tasks, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                per_core = tl.cdiv(n_tasks, tl.num_programs(0))
                start = pid * per_core
                for s in range(num_blocks_s):
                    for task in range(start, tl.minimum(start + per_core, n_tasks)):
                        offs = (s * n_tasks + task) * BLOCK + tl.arange(0, BLOCK)
                        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            """,
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
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def per_sequence_chunks(x_ptr, cu_seqlens, batch, CHUNK: tl.constexpr):
                pid = tl.program_id(0)
                n_cores = tl.num_programs(0)
                prev_chunks = 0
                for b in range(batch):
                    bos = tl.load(cu_seqlens + b)
                    n_chunks = tl.cdiv(tl.load(cu_seqlens + b + 1) - bos, CHUNK)
                    start = (pid + n_cores - prev_chunks % n_cores) % n_cores
                    prev_chunks += n_chunks
                    for chunk in range(start, n_chunks, n_cores):
                        offs = bos + chunk * CHUNK + tl.arange(0, CHUNK)
                        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def per_sequence_heads(x_ptr, cu_seqlens, bsz, H: tl.constexpr, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                n_programs = tl.num_programs(0)
                done_blocks = 0
                for b in range(bsz):
                    n_blocks = tl.cdiv(tl.load(cu_seqlens + b + 1) - tl.load(cu_seqlens + b), BLOCK)
                    prev_tasks = done_blocks * H
                    done_blocks += n_blocks
                    for task in range((prev_tasks + pid) % n_programs, n_blocks * H, n_programs):
                        offs = (prev_tasks + task) * BLOCK + tl.arange(0, BLOCK)
                        tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def split_once(x_ptr, n_tasks, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                per_core = tl.cdiv(n_tasks, tl.num_programs(0))
                for task in range(pid * per_core, tl.minimum((pid + 1) * per_core, n_tasks)):
                    offs = task * BLOCK + tl.arange(0, BLOCK)
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            """
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        bounds = self._range_bounds(node)
        if bounds is None or len(bounds) < 2:
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        if not (self._is_task_loop(analysis, node) or self._is_core_split(analysis, node)):
            return
        for ancestor in self.context.index.ancestors(node):
            if ancestor is kernel.node:
                return
            if type(ancestor) is cst.For and self._is_sequential_block_loop(analysis, ancestor):
                if not self._rotates(analysis, node, ancestor):
                    self.report(node)
                return

    def _is_task_loop(self, analysis: KernelAnalysis, loop: cst.For) -> bool:
        """``for task in range(pid, n_tasks, num_programs)``: each program takes every n-th task."""
        bounds = self._range_bounds(loop)
        if bounds is None or len(bounds) != 3:
            return False
        start, _, step = bounds
        return analysis.derives_from_program_id(start) and not analysis.is_constexpr(step)

    def _is_core_split(self, analysis: KernelAnalysis, loop: cst.For) -> bool:
        """``for i in range(start, start + per_core)`` with ``start = pid * per_core``: a contiguous share of the
        work per program (both bounds follow the program id)."""
        bounds = self._range_bounds(loop)
        if bounds is None or len(bounds) not in (2, 3) or (len(bounds) == 3 and not _is_one(bounds[2])):
            return False
        start, stop = bounds[0], bounds[1]
        return analysis.derives_from_program_id(start) and analysis.derives_from_program_id(stop)

    def _is_sequential_block_loop(self, analysis: KernelAnalysis, loop: cst.For) -> bool:
        """A loop with a runtime trip count that walks data blocks: not a task loop, not a loop over ring steps or
        ranks. Signals or barriers per round do not make it one: the Triton-distributed Ascend tutorials' own mistake has them."""
        bounds = self._range_bounds(loop)
        if bounds is None or self._is_task_loop(analysis, loop) or self._is_core_split(analysis, loop):
            return False
        stop = bounds[0] if len(bounds) == 1 else bounds[1]
        if type(stop) is cst.Integer or analysis.is_compile_time(stop):
            return False
        return not any(_RANKS.fullmatch(n.value) for n in (stop, *self.context.index.descendants(stop))
                       if type(n) is cst.Name)

    def _rotates(self, analysis: KernelAnalysis, task_loop: cst.For, outer: cst.For) -> bool:
        """The task loop's start (or stop) follows a count carried across the outer loop's iterations
        (``start = (pid - prev) % n_cores`` with ``prev += tasks``): the assignment of tasks to cores continues
        from round to round, a global round-robin that leaves no core idle."""
        bounds = self._range_bounds(task_loop) or []
        for node in analysis.offset_nodes(bounds[:2]):
            if type(node) is cst.Name and self._carried(analysis, node, outer):
                return True
        return False

    @staticmethod
    def _carried(analysis: KernelAnalysis, read: cst.Name, outer: cst.For) -> bool:
        definitions = analysis.definitions(read)
        inside = [d for d in definitions if d.kind in ("assign", "augmented") and analysis.defined_inside(d, outer)]
        before = [d for d in definitions if not analysis.defined_inside(d, outer)]
        return bool(inside) and bool(before)

    def _range_bounds(self, loop: cst.For) -> list[cst.BaseExpression] | None:
        iterator = loop.iter
        if type(iterator) is not cst.Call:
            return None
        name = iterator.func.value if type(iterator.func) is cst.Name else self.facts.qualname(iterator.func)
        if name not in _RANGES:
            return None
        return [a.value for a in iterator.args if a.keyword is None and not a.star]


def _is_one(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Integer and expr.evaluated_value == 1
