import libcst as cst

from ascendlint import edits
from ascendlint.analysis.launch_arguments import launches_of, may_pass_one
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class ConstexprTo(Rule):
    """Flags `.to(dtype)` on a value that is a `constexpr` object when the compiler reaches it."""

    decides = """
    Constexprs are constexpr parameters, locals annotated `x: tl.constexpr = ...`, `tl.static_range` loop
    variables, inline expressions of those, and parameters of a jit helper that every call passes a constexpr. A
    name bound by plain assignment is a tensor, whatever it was assigned, and is never flagged; so is a jit
    helper's parameter that a call passes a tensor, even when it is annotated `tl.constexpr`. An unannotated
    integer parameter that a launch in the module can pass 1 (a size, the literal 1) is flagged as a warning.
    """

    code = "ASC102"
    name = "constexpr-to"
    message = "`.to()` on constexpr `{value}`: a constexpr has no `.to`; use `{tl}.cast`"
    specialised_message = (
        "`.to()` on parameter `{value}`: Triton turns an argument equal to 1 into a constexpr, which has no `.to`; "
        "use `{tl}.cast` (or list it in `do_not_specialize`)"
    )
    severity = Severity.ERROR
    fix_safety = FixSafety.SAFE
    why = """
        Values known at compile time are `constexpr` objects, not tensors, and have no `.to` method: compilation
        fails with `AttributeError: 'constexpr' object has no attribute 'to'`. A jit helper is specialised on every
        non-tensor argument, so its parameter is a constexpr when the caller passes one, and a tensor when the
        caller passes a tensor (its annotation does not change what the call passes). Triton also specialises a
        plain integer argument equal to 1 into a constexpr, so `.to()` on an unannotated integer parameter compiles
        for most shapes and fails for the one launch that passes 1 (a batch of one, a single head). `tl.cast`
        accepts both tensors and constexprs. A plain assignment such as `n = BT * 2` binds a tensor (the compiler
        converts the value), so `n.to()` compiles and is not reported.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, B: tl.constexpr):
                off = B.to(tl.int64)
                tl.store(x_ptr, off)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, B: tl.constexpr):
                off = tl.cast(B, tl.int64)
                tl.store(x_ptr, off)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def kernel(x_ptr, BT: language.constexpr, BS: language.constexpr):
                n = (BT * BS).to(language.int64)
                NS: language.constexpr = BT // BS
                for i in language.static_range(0, NS):
                    language.store(x_ptr + i, i.to(language.int64) + NS.to(language.int64) + n)
            """,
            count=3,
            fixed="""
            import triton
            from triton import language as language

            @triton.jit
            def kernel(x_ptr, BT: language.constexpr, BS: language.constexpr):
                n = language.cast((BT * BS), language.int64)
                NS: language.constexpr = BT // BS
                for i in language.static_range(0, NS):
                    language.store(x_ptr + i, language.cast(i, language.int64) + language.cast(NS, language.int64) + n)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale_by(v, n):
                return v * n.to(tl.float32)

            @triton.jit
            def kernel(x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, scale_by(tl.load(x_ptr + offs), BLOCK))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def scale_by(v, n):
                return v * tl.cast(n, tl.float32)

            @triton.jit
            def kernel(x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, scale_by(tl.load(x_ptr + offs), BLOCK))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, B):
                tl.store(x_ptr + tl.arange(0, 16), B.to(tl.int64) * 2)

            def launch(x):
                kernel[(1,)](x, x.shape[0])
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, B):
                tl.store(x_ptr + tl.arange(0, 16), tl.cast(B, tl.int64) * 2)

            def launch(x):
                kernel[(1,)](x, x.shape[0])
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def gate(x, w):
                return x.to(tl.float32) * tl.sigmoid(w.to(tl.float32))

            @triton.jit
            def kernel(x_ptr, w_ptr, o_ptr, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(o_ptr + offs, gate(tl.load(x_ptr + offs), tl.load(w_ptr + offs)))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, B: tl.constexpr):
                off = tl.cast(B, tl.int64)
                tl.store(x_ptr, off)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, idx_ptr, B: tl.constexpr):
                i = tl.load(idx_ptr).to(tl.int64)
                pid = tl.program_id(0).to(tl.int64)
                tl.store(x_ptr + i * B + pid, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, BT: tl.constexpr, NTS: tl.constexpr):
                tl_n = BT * 2
                total = 0
                for i_t in tl.static_range(0, 4):
                    i_s = i_t // NTS
                    total += i_s.to(tl.int32)
                tl.store(x_ptr, tl_n.to(tl.int64) + total.to(tl.int64))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale_by(v, n):
                return v * n.to(tl.float32)

            @triton.jit
            def kernel(x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                m = BLOCK + 0
                tl.store(x_ptr + offs, scale_by(tl.load(x_ptr + offs), m))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def shift(v, bias: tl.constexpr):
                return v + bias.to(tl.float32)

            @triton.jit
            def kernel(x_ptr, b_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, shift(tl.load(x_ptr + offs), tl.load(b_ptr)))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit(do_not_specialize=["T"])
            def kernel(x_ptr, T):
                tl.store(x_ptr, T.to(tl.int64))

            def launch(x):
                kernel[(1,)](x, x.shape[0])
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit(do_not_specialize=[1])
            def kernel(x_ptr, T):
                tl.store(x_ptr, T.to(tl.int64))

            def launch(x):
                kernel[(1,)](x, x.shape[0])
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, stride_row):
                tl.store(x_ptr, T.to(tl.int64) * stride_row.to(tl.int64))

            def launch(x, n_rows):
                kernel[(1,)](x, n_rows, x.stride(0))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, n):
                offs = tl.arange(0, 128)
                tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)
            """
        ),
        Valid(
            """
            import torch

            def host(B):
                return B.to(torch.int64)
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (type(func) is cst.Attribute and func.attr.value == "to" and node.args):
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None or not self._in_body(node, kernel):
            return  # a parameter's annotation or default, or a decorator, is not code the compiler runs as such
        analysis = self.context.analysis(kernel)
        value = func.value
        tl = self.facts.local_alias("tl", "tl")
        shown = " ".join(self.context.module.code_for_node(value).split())
        if analysis.is_constexpr(value):
            message, severity = self.message, self.severity
        elif self._launched_with_one(kernel, analysis.specializable_param(value)):
            message, severity = self.specialised_message, Severity.WARNING
        else:
            return
        self.report(
            node,
            message.format(value=shown, tl=tl),
            severity=severity,
            fix_message=f"Use `{tl}.cast({shown}, ...)`",
            edits=lambda loc: [edits.replace(loc, node, _as_cast(self.context.module, node, tl))],
        )


    def _in_body(self, node: cst.CSTNode, kernel) -> bool:
        body = kernel.node.body
        return any(ancestor is body for ancestor in self.context.index.ancestors(node))

    def _launched_with_one(self, kernel, param: str | None) -> bool:
        if param is None:
            return False
        return any(may_pass_one(self.facts, launch, param) for launch in launches_of(self.facts, kernel))


def _as_cast(module: cst.Module, call: cst.Call, tl: str) -> str:
    value = module.code_for_node(call.func.value)
    arguments = []
    for arg in call.args:
        text = module.code_for_node(arg.value)
        arguments.append(f"{arg.keyword.value}={text}" if arg.keyword is not None else text)
    return f"{tl}.cast({', '.join([value, *arguments])})"
