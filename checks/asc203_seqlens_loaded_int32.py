import libcst as cst

from ascendlint import edits
from ascendlint.analysis.values import argument
from ascendlint.diagnostics import Applicability, FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class SeqlensLoadedInt32(Rule):
    """Flags a loaded offset narrowed with `.to(tl.int32)` (or `tl.cast(.., tl.int32)`) that then reaches a
    product in pointer arithmetic.

    The rule follows the data, not array names: a value loaded from any array, narrowed, and multiplied (directly
    or through other names) in the offset of a pointer. Narrowing a difference such as
    `T = (eos - bos).to(tl.int32)`, a bound used only in masks or lengths, or a small index added to a pointer
    without a multiplication, is fine.
    """

    code = "ASC203"
    name = "seqlens-loaded-int32"
    message = "`{call}` narrows a loaded offset to 32 bits and it is multiplied in pointer arithmetic; load it as int64"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = """
        Sequence starts loaded from `cu_seqlens` or chunk-offset arrays are token positions over the whole
        packed batch. Narrowed to int32, every product computed from them (`bos * H * K`) is 32-bit and wraps
        long before `bos` itself reaches 2^31, so the kernel reads or writes the wrong tokens, or faults with
        "DDR address out of range" on Ascend.
    """
    fix_notes = """
        The fix loads the value as `tl.int64`. Values computed from it become int64 too: narrow lengths such as
        `T = (eos - bos).to(tl.int32)` before they reach block pointer offsets (ASC103 reports them).
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                T = eos - bos
                o_t = tl.arange(0, BT)
                b_x = tl.load(x + (bos + o_t[:, None]) * H * K + i_h * K, mask=o_t[:, None] < T)
                tl.store(o + i_n * BT + o_t, tl.sum(b_x, 1))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                T = (eos - bos).to(tl.int32)
                o_t = tl.arange(0, BT)
                b_x = tl.load(x + (bos + o_t[:, None]) * H * K + i_h * K, mask=o_t[:, None] < T)
                tl.store(o + i_n * BT + o_t, tl.sum(b_x, 1))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(x, o, chunk_indices, chunk_offsets, D: language.constexpr):
                i_c = language.program_id(0)
                i_n, i_t = (
                    language.load(chunk_indices + i_c * 2).to(language.int32),
                    language.load(chunk_indices + i_c * 2 + 1).to(language.int32),
                )
                start = language.load(chunk_offsets + i_n)
                start = language.cast(start, language.int32)
                row = start + i_t
                p = language.make_block_ptr(x + row * D, (1, D), (D, 1), (0, 0), (1, D), (1, 0))
                language.store(o + i_c, language.sum(language.load(p, boundary_check=(0, 1))))
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as language

            @triton.jit
            def kernel(x, o, chunk_indices, chunk_offsets, D: language.constexpr):
                i_c = language.program_id(0)
                i_n, i_t = (
                    language.load(chunk_indices + i_c * 2).to(language.int32),
                    language.load(chunk_indices + i_c * 2 + 1).to(language.int64),
                )
                start = language.load(chunk_offsets + i_n)
                start = language.cast(start, language.int64)
                row = start + i_t
                p = language.make_block_ptr(x + row * D, (1, D), (D, 1), (0, 0), (1, D), (1, 0))
                language.store(o + i_c, language.sum(language.load(p, boundary_check=(0, 1))))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, chunk_indices, T, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
                i_c, i_h = tl.program_id(0), tl.program_id(1)
                i_t = tl.load(chunk_indices + i_c).to(tl.int32)
                p_x = tl.make_block_ptr(x + i_h * D, (T, D), (H * D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                b_x = tl.load(p_x, boundary_check=(0, 1))
                o_t = i_t * BT + tl.arange(0, BT)
                tl.store(o + o_t * H + i_h, tl.sum(b_x, 1), mask=o_t < T)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                T = eos - bos
                o_t = tl.arange(0, BT)
                b_x = tl.load(x + bos + i_h * T + o_t, mask=o_t < T)
                tl.store(o + bos + i_h * T + o_t, b_x * 2, mask=o_t < T)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
                T = (eos - bos).to(tl.int32)
                o_t = tl.arange(0, BT)
                b_x = tl.load(x + (bos + o_t[:, None]) * H * K + i_h * K, mask=o_t[:, None] < T)
                tl.store(o + i_n * BT + o_t, tl.sum(b_x, 1))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, lengths, BT: tl.constexpr):
                i_n = tl.program_id(0)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                n = tl.load(lengths + i_n).to(tl.int32)
                o_t = tl.arange(0, BT)
                b_x = tl.load(x + bos + o_t, mask=(o_t < n) & (bos + o_t < eos))
                tl.store(o + bos + o_t, b_x, mask=o_t < n)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, BT: tl.constexpr):
                i_n = tl.program_id(0)
                bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                bos = bos.to(tl.int64)
                offset = tl.load(cu_seqlens + i_n).to(tl.int32).to(tl.int64) * H
                tl.store(o + bos * H + offset + tl.arange(0, BT), tl.load(x + i_n))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, w, BT: tl.constexpr):
                i_n = tl.program_id(0)
                b_w = tl.load(w + i_n * BT + tl.arange(0, BT)).to(tl.int32)
                tl.store(o + i_n, tl.sum(b_w, 0))
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        analysis = self.context.analysis(kernel)
        reported: set[int] = set()
        block_sources = _block_offset_sources(analysis)
        offsets = [offset for _, found in analysis.pointer_expressions for offset in found]
        factors = []
        for product in analysis.offset_nodes(offsets):
            if isinstance(product, cst.BinaryOperation) and isinstance(product.operator, cst.Multiply):
                factors += [product.left, product.right]
        for leaf in analysis.offset_nodes(factors, stop=lambda node: _is_length(analysis, node)):
            if id(leaf) not in reported and _narrowed_load(analysis, leaf):
                reported.add(id(leaf))
                self._report(analysis, leaf, reaches_block_offsets=id(leaf) in block_sources)

    def _report(self, analysis, call: cst.Call, reaches_block_offsets: bool) -> None:
        _, dtype = analysis.cast_target(call)
        tl = self.facts.local_alias("tl", "tl")
        module = self.context.module
        lengths = _lengths_computed_from(analysis, call)

        def build(loc):
            found = [edits.replace(loc, dtype, f"{tl}.int64")]
            for length in lengths:
                found.append(edits.replace(loc, length, f"({module.code_for_node(length)}).to({tl}.int32)"))
            return found

        self.report(
            call,
            self.message.format(call=_short(module.code_for_node(call))),
            fix_message="Load the offset as int64" + (" and narrow the lengths computed from it" if lengths else ""),
            edits=build,
            # a widened value that also sizes block pointer offsets turns them int64, which Ascend rejects (ASC103)
            applicability=Applicability.UNSAFE if reaches_block_offsets else None,
        )


def _lengths_computed_from(analysis, call: cst.Call) -> list[cst.BinaryOperation]:
    """`eos - bos` differences assigned to a name and computed from ``call``: once the load is int64 they would be
    int64 too, and a length belongs in int32 (it sizes tiles, loops and block pointer shapes)."""
    found = []
    for node in analysis.nodes:
        named = isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
        if not named:
            continue
        value = node.value
        if _is_length(analysis, value) and any(n is call for n in analysis.offset_nodes([value.left, value.right])):
            found.append(value)
    return found


def _block_offset_sources(analysis) -> set[int]:
    """Every expression the offsets or block shape of a block pointer are computed from, through names, loop bounds
    and calls such as `tl.cdiv`; a cast or a length (`eos - bos`, narrowed by the fix) ends the walk."""
    facts = analysis.facts
    stack = []
    for node in analysis.nodes:
        if facts.is_call_to(node, "tl.make_block_ptr"):
            stack += [argument(node, 3, "offsets"), argument(node, 4, "block_shape")]
        elif facts.is_call_to(node, "tl.advance"):
            stack.append(argument(node, 1, "offsets"))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if _is_length(analysis, node):
            continue
        if isinstance(node, (cst.Tuple, cst.List)):
            stack += [element.value for element in node.elements]
        elif isinstance(node, cst.BinaryOperation):
            stack += [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
        elif isinstance(node, cst.Subscript):
            stack.append(node.value)
        elif isinstance(node, cst.IfExp):
            stack += [node.body, node.orelse]
        elif isinstance(node, cst.Call) and analysis.cast_target(node) is None:
            stack += [a.value for a in node.args]
        elif isinstance(node, cst.Name):
            for definition in analysis.definitions(node):
                if definition.kind in ("assign", "augmented", "loop"):
                    stack.append(definition.value)
                if definition.kind == "augmented":
                    stack.append(definition.statement.target)  # `p += step` also keeps what `p` was
    return seen


def _is_length(analysis, node) -> bool:
    """`eos - bos` of two loaded positions is a length: it fits 32 bits whatever the positions are."""
    return (
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Subtract)
        and analysis.is_loaded(node.left)
        and analysis.is_loaded(node.right)
    )


def _narrowed_load(analysis, node) -> bool:
    """A narrowing cast of a value that is itself loaded (not of arithmetic such as `eos - bos`)."""
    if not isinstance(node, cst.Call) or not analysis.is_narrowing_cast(node):
        return False
    return _loaded(analysis, analysis.cast_target(node)[0], 0)


def _loaded(analysis, value: cst.BaseExpression, depth: int) -> bool:
    if analysis.facts.is_call_to(value, "tl.load"):
        return True
    if isinstance(value, cst.Call) and analysis.cast_target(value) is not None and depth < 4:
        return _loaded(analysis, analysis.cast_target(value)[0], depth + 1)
    if isinstance(value, cst.Name) and depth < 4:
        definitions = analysis.definitions(value)
        return bool(definitions) and all(
            d.kind == "assign" and d.value is not None and _loaded(analysis, d.value, depth + 1) for d in definitions
        )
    return False


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."
