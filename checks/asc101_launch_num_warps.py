import re

import libcst as cst

from ascendlint import edits
from ascendlint.analysis.module_facts import dotted_name
from ascendlint.analysis.npu_reach import reached_on_npu
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.text.lazy_regex import lazy

_IGNORED = ("num_warps", "num_stages")
_IN_COMMENT = lazy(r"\b(num_warps|num_stages)\s*=")
_LOOP_MESSAGE = (
    "`num_stages` on `tl.range` has no effect on Ascend: triton-ascend drops the loop's `tt.num_stages` attribute "
    "when it lowers the kernel, and nothing in its backend reads it"
)
_KEYWORD_IN_COMMENT = lazy(r"\b(?:num_warps|num_stages)\s*=\s*[^,\s)#]+")


class _CommentCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.comments: list[cst.Comment] = []

    def visit_Comment(self, node: cst.Comment) -> None:
        self.comments.append(node)


class LaunchNumWarps(Rule):
    """Flags `num_warps` / `num_stages` passed to a launch or a `triton.Config`, including commented-out ones, and
    `num_stages=` on a `tl.range` loop."""

    decides = """
    Also found in a dict passed as `**kwargs` to a launch or Config, and in a dict of launch keywords whose launch
    this module does not make (`constexpr_kwargs = {"BLOCK": 1024, "num_warps": 4}` handed to a launcher of another
    package), reported where the dict spells the keyword. Left alone: a launch or Config that passes
    `force_simt_only=True`; a keyword that names a parameter of the launched kernel (`num_warps: tl.constexpr`
    declared by the kernel, in this module or in a linted module it imports), which is the kernel's own
    argument; and CUDA-only modules, where no Ascend rule reports (see the configuration's `lint-cuda-only`).
    Not reported either: the keywords of a launch the host code never reaches on an NPU (in a launcher the module
    rebinds under `if is_npu():`, in a branch false on the NPU such as `if not _is_npu:` or `if x.is_cuda:`, after
    `if _is_npu: return ...` or `assert x.is_cuda`; device tests are read in their usual spellings:
    `x.device.type in ("cuda", "hip")`, `"npu" in str(x.device)`, `torch.npu.is_available()`,
    `is_torch_npu_available()`); `triton.Config` and autotune keywords are reported wherever they are. Dicts
    that are data, not launch options, are left alone too: a value an `assert` compares against, a record stored
    into a container or attribute (`summary["tiling"] = {...}`), and the `hints=` of a newer triton-ascend
    autotuner, which maps its `num_stages` entries to multibuffer settings.
    """

    code = "ASC101"
    name = "launch-num-warps"
    message = "`{keyword}` has no effect on Ascend's default (SIMD) path"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = """
        Ascend NPUs have no warps. On the default SIMD compile path triton-ascend accepts `num_warps` and
        `num_stages`, prints a warning and ignores them (only the SIMT mode, `force_simt_only=True`, reads
        `num_warps`). Autotune configs that vary them benchmark the same kernel several times, and readers are led
        to believe they matter. `tl.range(..., num_stages=N)` asks for a software-pipelined loop: the frontend
        records it as the loop's `tt.num_stages` attribute, and triton-ascend 3.2.0's lowering to Linalg drops the
        attribute (compiled offline, the Linalg of such a loop is identical to the one without it); nothing in the
        Ascend backend's sources reads it. It is dead code of the same kind, with the same severity.
    """
    INVALID = [
        Invalid(
            """
            import triton

            def run(x, n):
                add_one[(n,)](x, n, BLOCK=256, num_warps=4, num_stages=2)
            """,
            count=2,
            fixed="""
            import triton

            def run(x, n):
                add_one[(n,)](x, n, BLOCK=256)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton

            configs = [triton.Config({"BLOCK": 128}, num_warps=8), triton.Config({"BLOCK": 256})]
            """,
            fixed="""
            import triton

            configs = [triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})]
            """,
        ),
        Invalid(
            """
            import triton as tt

            @tt.autotune(configs=[tt.Config({"BLOCK": b}, num_stages=s) for b in (64, 128) for s in (1, 2)], key=["n"])
            @tt.jit
            def k(x_ptr, n, BLOCK):
                pass
            """,
            fixed="""
            import triton as tt

            @tt.autotune(configs=[tt.Config({"BLOCK": b}) for b in (64, 128) for s in (1, 2)], key=["n"])
            @tt.jit
            def k(x_ptr, n, BLOCK):
                pass
            """,
        ),
        Invalid(
            """
            import triton

            @triton.jit
            def k(x_ptr):
                pass

            def run(x):
                opts = {"num_warps": 4, "BLOCK": 64}
                k[(1,)](
                    x,
                    **opts,
                )
            """,
            fixed="""
            import triton

            @triton.jit
            def k(x_ptr):
                pass

            def run(x):
                opts = {"BLOCK": 64}
                k[(1,)](
                    x,
                    **opts,
                )
            """,
        ),
        Invalid(
            """
            from triton import jit

            @jit
            def k(x_ptr):
                pass

            def run(x):
                k[(1,)](
                    x,
                    # num_warps=4,
                )
            """,
            fixed="""
            from triton import jit

            @jit
            def k(x_ptr):
                pass

            def run(x):
                k[(1,)](
                    x,
                )
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
                acc = tl.zeros((BLOCK,), dtype=tl.float32)
                for start in tl.range(0, n, BLOCK, num_stages=NUM_STAGES):
                    offs = start + tl.arange(0, BLOCK)
                    acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
                tl.store(y_ptr + tl.arange(0, BLOCK), acc)

            def run(x, y, n):
                row_sum[(1,)](x, y, n, BLOCK=128, NUM_STAGES=2)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
                acc = tl.zeros((BLOCK,), dtype=tl.float32)
                for start in tl.range(0, n, BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
                tl.store(y_ptr + tl.arange(0, BLOCK), acc)

            def run(x, y, n):
                row_sum[(1,)](x, y, n, BLOCK=128, NUM_STAGES=2)
            """,
        ),
        Invalid(
            """
            import triton

            def run(x):
                k[(1,)](x, **dict(num_stages=3))
            """,
            fixed="""
            import triton

            def run(x):
                k[(1,)](x, **dict())
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton

            def test_expanded_hints(kernel, summary):
                assert kernel.config_hints == {"GROUP_M": [2], "num_stages": [2, 1]}
                summary["selected_tiling"] = {"BLOCK": 64, "num_warps": 4}
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.autotune(configs=[triton.Config({"BLOCK": 128})], key=["n"], hints={"num_stages": [1, 2]})
            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
            """
        ),
        Valid(
            """
            import triton

            def run(x, n):
                add_one[(n,)](x, n, BLOCK=256)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton

            def run(x, n):
                add_one[(n,)](x, n, BLOCK=256, num_warps=4, force_simt_only=True)
            """
        ),
        Valid(
            """
            import triton

            cfg = triton.Config({"BLOCK": 64}, num_warps=4, force_simt_only=True)
            """
        ),
        Valid(
            """
            import triton

            def run(handlers, name, x):
                setup(x, num_warps=4)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def count(x_ptr, out_ptr, n, num_warps: tl.constexpr):
                lanes = tl.arange(0, num_warps * 32)
                tl.store(out_ptr + lanes, tl.load(x_ptr + lanes, mask=lanes < n), mask=lanes < n)

            def run(x, out, n):
                count[(1,)](x, out, n, num_warps=8)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
                acc = tl.zeros((BLOCK,), dtype=tl.float32)
                for start in tl.range(0, n, BLOCK, loop_unroll_factor=2):
                    acc += tl.load(x_ptr + start + tl.arange(0, BLOCK))
                tl.store(y_ptr + tl.arange(0, BLOCK), acc)
            """
        ),
        Valid(
            """
            import torch_npu
            import triton
            from vllm_ascend.utils import is_npu

            _is_npu = is_npu()

            def run(x, n):
                if not _is_npu:
                    add_one[(n,)](x, n, BLOCK=256, num_warps=4)
                else:
                    torch_npu.npu_add_one(x)
            """
        ),
    ]

    def __init__(self, context, options=None) -> None:
        super().__init__(context, options)
        # Every form this rule reports spells one of the two keywords out, so most files are done here.
        self._possible = any(keyword in context.text for keyword in _IGNORED)
        self._reported: set[int] = set()  # dict entries reported once, whether reached through a launch or not

    def visit_Dict(self, node: cst.Dict) -> None:
        if self._possible:
            self._check_keyword_dict(node, list(node.elements), _dict_entry_keyword)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._possible:
            return
        if self.facts.qualname(node.func) == "tl.range":
            self._check_loop(node)
            return
        if type(node.func) is cst.Name and node.func.value == "dict":
            self._check_keyword_dict(node, list(node.args), _dict_call_keyword)
            return
        if not self._is_launch_or_config(node) or _passes_simt(node):
            return
        if type(node.func) is cst.Subscript and not reached_on_npu(self.facts, node):
            return  # a launch the host code never reaches on an NPU
        own = self._kernel_params(node)
        for index, arg in enumerate(node.args):
            if arg.keyword is not None and arg.keyword.value in _IGNORED:
                if arg.keyword.value in own:  # the kernel's own argument, not a launch option
                    continue
                self._report_argument(arg, node.args, index, arg.keyword.value)
            elif arg.star == "**":
                self._check_kwargs_dict(node, arg.value)
        self._check_comments(node)

    def _check_loop(self, node: cst.Call) -> None:
        """``tl.range(..., num_stages=N)``: the frontend sets ``tt.num_stages`` on the loop, and triton-ascend's
        lowering to Linalg drops it (nothing of the Ascend backend reads it)."""
        for index, arg in enumerate(node.args):
            if arg.keyword is not None and arg.keyword.value == "num_stages":
                self.report(
                    arg,
                    _LOOP_MESSAGE,
                    fix_message="Remove `num_stages`",
                    edits=lambda loc, args=node.args, i=index: [edits.delete_argument(loc, list(args), i)],
                )

    def _kernel_params(self, call: cst.Call) -> set[str]:
        """Parameters of the launched kernel, when the module defines it or a linted module exports it: a kernel
        that declares its own ``num_warps`` (a real Triton-distributed kernel sizes its thread loop by it) takes
        ``num_warps=8`` at the launch as an argument, and removing it leaves a required argument missing."""
        if type(call.func) is not cst.Subscript:
            return set()
        name = dotted_name(call.func.value)
        if name is None:
            return set()
        kernel = self.facts.kernels.get(name)
        if kernel is not None:
            return set(kernel.params)
        summary = self.facts.imported_helpers.get(name)
        return set(summary.params) if summary is not None else set()

    def _is_launch_or_config(self, node: cst.Call) -> bool:
        """Any ``something[grid](...)`` call counts as a launch: kernels also arrive as parameters or attributes."""
        if type(node.func) is cst.Subscript:
            return True
        return self.facts.qualname(node.func) == "triton.Config"

    def _check_keyword_dict(self, node, entries: list, keyword_of) -> None:
        """A dict of launch keywords (``{"BLOCK": 1024, "num_warps": 4}``, ``dict(num_warps=4)``) that reaches a
        launch this module does not make, or not visibly (a launcher of another package, a helper that receives the
        dict): reported where the dict spells the keyword. A dict that a launch or Config of this module receives as
        ``**`` is reported through that launch (which knows whether the NPU reaches it), and one whose entry a launch
        reads (``num_warps=cfg["num_warps"]``) through the launch keyword."""
        found = [(index, keyword_of(entry)) for index, entry in enumerate(entries)]
        found = [(index, keyword) for index, keyword in found if keyword in _IGNORED]
        if not found or self._dict_left_to_a_launch(node) or self._dict_read_as_data(node):
            return
        if not reached_on_npu(self.facts, node):
            return
        for index, keyword in found:
            self._report_argument(entries[index], entries, index, keyword)

    def _dict_read_as_data(self, node) -> bool:
        """A dict that never becomes launch options: a value a test compares against (``assert cfg == {...}``), a
        record stored into a container or an attribute (``summary["tiling"] = {...}``), or the ``hints=`` of a
        newer triton-ascend autotuner, whose ``num_stages`` entries it maps to multibuffer settings."""
        index = self.context.index
        parent = index.parent(node)
        if type(parent) is cst.ComparisonTarget or (type(parent) is cst.Comparison and parent.left is node):
            return True
        if type(parent) is cst.Assign and all(type(t.target) in (cst.Subscript, cst.Attribute) for t in parent.targets):
            return True
        return type(parent) is cst.Arg and parent.keyword is not None and parent.keyword.value == "hints"

    def _dict_left_to_a_launch(self, node) -> bool:
        index = self.context.index
        parent = index.parent(node)
        if type(parent) is cst.Arg and parent.star == "**":
            return self._is_launch_or_config(index.parent(parent))
        if type(parent) is not cst.Assign or len(parent.targets) != 1 or type(parent.targets[0].target) is not cst.Name:
            return False
        name = parent.targets[0].target.value
        uses = [n for n in index.nodes if type(n) is cst.Name and n.value == name and n is not parent.targets[0].target]
        for use in uses:
            holder = index.parent(use)
            if type(holder) is cst.Arg and holder.star == "**" and self._is_launch_or_config(index.parent(holder)):
                return True
            if type(holder) is cst.Subscript and holder.value is use and _subscript_keyword(holder) in _IGNORED:
                return True
        return bool(uses) and not any(reached_on_npu(self.facts, use) for use in uses)

    def _report_argument(self, arg, args, index: int, keyword: str) -> None:
        if id(arg) in self._reported:
            return
        self._reported.add(id(arg))
        self.report(
            arg,
            self.message.format(keyword=keyword),
            fix_message=f"Remove `{keyword}`",
            edits=lambda loc: [edits.delete_argument(loc, list(args), index)],
        )

    def _check_kwargs_dict(self, call: cst.Call, value: cst.BaseExpression) -> None:
        for candidate in self._dict_values(call, value):
            if type(candidate) is cst.Dict:
                elements = list(candidate.elements)
                for index, element in enumerate(elements):
                    key = getattr(element, "key", None)
                    if type(key) is cst.SimpleString and key.evaluated_value in _IGNORED:
                        self._report_argument(element, elements, index, key.evaluated_value)
            elif type(candidate) is cst.Call and type(candidate.func) is cst.Name and candidate.func.value == "dict":
                for index, arg in enumerate(candidate.args):
                    if arg.keyword is not None and arg.keyword.value in _IGNORED:
                        self._report_argument(arg, candidate.args, index, arg.keyword.value)

    def _dict_values(self, call: cst.Call, value: cst.BaseExpression) -> list:
        if type(value) is not cst.Name:
            return [value]
        scope = next(
            (a for a in self.context.index.ancestors(call) if type(a) in (cst.FunctionDef, cst.Module)), None
        )
        if scope is None:
            return []
        found = []
        nodes = self.context.index.subtree(scope) if type(scope) is cst.FunctionDef else self.context.index.nodes
        for node in nodes:
            if type(node) is cst.Assign and any(
                type(t.target) is cst.Name and t.target.value == value.value for t in node.targets
            ):
                found.append(node.value)
        return found

    def _check_comments(self, call: cst.Call) -> None:
        collector = _CommentCollector()
        call.visit(collector)
        for comment in collector.comments:
            match = _IN_COMMENT.search(comment.value)
            if match is None:
                continue
            self.context.locator.place_within(comment, call)
            self.report(
                comment,
                self.message.format(keyword=match.group(1)) + " (commented out here)",
                fix_message=f"Remove the commented-out `{match.group(1)}`",
                edits=lambda loc, c=comment: [_comment_edit(loc, c)],
            )


