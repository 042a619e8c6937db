from __future__ import annotations

import libcst as cst

from ascendlint.analysis.values import KernelAnalysis, argument
from ascendlint.analysis.block_pointers import block_pointer_origins
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_BLOCK, _MASKED = "block pointer", "masked pointer"
_MASK_POSITION = {"tl.load": 1, "tl.store": 2}
_DEPTH = 8
_POINTER_HINTS = {"tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"}


class RuntimeDualDmaPath(Rule):
    """Flags a runtime `if` whose branches move the same tensor by a block pointer in one branch and by a
    masked pointer `tl.load` / `tl.store` in the other.

    An `if` on constexprs only is resolved at compile time and is fine; so is a block-pointer load in one
    branch against a zero fill (`tl.zeros`) in the other.
    """

    code = "ASC302"
    name = "runtime-dual-dma-path"
    message = "runtime `if` moves `{base}` by a block pointer in one branch and a masked pointer in the other"
    severity = Severity.WARNING
    fix_safety = FixSafety.NONE
    why = """
        Both branches of a runtime condition are compiled, so the kernel keeps the buffers of both DMA paths (the
        block-pointer transfer and the masked gather) alive in the Unified Buffer at once. Peak UB use is their sum:
        larger tiles stop fitting, and the vector units wait on the extra transfers.
    """
    fix_notes = """
        Choose the path with a `tl.constexpr` (for example a `TAIL: tl.constexpr` mode launched separately for the
        last tile) so that each compiled kernel holds only one path, or use one path with `boundary_check`.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                if (i_t + 1) * BT <= T:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.load(p, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))
                else:
                    rows = i_t * BT + tl.arange(0, BT)
                    ptrs = x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :]
                    tl.store(ptrs, tl.load(ptrs, mask=rows[:, None] < T) * 2, mask=rows[:, None] < T)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def tile_ptr(base, T, D, i_t, BT: language.constexpr, BD: language.constexpr):
                return language.make_block_ptr(base, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))

            @triton.jit
            def copy(x_ptr, y_ptr, T, D, full, BT: language.constexpr, BD: language.constexpr):
                i_t = language.program_id(0)
                x_base = x_ptr + 0
                if full:
                    b = language.load(tile_ptr(x_base, T, D, i_t, BT, BD), boundary_check=(0, 1))
                elif i_t < T:
                    offs = i_t * BT + language.arange(0, BT)
                    b = language.load(
                        x_ptr + offs[:, None] * D + language.arange(0, BD)[None, :],
                        mask=offs[:, None] < T,
                        other=0.0,
                    )
                else:
                    b = language.zeros((BT, BD), dtype=language.float32)
                p_y = language.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                language.store(p_y, b, boundary_check=(0, 1))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, TAIL: tl.constexpr):
                i_t = tl.program_id(0)
                if not TAIL:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.load(p, boundary_check=(0, 1)) * 2, boundary_check=(0, 1))
                else:
                    rows = i_t * BT + tl.arange(0, BT)
                    ptrs = x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :]
                    tl.store(ptrs, tl.load(ptrs, mask=rows[:, None] < T) * 2, mask=rows[:, None] < T)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def load_or_zero(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
                i_t = tl.program_id(0)
                p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                if i_t * BT < T:
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    b = tl.load(p_x, boundary_check=(0, 1))
                else:
                    b = tl.zeros((BT, BD), dtype=tl.float32)
                tl.store(p_y, b, boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def two_tensors(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, MODE: tl.constexpr):
                i_t = tl.program_id(0)
                offs = i_t * BT + tl.arange(0, BT)
                if i_t * BT < T:
                    p_x = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    b = tl.load(p_x, boundary_check=(0, 1))
                else:
                    b = tl.load(y_ptr + offs[:, None] * D + tl.arange(0, BD)[None, :], mask=offs[:, None] < T)
                if MODE == 1 and BD > 16:
                    tl.store(y_ptr + offs[:, None] * D, b, mask=offs[:, None] < T)
                else:
                    p_y = tl.make_block_ptr(y_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p_y, b, boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def both_masked(x_ptr, T, BT: tl.constexpr):
                offs = tl.program_id(0) * BT + tl.arange(0, BT)
                if tl.program_id(0) == 0:
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < T) + 1, mask=offs < T)
                else:
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < T) - 1, mask=offs < T)
            """
        ),
    ]

    def visit_If(self, node: cst.If) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None or node.orelse is None:
            return
        analysis = self.context.analysis(kernel)
        if analysis.is_constexpr(node.test):
            return
        index = self.context.index
        nodes = index.subtree(node)
        split = index.order(node.orelse) - index.order(node)
        origins = block_pointer_origins(self.context, kernel)
        taken = self._paths(analysis, origins, nodes[1:split])
        other = self._paths(analysis, origins, nodes[split:])
        for base in sorted(taken.keys() & other.keys()):
            block_then_masked = _BLOCK in taken[base] and _MASKED in other[base]
            if block_then_masked or (_MASKED in taken[base] and _BLOCK in other[base]):
                self.report(node, self.message.format(base=base))
                return

    def _paths(self, analysis: KernelAnalysis, origins, nodes) -> dict[str, set[str]]:
        """Base pointer parameter -> DMA paths that load or store it among ``nodes``."""
        paths: dict[str, set[str]] = {}
        for node in nodes:
            if not isinstance(node, cst.Call):
                continue
            op = self.facts.qualname(node.func)
            if op not in _MASK_POSITION:
                continue
            pointer = argument(node, 0, "pointer")
            blocks = origins.of(pointer)
            if blocks:
                for block in blocks:
                    # a block made in a jit helper is traced through the helper call's first argument instead
                    local = self.facts.enclosing_kernel(block) is analysis.kernel
                    for base in _roots(analysis, argument(block, 0, "base") if local else pointer):
                        paths.setdefault(base, set()).add(_BLOCK)
            elif argument(node, _MASK_POSITION[op], "mask") is not None:
                for base in _roots(analysis, pointer):
                    paths.setdefault(base, set()).add(_MASKED)
        return paths


def _roots(analysis: KernelAnalysis, expr, depth: int = 0) -> set[str]:
    """Pointer parameters an address expression is built from (through local names and arithmetic)."""
    if expr is None or depth > _DEPTH:
        return set()
    if isinstance(expr, cst.Name):
        if analysis.is_param(expr.value):
            return {expr.value} if expr.value in analysis.pointer_params else set()
        found: set[str] = set()
        for value in analysis.assignments.get(expr.value, ()):
            if isinstance(value, cst.BaseExpression):
                found |= _roots(analysis, value, depth + 1)
        return found
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _roots(analysis, expr.left, depth + 1) | _roots(analysis, expr.right, depth + 1)
    if isinstance(expr, cst.Call) and expr.args and _passes_pointer_through(analysis, expr):
        return _roots(analysis, expr.args[0].value, depth + 1)
    return set()


def _passes_pointer_through(analysis: KernelAnalysis, call: cst.Call) -> bool:
    """A jit helper taking the base pointer first (``tile_ptr(x_base, ...)``) or a hint such as ``tl.multiple_of``;
    a loaded index (``tl.load(idx_ptr + i)``) is data, not the address's base."""
    func = call.func
    if isinstance(func, cst.Name) and func.value in analysis.facts.kernels:
        return True
    return analysis.facts.qualname(func) in _POINTER_HINTS
