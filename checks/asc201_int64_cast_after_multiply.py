import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_SUM = (cst.Add, cst.Subtract)


class Int64CastAfterMultiply(Rule):
    """Flags a product of 32-bit integers widened to int64 only after the multiplication, when the product can
    pass 2^31."""

    decides = """
    `((bos * H + i_h) * K).to(tl.int64)` and `tl.cast(a * b, tl.int64)` multiply in int32 first; the product can
    wrap before it is widened. Products inside `+`/`-` count too. Bounded products are left alone (see the
    magnitude model below): a token offset or chunk index (`(i_b * T).to(tl.int64)`,
    `(i_b * tl.cdiv(T, BT) + i_t).to(tl.int64)`), a tile id times its tile size (`i_d * BD`), a head index times a
    head dim, a core-grid program id times anything small.

    Magnitudes: a product is reported only when it can plausibly pass 2^31 at the shapes kernels are used for
    (about a million tokens per launch, tensors over 2^31 elements). Program ids are below 2^16 (a grid holds
    at most 65535 programs; a few dozen on a core grid), loop variables below their bounds, loaded offsets
    below 2^21, `x % n` below `n`, and integer parameters as large as their names say (`H` heads, `K`/`V`/`D`
    per-head sizes, `T` tokens, `stride_*` by the dimension they step over; 2^16 when the name says nothing).

    Token offsets and chunk indices are not findings on their own: a sequence index times the sequence length
    (`(i_b * T).to(tl.int64)`, `(i_b * T + T).to(tl.int64)`) is a token offset, and a sequence index times the
    chunks per sequence (`(i_b * tl.cdiv(T, BT) + i_t).to(tl.int64)`) a chunk index; both stay below the
    tokens of one launch (about 2^21) whatever the batch, also where the sequence index comes from a flattened
    task id (`i_b = i_chunk // tl.cdiv(T, BT)`) or `T` is rebound to a sequence's length on a varlen path. The
    cast is reported once a per-token extent sits inside it: a runtime extent other than the sequence length,
    a stride, or head counts and head dims whose product reaches 2^11 (`((bos * H + i_h) * K).to(tl.int64)`,
    `((i_tg * H + i_h) * K * V).to(tl.int64)`, `(i_b * T * stride_t).to(tl.int64)`).
    """

    code = "ASC201"
    name = "int64-cast-after-multiply"
    message = "`{product}` is computed in int32 and may wrap before the cast to int64; cast a factor first"
    severity = Severity.ERROR
    default = False
    opt_in_reason = (
        "its precision on real kernels is below the 90% bar: 10/10 on the tuning corpus but 0/2 held out (10/12), "
        "and every held-out finding is a bounded offset; see docs/precision-int-width-asc201.md"
    )
    fix_safety = FixSafety.SAFE
    why = """
        Index arithmetic in a Triton kernel is int32 unless an operand is int64. Casting the finished product
        widens a value that has already wrapped past 2^31, so offsets into large tensors silently point at the
        wrong memory (or outside the allocation, "DDR address out of range" on Ascend). Widening the first runtime
        factor makes the whole product 64-bit.
    """
    fix_notes = """
        The fix casts the first runtime factor of every product in the cast expression
        (`tl.cast(stride_h, tl.int64) * q_head + tl.cast(stride_z, tl.int64) * batch`), so no term of the sum stays
        32-bit.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, H, K, BT: tl.constexpr):
                i_b, i_h = tl.program_id(0), tl.program_id(1)
                base = ((i_b * T * H + i_h) * K).to(tl.int64)
                tl.store(x_ptr + base + tl.arange(0, BT), 0.0)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, H, K, BT: tl.constexpr):
                i_b, i_h = tl.program_id(0), tl.program_id(1)
                base = tl.cast(i_b * T * H + i_h, tl.int64) * K
                tl.store(x_ptr + base + tl.arange(0, BT), 0.0)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, DH, BT: tl.constexpr):
                NT = tl.cdiv(T, BT)
                i_t = tl.program_id(1)
                a = tl.cast(i_t * BT, tl.int64)
                b = ((NT - 1) * DH).to(tl.int64)
                c = (i_t * T + 3).to(tl.int64)
                d = (i_t * BT * DH).to(tl.int64) // 2
                tl.store(x_ptr + a + b + c + d, 0.0)
            """,
            count=3,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, DH, BT: tl.constexpr):
                NT = tl.cdiv(T, BT)
                i_t = tl.program_id(1)
                a = tl.cast(i_t * BT, tl.int64)
                b = tl.cast(NT - 1, tl.int64) * DH
                c = tl.cast(i_t, tl.int64) * T + 3
                d = (tl.cast(i_t, tl.int64) * BT * DH) // 2
                tl.store(x_ptr + a + b + c + d, 0.0)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, stride_z, stride_h, BLOCK: tl.constexpr):
                batch = tl.program_id(0)
                q_head = tl.program_id(1)
                offset = (stride_h * q_head + stride_z * batch).to(tl.int64)
                offs = tl.arange(0, BLOCK)
                tl.store(o + offset + offs, tl.load(q + offset + offs))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, stride_z, stride_h, BLOCK: tl.constexpr):
                batch = tl.program_id(0)
                q_head = tl.program_id(1)
                offset = tl.cast(stride_h, tl.int64) * q_head + tl.cast(stride_z, tl.int64) * batch
                offs = tl.arange(0, BLOCK)
                tl.store(o + offset + offs, tl.load(q + offset + offs))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, n_rows, n_cols, BLOCK: tl.constexpr):
                block_id = tl.program_id(0)
                rows = (tl.arange(0, BLOCK) + block_id * BLOCK * n_cols).to(tl.int64)
                tl.store(o + rows, tl.load(x + rows))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, n_rows, n_cols, BLOCK: tl.constexpr):
                block_id = tl.program_id(0)
                rows = tl.arange(0, BLOCK) + tl.cast(block_id, tl.int64) * BLOCK * n_cols
                tl.store(o + rows, tl.load(x + rows))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(h_ptr, x_ptr, T, stride_t, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
                i_t, i_nh = tl.program_id(0), tl.program_id(1)
                i_n, i_h = i_nh // H, i_nh % H
                i_tg = i_n * tl.cdiv(T, BT) + i_t
                h_ptr += ((i_tg * H + i_h) * K * V).to(tl.int64)
                x_ptr += (i_n * T * stride_t).to(tl.int64)
                tl.store(h_ptr + tl.arange(0, K)[:, None] * V + tl.arange(0, V)[None, :], 0.0)
                tl.store(x_ptr + (i_t * BT + tl.arange(0, BT)) * stride_t, tl.zeros([BT], dtype=tl.float32))
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(h_ptr, x_ptr, T, stride_t, H: tl.constexpr, K: tl.constexpr, V: tl.constexpr, BT: tl.constexpr):
                i_t, i_nh = tl.program_id(0), tl.program_id(1)
                i_n, i_h = i_nh // H, i_nh % H
                i_tg = i_n * tl.cdiv(T, BT) + i_t
                h_ptr += tl.cast(i_tg * H + i_h, tl.int64) * K * V
                x_ptr += tl.cast(i_n, tl.int64) * T * stride_t
                tl.store(h_ptr + tl.arange(0, K)[:, None] * V + tl.arange(0, V)[None, :], 0.0)
                tl.store(x_ptr + (i_t * BT + tl.arange(0, BT)) * stride_t, tl.zeros([BT], dtype=tl.float32))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, H, K, BT: tl.constexpr):
                i_b, i_h = tl.program_id(0), tl.program_id(1)
                bos = (i_b * T).to(tl.int64)
                base = (bos * H + i_h) * K
                tl.store(x_ptr + base + tl.arange(0, BT), 0.0)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T):
                i_b = tl.program_id(0).to(tl.int64)
                a = (i_b * T).to(tl.int64)
                x = tl.load(x_ptr)
                q = (x * 3.0).to(tl.int64)
                s = (tl.load(y_ptr) * 2).to(tl.int64)
                r = (i_b + T).to(tl.int64)
                tl.store(x_ptr + a + q + s + r, 0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, D: tl.constexpr, BT: tl.constexpr, BD: tl.constexpr):
                i_chunk, i_d = tl.program_id(0), tl.program_id(1)
                NT = tl.cdiv(T, BT)
                i_b, i_t = i_chunk // NT, i_chunk % NT
                bos = (i_b * T).to(tl.int64)
                eos = (i_b * T + T).to(tl.int64)
                rows = bos + i_t * BT + tl.arange(0, BT)
                cols = i_d * BD + tl.arange(0, BD)
                tl.store(x_ptr + rows[:, None] * D + cols[None, :], 0.0, mask=(rows < eos)[:, None])
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(h_ptr, cu_seqlens, chunk_offsets, T, B, n_tasks, H: tl.constexpr, K: tl.constexpr,
                       V: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    i_t, i_nh = task // (B * H), task % (B * H)
                    i_n, i_h = i_nh // H, i_nh % H
                    if IS_VARLEN:
                        bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                        T = tl.load(cu_seqlens + i_n + 1).to(tl.int32) - bos
                        i_tg = tl.load(chunk_offsets + i_n).to(tl.int64) + i_t
                    else:
                        i_tg = (i_n * tl.cdiv(T, BT) + i_t).to(tl.int64)
                    h = h_ptr + (i_tg * H + i_h) * K * V
                    tl.store(h + tl.arange(0, K)[:, None] * V + tl.arange(0, V)[None, :], 0.0)
            """
        ),
        Valid(
            """
            import torch

            def host(a, b):
                return (a * b).to(torch.int64)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, HV, K, V, D, BD: tl.constexpr):
                i_d, i_tg, i_h = tl.program_id(0), tl.program_id(1), tl.program_id(2)
                o_d = (i_d * BD + tl.arange(0, BD)).to(tl.int64)
                head = (i_tg * HV + i_h).to(tl.int64) * K * V
                per_head = (i_h * D).to(tl.int64)
                tl.store(o + head + per_head + o_d, tl.load(x + o_d, mask=o_d < D))
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        if not analysis.is_widening_cast(node):
            return
        value, dtype = analysis.cast_target(node)
        products = [p for p in _products(value) if _runtime_factor(analysis, p) is not None]
        wrapping = [p for p in products if analysis.can_wrap(p)]
        if not wrapping:
            return
        module = self.context.module
        tl = self.facts.local_alias("tl", "tl")
        parent = self.context.index.parent(node)
        self.report(
            node,
            self.message.format(product=" ".join(module.code_for_node(wrapping[0]).split())),
            fix_message="Cast the first runtime factor of each product to int64 before multiplying",
            edits=lambda loc: [
                edits.replace(loc, node, _widened(module, analysis, value, products, tl, dtype, parent))
            ],
        )


