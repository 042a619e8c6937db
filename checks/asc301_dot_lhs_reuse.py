import libcst as cst

from ascendlint import edits
from ascendlint.analysis.values import argument
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_METADATA_ATTRIBUTES = {"dtype", "shape", "type", "ndim", "numel"}


class DotLhsReuse(Rule):
    """Flags a `tl.dot` whose left operand is a name that is read again after the dot.

    Later reads include other dots, stores, arithmetic, a copy taken after the dot, and the next iteration of a
    loop. Reads inside the same `tl.dot` call, metadata reads such as `.dtype` or `.shape`, reads after the name
    was reassigned and reads in the other branch of an `if` do not count.

    The flash-attention shape is reported on purpose: a query tile loaded once before a KV loop and passed as the
    left operand of `tl.dot(q, k)` on every iteration. Reuse across iterations is the trap itself (the first
    iteration's dot may overwrite `q`, every later one reads what is left), a second use as left operand is one
    of the confirmed clobber patterns, and nothing in the shape makes the first dot leave its operand intact; that
    some published kernels use it does not show it safe, only that a clobber there shows up as numeric drift
    rather than a failure. Copying the tile inside the loop costs one vector add per iteration.
    """

    code = "ASC301"
    name = "dot-lhs-reuse"
    message = "`tl.dot` may overwrite its left operand `{name}` in UB, and `{name}` is read again (line {line})"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = """
        On Ascend the cube unit's matmul may reuse the left operand's on-chip buffer (UB) for its own work, so
        after `tl.dot(b_q, b_k)` the tile `b_q` can hold garbage. Any later read of it (another dot, a store,
        arithmetic, the next loop iteration) silently computes with corrupted data; nothing fails.
    """
    fix_notes = """
        The fix copies the tile just before the dot (`b_q_c = b_q + 0.0`, inside the loop when the dot is in one)
        and passes the copy as the left operand, so the original stays intact. A copy made after the dot does not
        help: the damage is already done.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                b_k = tl.load(k + offs)
                b_s = tl.dot(b_q, b_k)
                tl.store(o + offs, b_s + b_q)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                b_k = tl.load(k + offs)
                b_q_c = b_q + 0.0
                b_s = tl.dot(b_q_c, b_k)
                tl.store(o + offs, b_s + b_q)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(q, k, o, NK, BT: language.constexpr):
                offs = language.arange(0, BT)[:, None] * BT + language.arange(0, BT)[None, :]
                b_q = language.load(q + offs)
                acc = language.zeros([BT, BT], dtype=language.float32)
                for i_k in range(0, NK):
                    b_k = language.load(k + i_k * BT * BT + offs)
                    acc += language.dot(
                        b_q,
                        b_k,
                    )
                language.store(o + offs, acc)
            """,
            fixed="""
            import triton
            import triton.language as language

            @triton.jit
            def kernel(q, k, o, NK, BT: language.constexpr):
                offs = language.arange(0, BT)[:, None] * BT + language.arange(0, BT)[None, :]
                b_q = language.load(q + offs)
                acc = language.zeros([BT, BT], dtype=language.float32)
                for i_k in range(0, NK):
                    b_k = language.load(k + i_k * BT * BT + offs)
                    b_q_c = b_q + 0.0
                    acc += language.dot(
                        b_q_c,
                        b_k,
                    )
                language.store(o + offs, acc)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attend(b_q, b_k, b_v):
                b_s = tl.dot(b_q, tl.trans(b_k))
                b_q_c = b_q + 0.0
                return tl.dot(b_s.to(b_v.dtype), b_v) + tl.sum(b_q_c, 1)[:, None]

            @triton.jit
            def kernel(q, k, v, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_a = tl.load(q + offs)
                b_b = tl.load(k + offs)
                for i in range(0, 2):
                    for j in range(0, 2):
                        b_c = tl.dot(b_a, b_b)
                        b_d = tl.dot(b_c, b_b)
                        b_a = b_d
                        b_e = tl.dot(b_b, b_a)
                tl.store(o + offs, attend(b_a, b_b, tl.load(v + offs)) + b_e)
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def attend(b_q, b_k, b_v):
                b_q_c2 = b_q + 0.0
                b_s = tl.dot(b_q_c2, tl.trans(b_k))
                b_q_c = b_q + 0.0
                return tl.dot(b_s.to(b_v.dtype), b_v) + tl.sum(b_q_c, 1)[:, None]

            @triton.jit
            def kernel(q, k, v, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_a = tl.load(q + offs)
                b_b = tl.load(k + offs)
                for i in range(0, 2):
                    for j in range(0, 2):
                        b_c = tl.dot(b_a, b_b)
                        b_d = tl.dot(b_c, b_b)
                        b_a = b_d
                        b_b_c = b_b + 0.0
                        b_e = tl.dot(b_b_c, b_a)
                tl.store(o + offs, attend(b_a, b_b, tl.load(v + offs)) + b_e)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                b_k = tl.load(k + offs)
                b_q_c = b_q + 0.0
                b_s = tl.dot(b_q_c, b_k)
                tl.store(o + offs, b_s + b_q)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, NK, BT: tl.constexpr, USE_A: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                b_k = tl.load(k + offs)
                b_kk = tl.dot(b_k, tl.trans(b_k))
                acc = tl.dot(b_q + 0.0, b_kk).to(b_k.dtype)
                if USE_A:
                    b_s = tl.dot(b_q, b_kk)
                else:
                    b_s = b_q * 2.0
                for i in range(0, NK):
                    b_x = tl.load(q + i * BT * BT + offs)
                    acc += tl.dot(b_x, b_kk)
                b_y = tl.zeros([BT, BT], dtype=tl.float32) + acc
                b_y = tl.dot(b_y, b_kk)
                b_y = b_s + b_y
                tl.store(o + offs, b_y + b_k.shape[0])
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        analysis = self.context.analysis(kernel)
        dots = []
        for call in analysis.nodes:
            if self.facts.is_call_to(call, "tl.dot"):
                lhs = argument(call, 0, "input")
                if isinstance(lhs, cst.Name):
                    dots.append((call, lhs))
        if not dots:
            return
        later = analysis.later_reads([lhs for _, lhs in dots])
        copies: dict[str, int] = {}
        for call, lhs in dots:
            reads = [r for r in later[id(lhs)] if r is lhs or self._counts(analysis, call, r)]
            reads += [r for r in self._same_statement_reads(analysis, call, lhs) if self._counts(analysis, call, r)]
            if reads:
                self._report(analysis, call, lhs, reads, copies)

    @staticmethod
    def _counts(analysis, dot: cst.Call, read: cst.Name) -> bool:
        """A read that sees the clobbered tile: not metadata, not another operand of the same dot (the dot's own
        left operand read again on the next loop iteration does count)."""
        parent = analysis.index.parent(read)
        if isinstance(parent, cst.Attribute) and parent.value is read and parent.attr.value in _METADATA_ATTRIBUTES:
            return False
        return not any(a is dot for a in analysis.index.ancestors(read))

    @staticmethod
    def _same_statement_reads(analysis, dot: cst.Call, lhs: cst.Name) -> list[cst.Name]:
        """Reads of the name later in the statement holding the dot (evaluated after it)."""
        statement = analysis.statement_of(dot)
        after = analysis.index.order(dot)
        return [
            r
            for r in analysis.reads.get(lhs.value, ())
            if analysis.index.order(r) > after and analysis.statement_of(r) is statement
        ]

    def _report(self, analysis, call, lhs, reads, copies) -> None:
        module = self.context.module
        first = min(reads, key=analysis.index.order)
        line = self.context.locator.span(first)[0].row
        copy = self._copy_name(analysis, lhs.value, copies)
        line_node = next((a for a in analysis.index.ancestors(call) if isinstance(a, cst.SimpleStatementLine)), None)
        statement = analysis.statement_of(call)

        def build(loc):
            if line_node is None or not isinstance(statement, cst.BaseSmallStatement):
                return []
            row = loc.span(line_node)[0].row
            indent = edits.indentation_of_line(loc, row)
            return [
                edits.insert_before_line(loc, row, f"{indent}{copy} = {module.code_for_node(lhs)} + 0.0{loc.newline}"),
                edits.replace(loc, lhs, copy),
            ]

        self.report(
            call,
            self.message.format(name=lhs.value, line=line),
            fix_message=f"Copy `{lhs.value}` to `{copy}` before the dot and pass the copy",
            edits=build,
        )

    @staticmethod
    def _copy_name(analysis, name: str, copies: dict[str, int]) -> str:
        """A fresh name for the copy: `<name>_c`, then `<name>_c2`, ... avoiding every name in the kernel."""
        taken = set(analysis.kernel.params) | set(analysis.assignments) | set(analysis.reads)
        suffix = copies.get(name, 1)
        while True:
            candidate = f"{name}_c" if suffix == 1 else f"{name}_c{suffix}"
            suffix += 1
            if candidate not in taken:
                copies[name] = suffix
                return candidate
