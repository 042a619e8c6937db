from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

# `tl.<name>` dtypes of triton-ascend 3.2.0 (`triton.language.core.dtype` instances exported by `triton.language`).
_DTYPES = frozenset({
    "int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float8e4nv", "float8e4b8", "float8e4b15", "float8e5", "float8e5b16",
    "float16", "bfloat16", "float32", "float64",
})


@dataclass(frozen=True)
class Construct:
    """One upstream-Triton construct triton-ascend does not take, with what was observed of it."""

    key: str
    severity: Severity
    message: str
    evidence: str  # where it was seen to fail: the compiler's own message, or the toolchain a real fix named


# The table the rule reads. Each row has a probe in tests/checks/test_new_rule_compile_probes.py.
CONSTRUCTS = {
    "dtype-constructor": Construct(
        "dtype-constructor",
        Severity.ERROR,
        "`{call}` calls a dtype as a constructor; triton-ascend 3.2.0 fails to compile it",
        "triton-ascend 3.2.0 frontend: TypeError(\"'dtype' object is not callable\")",
    ),
    "to-overflow-mode": Construct(
        "to-overflow-mode",
        Severity.ERROR,
        "`overflow_mode=` on `.to(...)`: triton-ascend 3.2.0 takes it only on `tl.cast` and fails to compile this",
        "triton-ascend 3.2.0 frontend: TypeError(\"tensor.to() got an unexpected keyword argument 'overflow_mode'\")",
    ),
    "cast-overflow-mode": Construct(
        "cast-overflow-mode",
        Severity.WARNING,
        "`overflow_mode=` on `tl.cast` is a triton-ascend extension: byted-triton-x 3.2.0.post24 rejected it; "
        "clamp first and cast without it where the kernel must build there too",
        "compiles in triton-ascend 3.2.0 and reaches the Linalg as one `annotation.mark {overflow_mode = ...}` on "
        "the cast's result, the conversion itself unchanged (fp32, fp16, bf16 and int32 to int8, probed); "
        "rejected by the byted-triton-x 3.2.0.post24 toolchain a real Ascend quantisation kernel was built with",
    ),
}


