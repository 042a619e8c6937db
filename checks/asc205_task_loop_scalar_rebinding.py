import libcst as cst

from ascendlint.analysis.flow import bound_names
from ascendlint.analysis.task_loops import walks_tasks
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class TaskLoopScalarRebinding(Rule):
    """Flags a scalar kernel parameter assigned inside a core-grid task loop."""

    decides = """
    A core-grid task loop is `for task in range(core_id, n_tasks, n_cores)` (or `tl.range`) whose start comes from
    `tl.program_id`, as in ASC204, or a contiguous share of the tasks, `for task in range(start, start + per_core)`
    with both bounds following `tl.program_id`. A scalar parameter is a kernel parameter that is neither a pointer nor a
    constexpr; `T = eos - bos`, `T += 1` or `T, n = ...` inside the loop rebinds it. Pointer parameters are
    ASC204's.
    """

    code = "ASC205"
    name = "task-loop-scalar-rebinding"
    message = (
        "kernel parameter `{name}` is rebound inside the task loop: the loop carries it from task to task (the CANN "
        "compiler has produced NaN for this), so a task can see the previous task's value; bind a fresh local per "
        "task instead"
    )
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    why = """
        A name defined before a loop and assigned in its body becomes a value the loop carries from one iteration
        to the next: triton-ascend's frontend turns it into an argument of the `scf.for` that each task hands to
        the next (checked offline: the TTIR loop gets one more `iter_args` entry). In a core-grid task loop that
        makes a per-sequence length such as `T = eos - bos` depend on the previous task, and on Ascend the CANN
        compiler has produced NaN for exactly this pattern: a real varlen kernel was fixed by renaming the
        parameter and binding a fresh local in every task. Any read of the parameter later in the loop that is not
        preceded by the assignment in the same task also sees the previous task's value, not the argument.
    """
    fix_notes = """
        Give the per-task value its own name, bound at the top of each task (`T_cur = T`, then
        `T_cur = eos - bos` in the varlen branch) and use it for the rest of the task; the parameter is then never
        assigned. There is no automatic fix because every later use in the task must switch to the new name.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def varlen_sum(x, o, cu_seqlens, T, n_tasks, n_cores, BT: tl.constexpr):
                core_id = tl.program_id(0)
                for i_n in range(core_id, n_tasks, n_cores):
                    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                    T = eos - bos
                    offs = tl.arange(0, BT)
                    acc = tl.sum(tl.load(x + bos + offs, mask=offs < T, other=0.0), axis=0)
                    tl.store(o + i_n, acc)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, T, scale, n_tasks, n_cores, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
                core_id = tl.program_id(0)
                for task in tl.range(core_id, n_tasks, n_cores):
                    T_max = 1 * T
                    if IS_VARLEN:
                        bos, T = tl.load(cu_seqlens + task), tl.load(cu_seqlens + task + 1)
                    else:
                        bos = task * T
                    for k in range(0, 2):
                        scale += 1.0
                    offs = tl.arange(0, BT)
                    tl.store(o + bos + offs, tl.load(x + bos + offs, mask=offs < T_max) * scale, mask=offs < T_max)
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunked(x, o, cu_seqlens, T, B, NT: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
                core_id = tl.program_id(0)
                per_core = NT // tl.num_programs(0)
                start = core_id * per_core
                for idx in range(start, start + per_core):
                    for i_b in range(B):
                        if IS_VARLEN:
                            bos = tl.load(cu_seqlens + idx).to(tl.int32)
                            T = tl.load(cu_seqlens + idx + 1).to(tl.int32) - bos
                        else:
                            bos = i_b * T
                        offs = tl.arange(0, BT)
                        tl.store(o + bos + offs, tl.load(x + bos + offs, mask=offs < T), mask=offs < T)
            """
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def varlen_sum(x, o, cu_seqlens, T, n_tasks, n_cores, BT: tl.constexpr):
                core_id = tl.program_id(0)
                for i_n in range(core_id, n_tasks, n_cores):
                    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                    T_cur = eos - bos
                    offs = tl.arange(0, BT)
                    acc = tl.sum(tl.load(x + bos + offs, mask=offs < T_cur, other=0.0), axis=0)
                    tl.store(o + i_n, acc)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, T, n_tasks, n_cores, IS_VARLEN: tl.constexpr, BT: tl.constexpr):
                core_id = tl.program_id(0)
                if IS_VARLEN:
                    T = tl.load(cu_seqlens + 1)
                T_max = T
                for task in tl.range(core_id, n_tasks, n_cores):
                    x_t = x + task * BT
                    x_t += BT
                    offs = tl.arange(0, BT)
                    tl.store(o + task * BT + offs, tl.load(x_t + offs, mask=offs < T_max))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, T, n, BT: tl.constexpr):
                pid = tl.program_id(0)
                for i in range(0, n):
                    T = T - 1
                for j in range(pid, n, 1):
                    T += 1
                for task in range(pid, n, 4):
                    offs = tl.arange(0, BT)
                    tl.store(o + task * BT + offs, tl.load(x + task * BT + offs, mask=offs < T))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunked(x, o, cu_seqlens, T, B, NT: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
                core_id = tl.program_id(0)
                per_core = NT // tl.num_programs(0)
                start = core_id * per_core
                for idx in range(start, start + per_core):
                    for i_b in range(B):
                        T_cur = T
                        if IS_VARLEN:
                            bos = tl.load(cu_seqlens + idx).to(tl.int32)
                            T_cur = tl.load(cu_seqlens + idx + 1).to(tl.int32) - bos
                        else:
                            bos = i_b * T
                        offs = tl.arange(0, BT)
                        tl.store(o + bos + offs, tl.load(x + bos + offs, mask=offs < T_cur), mask=offs < T_cur)
                for k in range(core_id, NT):
                    T = T - 1
                tl.store(o, T)
            """
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        if not walks_tasks(self.facts, analysis, node):
            return
        scalars = {
            name for name in kernel.params
            if name not in kernel.constexpr and not analysis.is_pointer_name(name)
        }
        if not scalars:
            return
        for statement in analysis.index.subtree(node):
            if type(statement) not in (cst.Assign, cst.AugAssign, cst.AnnAssign):
                continue
            if self._in_inner_task_loop(analysis, statement, node):
                continue  # reported once, for the innermost task loop
            for target, _ in bound_names(statement):
                if target.value in scalars:
                    self.report(target, self.message.format(name=target.value))

    def _in_inner_task_loop(self, analysis, statement: cst.CSTNode, loop: cst.For) -> bool:
        for ancestor in analysis.index.ancestors(statement):
            if ancestor is loop:
                return False
            if type(ancestor) is cst.For and walks_tasks(self.facts, analysis, ancestor):
                return True
        return False
