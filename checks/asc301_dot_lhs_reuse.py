import ast

import libcst as cst

from ascendlint import edits
from ascendlint.analysis.dot_lhs import lhs_reuses
from ascendlint.analysis.dtypes import operand_partner_is_float, surely_float
from ascendlint.diagnostics import Applicability, FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

class DotLhsReuse(Rule):
    """Flags a `tl.dot` whose left operand is a name that is read again after the dot."""

    decides = """
    Later reads include other dots (as left or right operand), stores, arithmetic, a copy taken after the dot,
    and reads on the next iteration of a loop other than by the same dot. Reads inside the same `tl.dot` call,
    metadata reads such as `.dtype` or `.shape`, reads after the name was reassigned and reads in the other branch
    of an `if` do not count; nor, for an `if` whose test is a compile-time constant (a `tl.constexpr` flag,
    arithmetic on constexprs), do reads in its other arm on a later iteration: only one arm is ever compiled.

    One shape is left to ASC306 (opt-in): a tile read again only as the left operand of dots on later loop
    iterations, the same dot on the next iteration (the flash-attention query tile) or dots in a later loop (the
    second pass of a two-stage attention kernel). Whether the cube unit clobbers an operand it reads again
    unchanged has not been reproduced on hardware: triton-ascend's own fused-attention tutorial, written both
    ways, passes its accuracy test on the NPU, while FLA's Ascend kernels reload such tiles in each loop.
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
        The copy must be a new tile of the same type that the compiler keeps. When the tile is known to be
        floating point (an explicit float cast or dtype, float arithmetic, or a dot partner that is float: both
        operands of a dot share one type) and is computed where the dot runs, the safe fix copies it just before
        the dot (`b_q_c = b_q + 0.0`) and passes the copy as the left operand. The copy is not made for other
        tiles: `+ 0.0` turns an int8 tile into fp32 (the dot then fails to compile: both operands must have the
        same type), and an integer `+ 0` is folded away by the compiler. Nor is it made inside a loop for a tile
        defined before the loop: that copy does not depend on the loop, the compiler moves it out, and one copy
        then serves, and is overwritten by, every iteration's dot.
        In those cases, when the tile was loaded and its address is unchanged at the dot, the fix reloads it
        instead (`b_q_c = tl.load(q + offs, volatile=True)`, with the same cast if the tile was cast; `volatile`
        keeps the compiler from merging the two loads or moving the reload out of the loop). That fix is unsafe:
        it reads global memory again at every dot, which costs a transfer and gives a different tile if the
        kernel, another program or another rank wrote there in between. Otherwise (a helper's parameter, a
        computed tile) no fix is offered: keep a copy of the tile in its own type yourself. A copy made after the
        dot does not help: the damage is already done.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs).to(tl.float32)
                b_k = tl.load(k + offs).to(tl.float32)
                b_s = tl.dot(b_q, b_k)
                tl.store(o + offs, b_s + b_q)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs).to(tl.float32)
                b_k = tl.load(k + offs).to(tl.float32)
                # a copy: tl.dot may overwrite its left operand on Ascend (ASC301)
                b_q_c = b_q + 0.0
                b_s = tl.dot(b_q_c, b_k)
                tl.store(o + offs, b_s + b_q)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs) * 0.5
                    acc += tl.dot(b_k, b_q) + b_k
                tl.store(o + offs, acc)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs) * 0.5
                    # a copy: tl.dot may overwrite its left operand on Ascend (ASC301)
                    b_k_c = b_k + 0.0
                    acc += tl.dot(b_k_c, b_q) + b_k
                tl.store(o + offs, acc)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_a = tl.load(q + offs)
                b_b = tl.load(k + offs)
                b_b_c = b_b * 2
                b_e = tl.zeros([BT, BT], dtype=tl.float32)
                for i in range(0, 2):
                    for j in range(0, 2):
                        b_c = tl.dot(b_a, b_b)
                        b_a = b_c.to(b_b.dtype)
                        b_e += tl.dot(b_b, b_a)
                tl.store(o + offs, b_a + b_e + b_b_c)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_a = tl.load(q + offs)
                b_b = tl.load(k + offs)
                b_b_c = b_b * 2
                b_e = tl.zeros([BT, BT], dtype=tl.float32)
                for i in range(0, 2):
                    for j in range(0, 2):
                        b_c = tl.dot(b_a, b_b)
                        b_a = b_c.to(b_b.dtype)
                        # reloaded: tl.dot may overwrite its left operand on Ascend (ASC301)
                        b_b_c2 = tl.load(k + offs, volatile=True)
                        b_e += tl.dot(b_b_c2, b_a)
                tl.store(o + offs, b_a + b_e + b_b_c)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attend(b_q, b_k, b_v):
                b_s = tl.dot(b_q, tl.trans(b_k))
                return tl.dot(b_s.to(b_v.dtype), b_v) + tl.sum(b_q, 1)[:, None]
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def two_dots(q, k, v, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    b_v = tl.load(v + i_k * BT * BT + offs)
                    acc += tl.dot(b_q, b_k)
                    acc += tl.dot(b_q, b_v)
                tl.store(o + offs, acc)
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
            def attend(q, k, o, NK, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs)
                acc = tl.zeros([BT, BT], dtype=tl.float32)
                for i_k in range(0, NK):
                    b_k = tl.load(k + i_k * BT * BT + offs)
                    acc += tl.dot(b_q, b_k)
                tl.store(o + offs, acc)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, k, o, BT: tl.constexpr):
                offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
                b_q = tl.load(q + offs).to(tl.float32)
                b_k = tl.load(k + offs).to(tl.float32)
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

    # Which findings this rule reports: the certain reuses (ASC301) or only the loop-carried one (ASC306).
    loop_carried: bool = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        found = [r for r in lhs_reuses(self.context, kernel) if r.loop_carried_only == self.loop_carried]
        if not found:
            return
        analysis = self.context.analysis(kernel)
        copies: dict[str, int] = {}
        for reuse in found:
            self._report(analysis, reuse.call, reuse.lhs, list(reuse.reads), copies, list(reuse.certain))

    def _report(self, analysis, call, lhs, reads, copies, certain=()) -> None:
        # name a certain reuse first, then another read than the dot's own next iteration
        others = [r for r in reads if r is not lhs]
        first = min(certain or others or reads, key=analysis.index.order)
        line = self.context.locator.span(first)[0].row
        message = self.message.format(name=lhs.value, line=line)
        line_node = next((a for a in analysis.index.ancestors(call) if type(a) is cst.SimpleStatementLine), None)
        statement = analysis.statement_of(call)
        if line_node is None or not isinstance(statement, cst.BaseSmallStatement):
            self.report(call, message)
            return
        is_float = surely_float(analysis, lhs) or operand_partner_is_float(analysis, call)
        if is_float and not _invariant_in_a_loop_around(analysis, lhs, call):
            copy_of = f"{lhs.value} + 0.0"
            fix_message = f"Copy `{lhs.value}` to `{{copy}}` before the dot and pass the copy"
            applicability = Applicability.SAFE
            why_copy = f"{COPY_NOTE} ({self.code})"
        else:
            copy_of = _volatile_reload(analysis, lhs)
            if copy_of is None:
                self.report(call, message)
                return
            fix_message = f"Reload `{lhs.value}` from memory into `{{copy}}` before the dot and pass the copy"
            applicability = Applicability.UNSAFE
            why_copy = f"{RELOAD_NOTE} ({self.code})"
        copy = self._copy_name(analysis, lhs.value, copies)

        def build(loc):
            row = loc.span(line_node)[0].row
            indent = edits.indentation_of_line(loc, row)
            return [
                edits.insert_before_line(
                    loc, row, f"{indent}# {why_copy}{loc.newline}{indent}{copy} = {copy_of}{loc.newline}"
                ),
                edits.replace(loc, lhs, copy),
            ]

        self.report(
            call, message, fix_message=fix_message.format(copy=copy), edits=build, applicability=applicability
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


# What the inserted line's comment says, so that the next reader does not delete a copy that looks useless.
COPY_NOTE = "a copy: tl.dot may overwrite its left operand on Ascend"
RELOAD_NOTE = "reloaded: tl.dot may overwrite its left operand on Ascend"


def _invariant_in_a_loop_around(analysis, lhs: cst.Name, dot: cst.Call) -> bool:
    """Whether some loop around the dot holds no definition of ``lhs`` that reaches it: a copy made there is
    loop-invariant, the compiler hoists it out of the loop, and one copy then serves (and is clobbered by) every
    iteration's dot."""
    definitions = analysis.definitions(lhs)
    return any(
        not any(analysis.defined_inside(d, loop) for d in definitions) for loop in analysis.enclosing_loops(dot)
    )