class UnsupportedOnAscend(Rule):
    """Flags Triton constructs that triton-ascend does not compile, from a table of probed constructs."""

    decides = """
    | construct | triton-ascend 3.2.0 | severity | fix |
    |---|---|---|---|
    | a dtype called as a constructor, `tl.float32(x)` | fails in the frontend: `TypeError("'dtype' object is not callable")` | error | `tl.full((), x, tl.float32)` (safe) |
    | `x.to(dtype, overflow_mode=...)` | fails in the frontend: `TypeError("tensor.to() got an unexpected keyword argument 'overflow_mode'")` | error | `x.cast(dtype, overflow_mode=...)` (safe) |
    | `tl.cast(x, dtype, overflow_mode=...)`, `x.cast(...)` | compiles (a triton-ascend extension: the conversion is unchanged and the Linalg carries one `annotation.mark {overflow_mode = ...}` on its result for the BiSheng stage); a real fix removed it because the toolchain it built with, byted-triton-x 3.2.0.post24, rejected it | warning, only with `report-cast-overflow-mode` | none: clamp to the target range, then cast |

    Only calls in kernel code (`triton.jit` functions and helpers) are checked.

    On `tl.cast` the keyword compiles in 3.2.0 and is not dropped: compiled offline for the casts of real
    quantisation kernels (fp32, fp16, bf16 and int32 to int8), the TTIR and the Linalg with
    `overflow_mode="saturate"` are those without it plus one mark on the cast's result,

        annotation.mark %1 {overflow_mode = "saturate"} : tensor<128xi8>

    which the BiSheng stage (it needs CANN, so it is not run here) reads; the conversion op itself is the
    same. triton-ascend documents the keyword as its extension for integer overflow (`"trunc"`, the default,
    or `"saturate"`), and its own NPU tests compare a saturating cast with a clamped reference. Unlike the
    CUDA cache hints of ASC106, which the Linalg lowering drops, it is therefore not a no-op on Ascend. (fp8
    targets fail in 3.2.0 with or without it: `ValueError('unexpected type fp8.')`.)

    A real Ascend quantisation kernel had to drop it because the toolchain it was built with,
    byted-triton-x 3.2.0.post24, rejected it ("tl.cast do not support overflow_mode parameter"). That case
    is a warning about portability, off unless the `report-cast-overflow-mode` option is set. The other
    public fix that removed the keyword (a SwiGLU quantisation, "precision ok") replaced a cast through
    bf16 that truncated toward zero with `floor(x + 0.5)`, a clamp and a plain cast: a fix of rounding, in
    which the clamp does what `"saturate"` did. (The rule catalog reads the removal as the Ascend toolchain
    rejecting the keyword: that holds for the first fix by its message, not for the second, and 3.2.0's own
    frontend takes it.)
    """

    code = "ASC108"
    name = "unsupported-on-ascend"
    message = "a construct triton-ascend does not compile"
    severity = Severity.ERROR
    fix_safety = FixSafety.SAFE
    options = {"report-cast-overflow-mode": False}
    options_notes = """
        `report-cast-overflow-mode` (default `false`): also report `overflow_mode=` on `tl.cast` / `x.cast`, for
        kernels that must build with toolchains other than triton-ascend (byted-triton-x 3.2.0.post24 rejected
        it). triton-ascend 3.2.0 implements the keyword and real Ascend kernels (vllm-ascend, sgl-kernel-npu)
        rely on it, so it is not reported by default.
    """
    why = """
        triton-ascend follows upstream Triton's language with extensions of its own, and code written for another
        Triton build does not always compile. Calling a dtype as a constructor (`tl.float32(float("-inf"))`, seen
        in a real Ascend softmax kernel) stops triton-ascend 3.2.0's frontend (checked offline):

            CompilationError at 2:8:
                m = tl.float32(float("-inf"))
                    ^
            TypeError("'dtype' object is not callable")

        `overflow_mode=` is a triton-ascend extension of `tl.cast` (and of the `x.cast` method), not of
        `x.to`: 3.2.0 fails on `x.to(tl.int8, overflow_mode="saturate")` with
        `TypeError("tensor.to() got an unexpected keyword argument 'overflow_mode'")`.
    """
    fix_notes = """
        For a dtype constructor the fix writes `tl.full((), value, tl.float32)`: a 0-d tensor of that dtype and
        value, which 3.2.0 compiles (for literal, constexpr and runtime scalar values) and which broadcasts
        wherever the scalar did. It is offered only when the module imports `triton.language` as a module (the
        fix needs its `full`) and the call has a single argument.

        For `x.to(dtype, overflow_mode=...)` the fix renames the method to `cast`, which takes the same
        arguments in the same order plus `overflow_mode`, so the conversion is the one the author asked for.

        For `overflow_mode=` on `tl.cast` there is no automatic fix, because dropping the keyword changes what
        out-of-range values become. Clamp to the target range first (`tl.clamp(x, -128.0, 127.0)` for int8),
        then cast without it; a float-to-integer cast truncates toward zero, so round first
        (`tl.floor(x + 0.5)`) where the quantisation needs the nearest value.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_max(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=float("-inf"))
                m = tl.maximum(tl.max(x, axis=0), tl.float32(float("-inf")))
                tl.store(y_ptr + row, m)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def row_max(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=float("-inf"))
                m = tl.maximum(tl.max(x, axis=0), tl.full((), float("-inf"), tl.float32))
                tl.store(y_ptr + row, m)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def quantise(x_ptr, q_ptr, scale, N, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs, mask=offs < N, other=0.0) / scale
                q = x.to(tl.int8, overflow_mode="saturate")
                tl.store(q_ptr + offs, q, mask=offs < N)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def quantise(x_ptr, q_ptr, scale, N, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs, mask=offs < N, other=0.0) / scale
                q = x.cast(tl.int8, overflow_mode="saturate")
                tl.store(q_ptr + offs, q, mask=offs < N)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def _zero(n):
                return language.int32(0) + n

            @triton.jit
            def kernel(x_ptr, n, BLOCK: language.constexpr):
                acc = language.float16(1.5) * language.zeros([BLOCK], dtype=language.float16)
                x = language.load(x_ptr + language.arange(0, BLOCK))
                language.store(x_ptr + language.arange(0, BLOCK) + _zero(n), acc + x)
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as language

            @triton.jit
            def _zero(n):
                return language.full((), 0, language.int32) + n

            @triton.jit
            def kernel(x_ptr, n, BLOCK: language.constexpr):
                acc = language.full((), 1.5, language.float16) * language.zeros([BLOCK], dtype=language.float16)
                x = language.load(x_ptr + language.arange(0, BLOCK))
                language.store(x_ptr + language.arange(0, BLOCK) + _zero(n), acc + x)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_max(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=float("-inf"))
                m = tl.maximum(tl.max(x, axis=0), tl.full((), float("-inf"), tl.float32))
                tl.store(y_ptr + row, m)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def quantise(x_ptr, q_ptr, scale, N, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + offs, mask=offs < N, other=0.0) / scale
                q = tl.cast(tl.clamp(x, -128.0, 127.0), dtype=tl.int8)
                r = x.cast(tl.int8, overflow_mode="saturate")
                tl.store(q_ptr + offs, tl.cast(x, tl.int8, overflow_mode="trunc") + q + r, mask=offs < N)
            """
        ),
        Valid(
            """
            import torch
            import triton.language as tl

            TORCH_OF = {tl.float32: torch.float32}

            def host(x):
                bound = torch.float32
                return x.to(torch.float16), tl.float32, bound
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = self.facts.qualname(func)
        if name is None:
            if type(func) is cst.Attribute and func.attr.value in ("to", "cast"):
                mode = self._overflow_mode(node)
                if mode is not None and func.attr.value == "to":
                    self._report_to(node, func)
                elif mode is not None and self.settings["report-cast-overflow-mode"]:
                    self._report(mode, "cast-overflow-mode")
            return
        if not name.startswith("tl.") or self.facts.enclosing_kernel(node) is None:
            return
        short = name[3:]
        if short in _DTYPES:
            self._report_constructor(node)
        elif short == "cast" and self.settings["report-cast-overflow-mode"]:
            mode = self._overflow_mode(node)
            if mode is not None:
                self._report(mode, "cast-overflow-mode")

    def _overflow_mode(self, call: cst.Call) -> cst.Arg | None:
        if self.facts.enclosing_kernel(call) is None:
            return None
        return next((a for a in call.args if a.keyword is not None and a.keyword.value == "overflow_mode"), None)

    def _report(self, node: cst.CSTNode, key: str, **fix) -> None:
        construct = CONSTRUCTS[key]
        self.report(node, fix.pop("message", construct.message), severity=construct.severity, **fix)

    def _report_to(self, call: cst.Call, func: cst.Attribute) -> None:
        self._report(
            call,
            "to-overflow-mode",
            fix_message="Call `.cast(...)`, which takes `overflow_mode`",
            edits=lambda loc: [edits.replace(loc, func.attr, "cast")],
        )

    def _report_constructor(self, call: cst.Call) -> None:
        dtype_code = self.context.module.code_for_node(call.func)
        message = CONSTRUCTS["dtype-constructor"].message.format(call=dtype_code + "(...)")
        tl = self.facts.module_alias("tl")
        positional = [a for a in call.args if a.keyword is None and a.star == ""]
        if tl is None or len(positional) != 1 or len(call.args) != 1:
            self._report(call, "dtype-constructor", message=message)
            return
        value = self.context.module.code_for_node(positional[0].value)
        replacement = f"{tl}.full((), {value}, {dtype_code})"
        self._report(
            call,
            "dtype-constructor",
            message=message,
            fix_message=f"Replace with `{tl}.full((), ..., {dtype_code})`",
            edits=lambda loc: [edits.replace(loc, call, replacement)],
        )
