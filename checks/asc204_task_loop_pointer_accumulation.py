import libcst as cst

from ascendlint.analysis.task_loops import is_task_loop
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class TaskLoopPointerAccumulation(Rule):
    """Flags a pointer defined outside a core-grid task loop and advanced in place inside it."""

    decides = """
    A core-grid task loop is `for task in range(core_id, n_tasks, n_cores)` (or `tl.range`) whose start comes from
    `tl.program_id`. `q += off` or `q = q + off` there carries the pointer from one task into the next.
    """

    code = "ASC204"
    name = "task-loop-pointer-accumulation"
    message = "`{pointer}` is defined outside the task loop and advanced in place inside it; rebind a fresh local"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    why = """
        With a fixed grid of one program per AI core, each program walks its share of tasks in a loop. A pointer
        advanced in place across those iterations is a loop-carried pointer whose value depends on every earlier
        task; Ascend Triton can miscompile this pattern, so later tasks read or write the wrong tiles. Computing
        the pointer afresh from the loop-invariant base on each task has no such dependency.
    """
    fix_notes = """
        Compute a new local from the unchanged base in each task (`q_t = q + task * stride`) and use it; there is
        no automatic fix because every later use of the pointer must switch to the new name.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, n_tasks, n_cores, BT: tl.constexpr):
                core_id = tl.program_id(0)
                offs = tl.arange(0, BT)
                for task in range(core_id, n_tasks, n_cores):
                    q += n_cores * BT
                    tl.store(o + task * BT + offs, tl.load(q + offs))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(q, o, n_tasks, n_cores: language.constexpr, BT: language.constexpr):
                p_q = q + language.program_id(0) * BT
                p_o = o
                for task in language.range(
                    language.program_id(0),
                    n_tasks,
                    n_cores,
                ):
                    b = language.load(p_q + language.arange(0, BT))
                    if task > 0:
                        p_q = p_q + n_cores * BT
                    for k in range(0, 4):
                        p_o += BT
                    language.store(p_o + language.arange(0, BT), b)
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
            def kernel(q, o, n_tasks, n_cores, BT: tl.constexpr):
                core_id = tl.program_id(0)
                offs = tl.arange(0, BT)
                for task in range(core_id, n_tasks, n_cores):
                    q_t = q + task * BT
                    tl.store(o + task * BT + offs, tl.load(q_t + offs))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(k, o, n_tasks, n_cores, K, BT: tl.constexpr, BK: tl.constexpr):
                core_id = tl.program_id(0)
                for task in tl.range(core_id, n_tasks, n_cores):
                    p_k = k + task * BT
                    acc = tl.zeros([BK], dtype=tl.float32)
                    for i_k in range(0, tl.cdiv(K, BK)):
                        acc += tl.load(p_k + tl.arange(0, BK))
                        p_k += BK
                    p_o = o
                    p_o = p_o + task * BK
                    tl.store(p_o + tl.arange(0, BK), acc)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, n, BT: tl.constexpr):
                i_t = tl.program_id(0)
                for i in range(0, n, 1):
                    q += BT
                for j in range(i_t, n):
                    o += BT
                total = 0
                for task in range(i_t, n, 4):
                    total += task
                tl.store(o + tl.arange(0, BT), tl.load(q + tl.arange(0, BT)) + total)
            """
        ),
    ]

    def visit_For(self, node: cst.For) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        if not is_task_loop(self.facts, analysis, node):
            return
        for update in analysis.index.subtree(node):
            target = _advanced_pointer(update)
            if target is None or not analysis.is_pointer(target):
                continue
            if any(not analysis.defined_inside(d, node) for d in analysis.definitions(target)):
                self.report(update, self.message.format(pointer=target.value))


def _advanced_pointer(node) -> cst.Name | None:
    """The pointer name of `p += off` / `p -= off` / `p = p + off`, as the read that sees its earlier value."""
    if type(node) is cst.AugAssign and type(node.operator) in (cst.AddAssign, cst.SubtractAssign):
        return node.target if type(node.target) is cst.Name else None
    if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
        value = node.value
        while type(value) is cst.BinaryOperation and type(value.operator) in (cst.Add, cst.Subtract):
            value = value.left
        if type(value) is cst.Name and value.value == node.targets[0].target.value and value is not node.value:
            return value
    return None
