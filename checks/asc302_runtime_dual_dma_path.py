from __future__ import annotations

import libcst as cst

from ascendlint.analysis.syntax import argument
from ascendlint.analysis.values import KernelAnalysis
from ascendlint.analysis.block_pointers import block_pointer_origins
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_BLOCK, _MASKED = "block pointer", "masked pointer"
_MASK_POSITION = {"tl.load": 1, "tl.store": 2}
_DEPTH = 8
_POINTER_HINTS = {"tl.multiple_of", "tl.max_contiguous", "tl.max_constancy"}


class RuntimeDualDmaPath(Rule):
    """Flags a runtime `if` whose branches move the same tensor by a block pointer in one branch and by a
    masked pointer `tl.load` / `tl.store` in the other."""

    decides = """
    An `if` decided at compile time is fine: on constexprs, on a flag assigned only constants
    (`is_tail = False`), or on a flag that each constexpr mode sets to a constant except the one mode kept as the
    runtime fallback (`if TAIL_MODE == 0: is_tail = False` / `elif TAIL_MODE == 1: is_tail = True` /
    `else: is_tail = t0 + BT > T`): every other mode compiles one path. Loads and stores under such a mode
    condition are compared mode by mode, so two branches that each pick by `is_tail` hold one path per compiled
    mode. Not reported either: a block-pointer load in one branch against a zero fill (`tl.zeros`) in the other,
    and a branch that adds a masked edge load (the first rows of a sequence) next to the block-pointer path that
    both branches use: the runtime `if` does not choose between the two paths there.
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
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, MODE: tl.constexpr):
                i_t = tl.program_id(0)
                if MODE == 0:
                    is_tail = (i_t + 1) * BT > T
                else:
                    is_tail = i_t * BT + BT > T - 1
                if is_tail:
                    rows = i_t * BT + tl.arange(0, BT)
                    tl.store(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], 0.0, mask=rows[:, None] < T)
                else:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32), boundary_check=(0, 1))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                i_t = tl.program_id(0)
                if TAIL_MODE == 0:
                    is_tail = False
                else:
                    is_tail = (i_t + 1) * BT > T
                if is_tail or i_t == 0:
                    rows = i_t * BT + tl.arange(0, BT)
                    tl.store(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], 0.0, mask=rows[:, None] < T)
                else:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32), boundary_check=(0, 1))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def head_or_bulk(x_ptr, T, D, W, BT: tl.constexpr, BD: tl.constexpr, HAS_X: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if t0 >= W:
                    if HAS_X:
                        p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0))
                        b = tl.load(p, boundary_check=(0, 1))
                else:
                    if HAS_X:
                        rows = t0 + tl.arange(0, BT)
                        b = tl.load(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < T)
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
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                # TAIL_MODE: 0 = bulk launch (block pointers), 1 = tail launch (masked), 2 = runtime (varlen)
                i_t = tl.program_id(0)
                if TAIL_MODE == 0:
                    is_tail = False
                elif TAIL_MODE == 1:
                    is_tail = True
                else:
                    is_tail = (i_t + 1) * BT > T
                if is_tail:
                    rows = i_t * BT + tl.arange(0, BT)
                    tl.store(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], 0.0, mask=rows[:, None] < T)
                else:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32), boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_rows(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr, FULL: tl.constexpr):
                i_t = tl.program_id(0)
                is_tail = True
                if FULL:
                    is_tail = False
                if is_tail:
                    rows = i_t * BT + tl.arange(0, BT)
                    tl.store(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], 0.0, mask=rows[:, None] < T)
                else:
                    p = tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
                    tl.store(p, tl.zeros((BT, BD), dtype=tl.float32), boundary_check=(0, 1))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def shifted(x_ptr, T, D, W, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if TAIL_MODE == 0:
                    is_tail = False
                else:
                    is_tail = t0 + BT > T
                rows = t0 + tl.arange(0, BT)
                if t0 >= W:
                    if is_tail:
                        b = tl.load(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < T)
                    else:
                        b = tl.load(tl.make_block_ptr(x_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0)),
                                    boundary_check=(0, 1))
                else:
                    if is_tail:
                        b = tl.load(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < W)
                    else:
                        b = tl.zeros((BT, BD), dtype=tl.float32)
                tl.store(x_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], b, mask=rows[:, None] < T)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def conv_bwd(dy_ptr, T, D, W, BT: tl.constexpr, BD: tl.constexpr, TAIL_MODE: tl.constexpr):
                t0 = tl.program_id(0) * BT
                if TAIL_MODE == 0:
                    is_tail = False
                else:
                    is_tail = t0 + BT > T
                rows = t0 + tl.arange(0, BT)
                p = tl.make_block_ptr(dy_ptr, (T, D), (D, 1), (t0, 0), (BT, BD), (1, 0))
                if t0 >= W:
                    if is_tail:
                        b = tl.load(dy_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < T)
                    else:
                        b = tl.load(p, boundary_check=(0, 1))
                else:
                    if is_tail:
                        b = tl.load(dy_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < T)
                    else:
                        b = tl.load(p, boundary_check=(0, 1))
                    head = tl.load(dy_ptr + rows[:, None] * D + tl.arange(0, BD)[None, :], mask=rows[:, None] < W)
                    b += head
                tl.store(p, b, boundary_check=(0, 1))
            """
        ),
    ]

    def visit_If(self, node: cst.If) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None or node.orelse is None:
            return
        analysis = self.context.analysis(kernel)
        if _folds_per_mode(analysis, node.test):
            return
        index = self.context.index
        nodes = index.subtree(node)
        split = index.order(node.orelse) - index.order(node)
        origins = block_pointer_origins(self.context, kernel)
        taken = self._paths(analysis, origins, nodes[1:split], node)
        other = self._paths(analysis, origins, nodes[split:], node)
        for base in sorted(taken.keys() & other.keys()):
            if _dual(taken[base], other[base]) or _dual(other[base], taken[base]):
                self.report(node, self.message.format(base=base))
                return

    def _paths(self, analysis: KernelAnalysis, origins, nodes, outer: cst.If) -> dict[str, list[tuple[str, dict]]]:
        """Base pointer parameter -> (DMA path, modes) of each load or store of it among ``nodes``; the modes are
        the compile-time choices (``if TAIL_MODE == 0``, ``if is_tail_chunk`` set per mode) that select it."""
        paths: dict[str, list[tuple[str, dict]]] = {}
        for node in nodes:
            if type(node) is not cst.Call:
                continue
            op = self.facts.qualname(node.func)
            if op not in _MASK_POSITION:
                continue
            pointer = argument(node, 0, "pointer")
            blocks = origins.of(pointer)
            found: list[tuple[str, str]] = []
            if blocks:
                for block in blocks:
                    # a block made in a jit helper is traced through the helper call's first argument instead
                    local = self.facts.enclosing_kernel(block) is analysis.kernel
                    found += [(base, _BLOCK) for base in _roots(analysis, argument(block, 0, "base") if local else pointer)]
            elif argument(node, _MASK_POSITION[op], "mask") is not None:
                found += [(base, _MASKED) for base in _roots(analysis, pointer)]
            if found:
                modes = self._modes(analysis, node, outer)
                for base, path in found:
                    paths.setdefault(base, []).append((path, modes))
        return paths

    def _modes(self, analysis: KernelAnalysis, node: cst.CSTNode, outer: cst.If) -> dict[str, str]:
        """The compile-time conditions between ``outer`` and ``node``: condition source -> branch taken."""
        modes: dict[str, str] = {}
        child = node
        for ancestor in self.context.index.ancestors(node):
            if ancestor is outer:
                break
            if type(ancestor) is cst.If and child is not ancestor.test and _folds_per_mode(analysis, ancestor.test):
                key = " ".join(self.context.module.code_for_node(ancestor.test).split())
                modes[key] = "body" if child is ancestor.body else "orelse"
            child = ancestor
        return modes


