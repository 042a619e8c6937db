from __future__ import annotations

import libcst as cst

from ascendlint.analysis.launch_arguments import launches_of, may_pass_none
from ascendlint.analysis.syntax import argument
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_DEREFERENCES = {"tl.load", "tl.store", "tl.make_block_ptr", "tl.advance"}


class OptionalPointerRuntimeGuard(Rule):
    """Flags a dereference of an optional pointer that no compile-time condition removes when the pointer is None."""

    decides = """
    A pointer is optional when its parameter defaults to `None`, a `triton.heuristics` lambda tests it with
    `is None` / `is not None`, or the kernel itself tests `ptr is not None`. Only pointers that a launch in the
    module can pass as None count: the literal `None`, `x if cond else None`, or a host name or parameter that can
    be None and that the host has not used as a tensor before the launch. A dereference (load, store, block
    pointer or pointer arithmetic) must sit in a branch of a constexpr-only condition that is false when the
    pointer is None: `if USE_H0:` around a runtime test, or the `elif` after `if not USE_H0:`. A condition such
    as `if USE_H0 or i_t > 0:` or `if USE_H0 and i_t > 0:` keeps the branch compiled.
    """

    code = "ASC104"
    name = "optional-pointer-runtime-guard"
    options = {"report-unlaunched": False}
    message = (
        "`{pointer}` may be None, but this branch is still compiled then ({reason}); "
        "enclose it in a constexpr-only test such as `if {flag}:`"
    )
    severity = Severity.ERROR
    default = False
    opt_in_reason = (
        "its precision on real kernels is below the 90% bar: 4/5 on the tuning corpus, 2/4 held out; see "
        "docs/precision.md"
    )
    fix_safety = FixSafety.NONE
    why = """
        A pointer argument passed as `None` becomes a compile-time `None`. Triton drops only branches whose
        condition is decided at compile time; any branch whose condition has a runtime term is compiled, so a load
        or store through the `None` pointer in it fails with `AttributeError: 'NoneType' object has no attribute
        'type'`. triton-ascend 3.2.0 also does not short-circuit a constexpr operand of a mixed `and`/`or`
        condition, and a flag bound by plain assignment (`has_h0 = h0 is not None`) is a tensor, so `if has_h0:`
        is a runtime branch too. When a `triton.heuristics` flag says whether the pointer is present, only a test
        of that flag (or of the pointer) removes the branch: another switch (`if IS_VARLEN:`) does not.
    """
    options_notes = """
        `report-unlaunched`: also report kernels that no launch in the module shows (launched from another module
        or through a wrapper); whether their pointers can be None is then unknown, and on real code such reports
        are mostly pointers the host always allocates.
    """
    fix_notes = """
        Test the constexpr flag on its own and nest the runtime test inside it (`if USE_H0:` then `if i_t > 0:`),
        or use `if not USE_H0: ... elif cond:` so the dereference sits in a branch removed at compile time.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics({"USE_H0": lambda args: args["h0"] is not None})
            @triton.jit
            def kernel(x, h0, o, T, USE_H0: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = tl.arange(0, BT)
                b_h = tl.zeros([BT], dtype=tl.float32)
                if USE_H0 or i_t * BT < T:
                    b_h += tl.load(h0 + offs)
                tl.store(o + i_t * BT + offs, b_h + tl.load(x + offs))

            def launch(x, o, h0=None):
                kernel[(4,)](x, h0, o, x.shape[0], BT=16)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def kernel(x, o, T, h0=None, ht=None, BT: language.constexpr = 16):
                i_t = language.program_id(0)
                offs = language.arange(0, BT)
                b_h = language.load(x + offs)
                if h0 is not None and i_t > 0:
                    b_h += language.load(
                        h0 + offs,
                    )
                if i_t == 0:
                    language.store(ht + offs, b_h)
                p_o = ht + i_t * BT + offs
                language.store(o + offs, b_h)

            def launch(x, o, initial_state=None, final_state=None):
                kernel[(4,)](x, o, x.shape[0], initial_state, final_state)
            """,
            count=3,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics(values={"NO_BIAS": lambda args: args["bias"] is None})
            @triton.jit
            def kernel(x, bias, o, NO_BIAS: tl.constexpr, FLAG: tl.constexpr, BT: tl.constexpr):
                offs = tl.arange(0, BT)
                b = tl.load(x + offs)
                if NO_BIAS:
                    b = b * 2.0
                else:
                    b += tl.load(bias + offs)
                if NO_BIAS or FLAG:
                    b += tl.load(bias + offs)
                tl.store(o + offs, b)

            def launch(x, o, bias=None, flag=False):
                kernel[(1,)](x, bias, o, FLAG=flag, BT=16)
            """,
        ),
        Invalid(
            """
            import triton
            from vllm.triton_utils import tl

            @triton.heuristics({"HAS_SLOTS": lambda args: args["slots"] is not None})
            @triton.jit
            def kernel(x, o, slots, HAS_SLOTS: tl.constexpr, WRITE_BACK: tl.constexpr, BT: tl.constexpr):
                i_n = tl.program_id(0)
                offs = tl.arange(0, BT)
                b_x = tl.load(x + i_n * BT + offs)
                if WRITE_BACK:
                    row = tl.load(slots + i_n).to(tl.int64)
                    tl.store(o + row * BT + offs, b_x)

            def launch(x, o, slots=None):
                kernel[(x.shape[0],)](x, o, slots, WRITE_BACK=True, BT=16)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, T, h0=None, BT: tl.constexpr = 16):
                offs = tl.arange(0, BT)
                has_h0 = h0 is not None
                b_h = tl.load(x + offs)
                if has_h0:
                    b_h += tl.load(h0 + offs)
                tl.store(o + offs, b_h)

            def launch(x, o, h0=None):
                kernel[(4,)](x, o, x.shape[0], h0)
            """
        ),
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.heuristics({"SAVE": lambda args: args["v_new"] is not None})
            @triton.jit
            def kernel(u, v_new, T, SAVE: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = i_t * BT + tl.arange(0, BT)
                b_u = tl.load(u + offs, mask=offs < T)
                tl.store(v_new + offs, b_u * 2.0, mask=offs < T)

            def launch(u, save_new_value=False):
                v_new = torch.empty_like(u) if save_new_value else None
                kernel[(4,)](u, v_new, u.shape[0], BT=16)
                return v_new
            """
        ),
    ]
    VALID = [
        Valid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.heuristics({"USE_G": lambda args: args["g"] is not None, "STORE": lambda args: args["kg"] is not None})
            @triton.jit
            def kernel(k, g, kg, T, USE_G: tl.constexpr, STORE: tl.constexpr, BT: tl.constexpr):
                offs = tl.program_id(0) * BT + tl.arange(0, BT)
                b_k = tl.load(k + offs, mask=offs < T) * tl.load(g + offs, mask=offs < T)
                tl.store(kg + offs, b_k, mask=offs < T)

            def launch(k, g):
                g = g.transpose(0, 1).contiguous()
                kg = torch.empty_like(k)
                kernel[(4,)](k, g, kg, k.shape[0], BT=16)
                return kg
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics({"USE_H0": lambda args: args["h0"] is not None})
            @triton.jit
            def kernel(x, h0, o, T, USE_H0: tl.constexpr, BT: tl.constexpr):
                offs = tl.arange(0, BT)
                tl.store(o + offs, tl.load(x + offs) + tl.load(h0 + offs))
            """
        ),
        Valid(
            """
            import triton
            from vllm.triton_utils import tl

            @triton.heuristics({"HAS_SLOTS": lambda args: args["slots"] is not None})
            @triton.jit
            def kernel(x, o, slots, HAS_SLOTS: tl.constexpr, WRITE_BACK: tl.constexpr, BT: tl.constexpr):
                i_n = tl.program_id(0)
                offs = tl.arange(0, BT)
                b_x = tl.load(x + i_n * BT + offs)
                if HAS_SLOTS and WRITE_BACK:
                    row = tl.load(slots + i_n).to(tl.int64)
                    tl.store(o + row * BT + offs, b_x)

            def launch(x, o, slots=None):
                kernel[(x.shape[0],)](x, o, slots, WRITE_BACK=True, BT=16)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, bias=None, HAS_BIAS: tl.constexpr = False, BT: tl.constexpr = 16):
                offs = tl.arange(0, BT)
                b = tl.load(x + offs)
                if HAS_BIAS:
                    b += tl.load(bias + offs)
                tl.store(o + offs, b)

            def launch(x, o, bias=None):
                kernel[(1,)](x, o, bias, HAS_BIAS=bias is not None)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics({"USE_H0": lambda args: args["h0"] is not None})
            @triton.jit
            def kernel(x, h0, o, T, USE_H0: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = tl.arange(0, BT)
                b_h = tl.zeros([BT], dtype=tl.float32)
                if USE_H0:
                    if i_t * BT < T:
                        b_h += tl.load(h0 + offs)
                tl.store(o + i_t * BT + offs, b_h + tl.load(x + offs))

            def launch(x, o, h0=None):
                kernel[(4,)](x, h0, o, x.shape[0], BT=16)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.heuristics({"USE_H0": lambda args: args["h0"] is not None})
            @triton.jit
            def kernel(x, h0, o, T, USE_H0: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = tl.arange(0, BT)
                if not USE_H0:
                    b_h = tl.zeros([BT], dtype=tl.float32)
                elif i_t * BT < T:
                    b_h = tl.load(h0 + offs)
                else:
                    b_h = tl.load(
                        h0 + offs + BT,
                    )
                tl.store(o + offs, b_h + tl.load(x + offs))

            def launch(x, o, h0=None):
                kernel[(4,)](x, h0, o, x.shape[0], BT=16)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, T, h0=None, BT: tl.constexpr = 16):
                i_t = tl.program_id(0)
                offs = tl.arange(0, BT)
                has_h0: tl.constexpr = h0 is not None
                b_h = tl.load(x + offs)
                if has_h0:
                    if i_t > 0:
                        p_h = h0 + offs
                        b_h += tl.load(p_h)
                if h0 is not None and T > 0:
                    b_h += 1.0
                tl.store(o + offs, b_h if h0 is None else b_h + tl.load(h0 + offs))

            def launch(x, o, h0=None):
                kernel[(4,)](x, o, x.shape[0], h0)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, scale, T, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = tl.arange(0, BT)
                b = tl.load(x + offs)
                if i_t * BT < T:
                    b = b * scale
                tl.store(o + offs, b)

            def launch(x, o, scale):
                kernel[(4,)](x, o, scale, x.shape[0], BT=16)
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        analysis = self.context.analysis(kernel)
        optional = _optional_pointers(self.facts, kernel, analysis)
        launches = launches_of(self.facts, kernel)
        if launches or not self.settings["report-unlaunched"]:  # the module's launches say which can be None
            optional = {
                pointer: flags
                for pointer, flags in optional.items()
                if any(may_pass_none(self.facts, launch, pointer) for launch in launches)
            }
        if not optional:
            return
        reported: set[int] = set()
        for pointer, flags in optional.items():
            for read in analysis.reads.get(pointer, ()):
                if not self._dereferences(analysis, read):
                    continue
                if not any(d.kind == "param" for d in analysis.definitions(read)):
                    continue
                finding = self._unguarded(analysis, read, pointer, flags)
                if finding is not None and id(finding[0]) not in reported:
                    reported.add(id(finding[0]))
                    anchor, reason = finding
                    flag = next((f for f, present in flags.items() if present), f"{pointer} is not None")
                    self.report(anchor, self.message.format(pointer=pointer, reason=reason, flag=flag))

    def _dereferences(self, analysis, read: cst.Name) -> bool:
        parent = analysis.index.parent(read)
        if type(parent) is cst.BinaryOperation and type(parent.operator) not in (cst.BitAnd, cst.BitOr):
            return True
        if type(parent) is cst.Arg:
            call = analysis.index.parent(parent)
            if type(call) is not cst.Call:
                return False
            name = self.facts.qualname(call.func) or ""
            if name in _DEREFERENCES or name.startswith("tl.atomic_"):
                first = argument(call, 0, "base" if name == "tl.make_block_ptr" else "pointer")
                return first is read
        return False

    def _unguarded(self, analysis, read, pointer, flags) -> tuple[cst.CSTNode, str] | None:
        """The node to report and why, or None when a compile-time condition removes the dereference."""
        runtime_if = None
        undecided_if = None
        child = read
        for ancestor in analysis.index.ancestors(read):
            if ancestor is analysis.kernel.node:
                break
            if type(ancestor) in (cst.If, cst.IfExp) and child is not ancestor.test:
                in_body = child is ancestor.body
                if analysis.is_constexpr(ancestor.test):
                    value = _when_absent(analysis, ancestor.test, pointer, flags, 0)
                    if value is (not in_body) or (value is None and not flags):
                        return None
                    if value is None and not flags and not _mentions(ancestor.test, {pointer}):
                        return None  # another compile-time switch the caller sets together with the pointer
                    undecided_if = undecided_if or ancestor
                elif runtime_if is None:
                    runtime_if = ancestor
            child = ancestor
        if runtime_if is not None:
            return runtime_if, "its condition has a runtime term"
        if undecided_if is not None:
            return undecided_if, "its condition does not exclude the None case"
        return read, "nothing tests it at compile time"


def _mentions(test: cst.BaseExpression, names: set[str]) -> bool:
    """Whether a condition reads any of ``names``."""
    return any(type(node) is cst.Name and node.value in names for node in _walk(test))


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def _optional_pointers(facts, kernel, analysis) -> dict[str, dict[str, bool]]:
    """Optional pointer parameters -> their heuristics flags (flag name -> True when the flag means "present")."""
    found: dict[str, dict[str, bool]] = {}
    for name, default in kernel.defaults.items():
        if type(default) is cst.Name and default.value == "None":
            found.setdefault(name, {})
    if kernel.heuristics is not None:
        values = argument(kernel.heuristics, 0, "values")
        for element in values.elements if type(values) is cst.Dict else ():
            if type(element) is not cst.DictElement or type(element.key) is not cst.SimpleString:
                continue
            tested = _lambda_none_test(element.value)
            if tested is not None and tested[0] in kernel.params:
                found.setdefault(tested[0], {})[element.key.evaluated_value] = tested[1]
    for node in analysis.nodes:
        if type(node) is cst.Comparison:
            tested = _none_test(node)
            if tested is not None and tested[0] in kernel.params and _in_condition(analysis, node):
                found.setdefault(tested[0], {})
    return found


def _lambda_none_test(value) -> tuple[str, bool] | None:
    """`lambda args: args["h0"] is not None` -> ("h0", True)."""
    if type(value) is not cst.Lambda or type(value.body) is not cst.Comparison:
        return None
    comparison = value.body
    if len(comparison.comparisons) != 1 or not _is_none(comparison.comparisons[0].comparator):
        return None
    subject = comparison.left
    key = None
    if type(subject) is cst.Subscript and len(subject.slice) == 1:
        index = subject.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            key = index.value.evaluated_value
    elif (
        type(subject) is cst.Call
        and type(subject.func) is cst.Attribute
        and subject.func.attr.value == "get"
        and subject.args
        and type(subject.args[0].value) is cst.SimpleString
    ):
        key = subject.args[0].value.evaluated_value
    operator = comparison.comparisons[0].operator
    if key is None or type(operator) not in (cst.Is, cst.IsNot):
        return None
    return key, type(operator) is cst.IsNot


def _none_test(node: cst.Comparison) -> tuple[str, bool] | None:
    """`ptr is not None` -> ("ptr", True); `ptr is None` -> ("ptr", False)."""
    if len(node.comparisons) != 1 or type(node.left) is not cst.Name:
        return None
    comparison = node.comparisons[0]
    if not _is_none(comparison.comparator) or type(comparison.operator) not in (cst.Is, cst.IsNot):
        return None
    return node.left.value, type(comparison.operator) is cst.IsNot


def _is_none(node) -> bool:
    return type(node) is cst.Name and node.value == "None"


def _in_condition(analysis, node) -> bool:
    child = node
    for ancestor in analysis.index.ancestors(node):
        if type(ancestor) in (cst.If, cst.IfExp, cst.While) and child is ancestor.test:
            return True
        if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return type(ancestor) is cst.Assign  # `USE_H0 = h0 is not None` names the test for later
        child = ancestor
    return False


def _when_absent(analysis, test, pointer: str, flags: dict[str, bool], depth: int) -> bool | None:
    """The value of a compile-time condition when ``pointer`` is None, or None when it does not follow."""
    if depth > 8:
        return None
    if type(test) is cst.Comparison:
        tested = _none_test(test)
        if tested is not None and tested[0] == pointer:
            return not tested[1]
        return None
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = _when_absent(analysis, test.expression, pointer, flags, depth + 1)
        return None if inner is None else not inner
    if type(test) is cst.BooleanOperation:
        left = _when_absent(analysis, test.left, pointer, flags, depth + 1)
        right = _when_absent(analysis, test.right, pointer, flags, depth + 1)
        decisive = type(test.operator) is cst.Or  # `or` is decided by a True operand, `and` by a False one
        if left is decisive or right is decisive:
            return decisive
        return (not decisive) if left is not None and right is not None else None
    if type(test) is cst.Name:
        if test.value in flags:
            return not flags[test.value]
        values = {
            _when_absent(analysis, d.value, pointer, flags, depth + 1) if d.kind == "assign" else None
            for d in analysis.definitions(test)
        }
        return values.pop() if len(values) == 1 else None
    return None
