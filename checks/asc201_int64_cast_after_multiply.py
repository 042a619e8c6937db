import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_SUM = (cst.Add, cst.Subtract)


class Int64CastAfterMultiply(Rule):
    """Flags a product of 32-bit integers widened to int64 only after the multiplication.

    `(i_b * T).to(tl.int64)` and `tl.cast(a * b, tl.int64)` multiply in int32 first; the product can wrap before
    it is widened. Products inside `+`/`-` count too.
    """

    code = "ASC201"
    name = "int64-cast-after-multiply"
    message = "`{product}` is computed in int32 and may wrap before the cast to int64; cast a factor first"
    severity = Severity.ERROR
    fix_safety = FixSafety.SAFE
    why = """
        Index arithmetic in a Triton kernel is int32 unless an operand is int64. Casting the finished product
        widens a value that has already wrapped past 2^31, so offsets into large tensors silently point at the
        wrong memory (or outside the allocation, "DDR address out of range" on Ascend). Widening the first runtime
        factor makes the whole product 64-bit.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, BT: tl.constexpr):
                i_b = tl.program_id(0)
                base = (i_b * T).to(tl.int64)
                tl.store(x_ptr + base + tl.arange(0, BT), 0.0)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, BT: tl.constexpr):
                i_b = tl.program_id(0)
                base = tl.cast(i_b, tl.int64) * T
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
                d = x_ptr + (i_t * BT * DH).to(tl.int64) // 2
                tl.store(x_ptr + a + b + c + d, 0.0)
            """,
            count=4,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, DH, BT: tl.constexpr):
                NT = tl.cdiv(T, BT)
                i_t = tl.program_id(1)
                a = tl.cast(i_t, tl.int64) * BT
                b = tl.cast(NT - 1, tl.int64) * DH
                c = tl.cast(i_t, tl.int64) * T + 3
                d = x_ptr + (tl.cast(i_t, tl.int64) * BT * DH) // 2
                tl.store(x_ptr + a + b + c + d, 0.0)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, T, BT: tl.constexpr):
                i_b = tl.program_id(0)
                base = tl.cast(i_b, tl.int64) * T
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
            import torch

            def host(a, b):
                return (a * b).to(torch.int64)
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
        products = [p for p in _products(value) if self._wraps(analysis, p)]
        if not products:
            return
        module = self.context.module
        tl = self.facts.local_alias("tl", "tl")
        parent = self.context.index.parent(node)
        self.report(
            node,
            self.message.format(product=" ".join(module.code_for_node(products[0]).split())),
            fix_message="Cast the first runtime factor to int64 before multiplying",
            edits=lambda loc: [
                edits.replace(loc, node, _widened(module, analysis, value, products, tl, dtype, parent))
            ],
        )

    @staticmethod
    def _wraps(analysis, product: cst.BinaryOperation) -> bool:
        factors = _factors(product)
        if any(analysis.is_int64(f) or analysis.maybe_float(f) for f in factors):
            return False
        return any(not analysis.is_constexpr(f) for f in factors)


def _products(expr: cst.BaseExpression) -> list[cst.BinaryOperation]:
    """Top-level products of a sum: `a * b + c - d * e` -> [a * b, d * e]."""
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Multiply):
            return [expr]
        if isinstance(expr.operator, _SUM):
            return _products(expr.left) + _products(expr.right)
    return []


def _factors(product: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(product, cst.BinaryOperation) and isinstance(product.operator, cst.Multiply) and not product.lpar:
        return _factors(product.left) + _factors(product.right)
    if isinstance(product, cst.BinaryOperation) and isinstance(product.operator, cst.Multiply):
        return _factors(product.with_changes(lpar=[], rpar=[]))
    return [product]


def _widened(module, analysis, value, products, tl: str, dtype, parent) -> str:
    dtype_code = module.code_for_node(dtype)
    replacements = {}
    for product in products:
        first = next(f for f in _factors(product) if not analysis.is_constexpr(f))
        inner = module.code_for_node(first.with_changes(lpar=[], rpar=[]) if hasattr(first, "lpar") else first)
        replacements[first] = cst.parse_expression(f"{tl}.cast({inner}, {dtype_code})")
    new_value = value
    for old, new in replacements.items():
        new_value = new_value.deep_replace(old, new)
    keep_parens = isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Subscript,
                                      cst.Await, cst.Call))
    if isinstance(new_value, cst.BinaryOperation):
        if keep_parens and not new_value.lpar:
            new_value = new_value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        elif not keep_parens:
            new_value = new_value.with_changes(lpar=[], rpar=[])
    return module.code_for_node(new_value)