def _dual(first: list[tuple[str, dict]], second: list[tuple[str, dict]]) -> bool:
    """A block-pointer path in ``first`` and a masked path in ``second`` that one compiled kernel holds together
    (no compile-time condition selects them on opposite sides), where ``second`` moves the data only by the masked
    path: a branch that adds a masked edge load next to the block-pointer path both branches share does not
    choose between two paths."""
    for path, modes in first:
        if path != _BLOCK:
            continue
        for other_path, other_modes in second:
            if other_path != _MASKED or not _compatible(modes, other_modes):
                continue
            if not any(p == _BLOCK and _compatible(m, other_modes) for p, m in second):
                return True
    return False


def _compatible(first: dict, second: dict) -> bool:
    return all(second.get(key, side) == side for key, side in first.items())


def _folds_per_mode(analysis: KernelAnalysis, test: cst.BaseExpression) -> bool:
    """The condition is decided at compile time: folded on every path (``is_tail = False`` is), or built only from
    flags that each constexpr mode assigns a constant, except the one mode kept as the runtime fallback
    (``if TAIL_MODE == 0: is_tail = False`` ... ``else: is_tail = t0 + BT > T``)."""
    if analysis.is_compile_time(test):
        return True
    if type(test) is cst.Name:
        return _set_per_mode(analysis, test)
    if type(test) is cst.UnaryOperation:
        return _folds_per_mode(analysis, test.expression)
    if type(test) is cst.BooleanOperation:
        return _folds_per_mode(analysis, test.left) and _folds_per_mode(analysis, test.right)
    if type(test) is cst.Comparison:
        return all(_folds_per_mode(analysis, part) for part in (test.left, *(c.comparator for c in test.comparisons)))
    return False