_NOT_REPEATABLE = ("tl.store", "tl.atomic_", "tl.dot", "tl.rand", "dl.", "shmem.")


def _volatile_reload(analysis, lhs: cst.Name) -> str | None:
    """The expression that defined ``lhs`` evaluated again, its one ``tl.load`` made ``volatile=True``, when
    that gives the same tile at the dot (``tl.load(q + offs)`` or ``tl.load(q + offs).to(tl.float16)``).

    The one definition reaching the dot must hold exactly one ``tl.load`` with plain arguments (``_plain``), no
    other memory access or helper call, and every name it reads must still hold the same
    value at the dot: a parameter never assigned, or a name with
    a single definition that no loop around the dot re-runs without re-running the load. ``volatile`` keeps the
    compiler from merging the second load into the first (it merges two plain loads of one address) and from
    hoisting it out of a loop.
    """
    definitions = analysis.definitions(lhs)
    if len(definitions) != 1 or definitions[0].kind != "assign" or definitions[0].value is None:
        return None
    value = definitions[0].value
    nodes = [value, *analysis.index.descendants(value)]
    loads = [n for n in nodes if analysis.facts.is_call_to(n, "tl.load")]
    if len(loads) != 1 or any(a.star for a in loads[0].args):
        return None
    for node in nodes:
        if type(node) is cst.Call and node is not loads[0] and not _repeatable(analysis, node):
            return None
    load_loops = analysis.enclosing_loops(definitions[0].statement)
    for node in nodes:
        if type(node) is cst.Name and analysis.is_read(node) and not _unchanged_after(analysis, node, load_loops):
            return None
    load = loads[0]
    if not all(_plain(analysis, arg.value) for arg in load.args):
        return None
    if not any(a.keyword is not None and a.keyword.value == "volatile" for a in load.args):
        args = list(load.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        volatile = cst.Arg(value=cst.Name("True"), keyword=cst.Name("volatile"),
                           equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        value = value.deep_replace(load, load.with_changes(args=[*args, volatile]))
    text = analysis.facts.module.code_for_node(value)
    if "\n" not in text and "\r" not in text and "#" not in text:
        return text
    # Written over several lines (comments, a backslash continuation): the copy goes on one line, so it is the
    # expression as CPython reads it, printed back without comments or continuations.
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _plain(analysis, expr: cst.BaseExpression) -> bool:
    """An argument the reload can repeat as written: names, constants, sums and comparisons of them, products
    of compile-time constants (`p_q`, `q + offs`, `mask=offs < BT * BT`, `boundary_check=(0, 1)`). Runtime
    products are left alone: repeating offset arithmetic would repeat whatever is wrong with it (an int32
    product that can wrap, say) in a second place."""
    if type(expr) in (cst.Name, cst.Integer, cst.Float, cst.SimpleString):
        return True
    if type(expr) is cst.Attribute:
        return _plain(analysis, expr.value)
    if type(expr) is cst.UnaryOperation:
        return type(expr.operator) in (cst.Minus, cst.Not, cst.BitInvert) and _plain(analysis, expr.expression)
    if type(expr) in (cst.Tuple, cst.List):
        return all(_plain(analysis, e.value) for e in expr.elements)
    if type(expr) is cst.Comparison:
        return _plain(analysis, expr.left) and all(_plain(analysis, c.comparator) for c in expr.comparisons)
    if type(expr) is cst.BinaryOperation:
        if type(expr.operator) in (cst.Add, cst.Subtract, cst.BitAnd, cst.BitOr):
            return _plain(analysis, expr.left) and _plain(analysis, expr.right)
        return analysis.is_constexpr(expr)
    return False


def _repeatable(analysis, call: cst.Call) -> bool:
    """A call that computes the same value again: a cast or a ``triton.language`` op without side effects."""
    if analysis.cast_target(call) is not None:
        return True
    name = analysis.facts.qualname(call.func) or ""
    return name.startswith("tl.") and not name.startswith(_NOT_REPEATABLE)


def _unchanged_after(analysis, read: cst.Name, load_loops: list) -> bool:
    """The value ``read`` sees at the load is the value its name holds until the dot (single definition)."""
    name = read.value
    if name not in analysis.assignments:
        return name not in analysis.kernel.params or analysis.is_param(name)  # a global, or a parameter never set
    definitions = analysis.definitions(read)
    if len(analysis.assignments[name]) != 1 or len(definitions) != 1 or name in analysis.kernel.params:
        return False
    (definition,) = definitions
    if definition.kind == "loop":
        return any(definition.statement is loop for loop in load_loops)
    return all(any(loop is outer for outer in load_loops) for loop in analysis.enclosing_loops(definition.statement))