def _products(expr: cst.BaseExpression) -> list[cst.BinaryOperation]:
    """Top-level products of a sum: `a * b + c - d * e` -> [a * b, d * e] (iterative: sums can be long)."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation:
            if type(node.operator) is cst.Multiply:
                found.append(node)
            elif isinstance(node.operator, _SUM):
                stack += [node.right, node.left]
    return found


def _factors(product: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The factors of a product, through parentheses, in source order."""
    found, stack = [], [product]
    while stack:
        node = stack.pop()
        if type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply:
            stack += [node.right, node.left]
        else:
            found.append(node)
    return found


def _runtime_factor(analysis, product: cst.BinaryOperation) -> cst.BaseExpression | None:
    """The first factor known only at run time, or None when the product cannot wrap in int32 (a factor is
    already int64 or floating point, or every factor is a compile-time constant)."""
    factors = _factors(product)
    if any(analysis.may_be_int64(f) or analysis.maybe_float(f) for f in factors):
        return None
    return next((f for f in factors if not analysis.is_compile_time(f)), None)


class _Replace(cst.CSTTransformer):
    """Replaces nodes by identity in one pass (a chain of ``deep_replace`` calls would lose later targets)."""

    def __init__(self, replacements: dict[int, cst.BaseExpression]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def _widening_targets(analysis, product: cst.BinaryOperation) -> list[cst.BaseExpression]:
    """The factor to cast in ``product``: its first runtime factor, or, when that factor is itself a sum that can
    wrap in int32, the first runtime factors of the products inside it."""
    first = _runtime_factor(analysis, product)
    if type(first) is cst.BinaryOperation and analysis.can_wrap(first):
        inner = [p for p in _products(first) if _runtime_factor(analysis, p) is not None]
        if inner:
            return [target for p in inner for target in _widening_targets(analysis, p)]
    return [first]


def _widened(module, analysis, value, products, tl: str, dtype, parent) -> str:
    dtype_code = module.code_for_node(dtype)
    replacements = {}
    for first in (target for product in products for target in _widening_targets(analysis, product)):
        inner = module.code_for_node(first.with_changes(lpar=[], rpar=[]) if getattr(first, "lpar", None) else first)
        replacements[id(first)] = cst.parse_expression(f"{tl}.cast({inner}, {dtype_code})")
    new_value = value.visit(_Replace(replacements))
    keep_parens = type(parent) in (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Subscript, cst.Await, cst.Call)
    if type(new_value) is cst.BinaryOperation:
        if keep_parens and not new_value.lpar:
            new_value = new_value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        elif not keep_parens:
            new_value = new_value.with_changes(lpar=[], rpar=[])
    return module.code_for_node(new_value)