def _set_per_mode(analysis: KernelAnalysis, read: cst.Name) -> bool:
    definitions = analysis.definitions(read)
    folded = [d for d in definitions if d.kind == "assign" and d.value is not None and analysis.is_compile_time(d.value)]
    runtime = [d for d in definitions if not any(d is f for f in folded)]
    return bool(folded) and bool(runtime) and all(
        d.kind == "assign" and _in_compile_time_branch(analysis, d.statement) for d in runtime
    )


def _in_compile_time_branch(analysis: KernelAnalysis, statement: cst.CSTNode) -> bool:
    """``statement`` runs only in some compiled variants: it sits in a branch of an ``if`` on constexprs."""
    child = statement
    for ancestor in analysis.index.ancestors(statement):
        if ancestor is analysis.kernel.node:
            return False
        if type(ancestor) is cst.If and child is not ancestor.test and analysis.is_compile_time(ancestor.test):
            return True
        child = ancestor
    return False


def _roots(analysis: KernelAnalysis, expr, depth: int = 0) -> set[str]:
    """Pointer parameters an address expression is built from (through local names and arithmetic)."""
    if expr is None or depth > _DEPTH:
        return set()
    if type(expr) is cst.Name:
        if analysis.is_param(expr.value):
            return {expr.value} if expr.value in analysis.pointer_params else set()
        found: set[str] = set()
        for value in analysis.assignments.get(expr.value, ()):
            if isinstance(value, cst.BaseExpression):
                found |= _roots(analysis, value, depth + 1)
        return found
    if type(expr) is cst.BinaryOperation and type(expr.operator) in (cst.Add, cst.Subtract):
        return _roots(analysis, expr.left, depth + 1) | _roots(analysis, expr.right, depth + 1)
    if type(expr) is cst.Call and expr.args and _passes_pointer_through(analysis, expr):
        return _roots(analysis, expr.args[0].value, depth + 1)
    return set()


def _passes_pointer_through(analysis: KernelAnalysis, call: cst.Call) -> bool:
    """A jit helper taking the base pointer first (``tile_ptr(x_base, ...)``) or a hint such as ``tl.multiple_of``;
    a loaded index (``tl.load(idx_ptr + i)``) is data, not the address's base."""
    func = call.func
    if type(func) is cst.Name and func.value in analysis.facts.kernels:
        return True
    return analysis.facts.qualname(func) in _POINTER_HINTS