def _dict_entry_keyword(element) -> str | None:
    key = getattr(element, "key", None)
    return key.evaluated_value if type(key) is cst.SimpleString else None


def _dict_call_keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _subscript_keyword(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
        return None
    key = node.slice[0].slice.value
    return key.evaluated_value if type(key) is cst.SimpleString else None


def _passes_simt(call: cst.Call) -> bool:
    return any(
        arg.keyword is not None
        and arg.keyword.value == "force_simt_only"
        and type(arg.value) is cst.Name
        and arg.value.value == "True"
        for arg in call.args
    )


def _comment_edit(loc, comment: cst.Comment):
    start, end = loc.offsets(comment)
    remainder = without_commented_keywords(comment.value)
    if not remainder:
        return edits.delete_span_or_line(loc, start, end)
    return edits.Edit(start, end, remainder)


def without_commented_keywords(comment: str) -> str:
    """The comment with every ``num_warps=``/``num_stages=`` item removed, "" when nothing else is left.

    A comment can hold several ``#`` parts (``# num_warps=4,  # tuned``): each part is cleaned on its own, keeps
    the spacing that separated it from the next one, and disappears with its ``#`` when it held only keywords.
    """
    parts = comment.split("#")[1:]
    kept = []
    for part in parts:
        cleaned = _drop_keywords(part)
        if cleaned.strip():
            kept.append(cleaned)
        elif not _KEYWORD_IN_COMMENT.search(part) and kept:
            kept.append(cleaned)  # an empty part that held no keyword (`##`) stays as written
    if not kept:
        return ""
    text = "#" + "#".join(kept)
    return text.rstrip()


def _drop_keywords(part: str) -> str:
    """Remove the keyword items of one ``#`` part with the comma that separates each from its neighbour."""
    trailing = part[len(part.rstrip()):]
    text = part.rstrip()
    while True:
        match = _KEYWORD_IN_COMMENT.search(text)
        if match is None:
            break
        begin, finish = match.span()
        after = re.match(r"[ \t]*,[ \t]*", text[finish:])
        before = re.search(r",[ \t]*$", text[:begin])
        if after is not None:  # `num_warps=4, BLOCK=64`: the item owns the comma after it
            finish += after.end()
        elif before is not None:  # `BLOCK=64, num_warps=4`: the last item owns the comma before it
            begin = before.start()
        else:  # `try num_warps=4 later`: take the blanks before it, so no double blank is left
            while begin > 0 and text[begin - 1] in " \t":
                begin -= 1
        text = text[:begin] + text[finish:]
    if not text.strip():
        return ""
    return text.rstrip() + trailing
