import libcst as cst

from ascendlint.analysis.syntax import argument
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

# Positions and keywords of the arguments that must stay 32-bit.
_CHECKED = {
    "tl.make_block_ptr": (("offsets", 3), ("block_shape", 4)),
    "tl.advance": (("offsets", 1),),
}


class BlockPtrInt64Offsets(Rule):
    """Flags an int64 element in the `offsets` or `block_shape` of `tl.make_block_ptr` or in `tl.advance`."""

    decides = """
    An element counts as int64 when it is a `tl.cast(.., tl.int64)` / `.to(tl.int64)`, arithmetic with such a
    value, a variable assigned from one, or a loop variable whose bounds are int64.
    """

    code = "ASC103"
    name = "block-ptr-int64-offsets"
    message = "`{element}` is int64, but block pointer {argument} must be int32; put the 64-bit part in the base pointer"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    why = """
        Block pointers carry 32-bit offsets and block shapes: the compiler rejects an int64 element with
        `Block pointers only support 32 bit offsets/block_shape`. A large 64-bit position belongs in the flattened
        base pointer (`base + bos * D` computed in int64), while the offsets keep the small in-tile position
        (`i_t * BT`) in int32.
    """
    fix_notes = """
        Move the int64 term into the `base` argument (`x + tl.cast(bos, tl.int64) * D`) and keep the offsets
        32-bit. There is no automatic fix: which term is large depends on the tensor layout.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0).to(tl.int64)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                tl.store(y_ptr + tl.arange(0, D), tl.sum(tl.load(p_x, boundary_check=(0, 1)), 0))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(x_ptr, y_ptr, cu_ptr, D: language.constexpr, BT: language.constexpr):
                i_n = language.program_id(0)
                bos = language.load(cu_ptr + i_n).to(language.int64)
                start = language.cast(bos, language.int64)
                p_x = language.make_block_ptr(
                    base=x_ptr,
                    shape=(bos + BT, D),
                    strides=(D, 1),
                    offsets=(start, 0),
                    block_shape=(BT, D),
                    order=(1, 0),
                )
                p_x = language.advance(p_x, (bos, 0))
                language.store(y_ptr, language.sum(language.load(p_x, boundary_check=(0, 1))))
            """,
            count=2,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                n_tiles = tl.cdiv(T, BT).to(tl.int64)
                offsets = (0, 0)
                for i in range(0, n_tiles):
                    offs = (i * BT, 0)
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), offs, (BT, D), (1, 0))
                    tl.store(y_ptr + i, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def step(p, rows):
                return tl.advance(p, (rows.to(tl.int64), 0))

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                p_x = step(p_x, i_t)
                tl.store(y_ptr, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                tl.store(y_ptr + tl.arange(0, D), tl.sum(tl.load(p_x, boundary_check=(0, 1)), 0))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, cu_ptr, D: tl.constexpr, BT: tl.constexpr):
                i_n, i_t = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_ptr + i_n).to(tl.int64)
                eos = tl.load(cu_ptr + i_n + 1).to(tl.int64)
                T = (eos - bos).to(tl.int32)
                p_x = tl.make_block_ptr(x_ptr + bos * D, (T, D), (D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                p_x = tl.advance(p_x, (BT, 0))
                tl.store(y_ptr + bos, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0).to(tl.int64)
                row = (i_t * BT).to(tl.int32)
                if i_t > 4:
                    row = 0
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (row, 0), (BT, D), (1, 0))
                for k in range(0, tl.cdiv(T, BT)):
                    p_x = tl.advance(p_x, (k * BT, 0))
                tl.store(y_ptr, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D: tl.constexpr, BT: tl.constexpr):
                base = tl.program_id(0).to(tl.int64) * T * D
                base = 0
                p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (base, 0), (BT, D), (1, 0))
                tl.store(y_ptr, tl.sum(tl.load(p_x, boundary_check=(0, 1))))
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        checked = _CHECKED.get(self.facts.qualname(node.func) or "")
        if checked is None:
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        analysis = self.context.analysis(kernel)
        module = self.context.module
        for keyword, position in checked:
            for element in _elements(analysis, argument(node, position, keyword)):
                if analysis.may_be_int64(element):
                    shown = " ".join(module.code_for_node(element).split())
                    self.report(element, self.message.format(element=shown, argument=f"`{keyword}`"))


def _elements(analysis, value: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The elements of a tuple argument, also when it is a name bound to a tuple literal."""
    if type(value) in (cst.Tuple, cst.List):
        return [e.value for e in value.elements]
    if type(value) is cst.Name:
        found = []
        for definition in analysis.definitions(value):
            if definition.kind == "assign" and type(definition.value) in (cst.Tuple, cst.List):
                found.extend(e.value for e in definition.value.elements)
        return found
    return []
