import re

import libcst as cst

from ascendlint import edits
from ascendlint.analysis.offset_threshold import offset_threshold
from ascendlint.analysis.test_shapes import tests_allocate_small_tensors
from ascendlint.analysis.syntax import argument
from ascendlint.diagnostics import Applicability, FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.text.lazy_regex import lazy


def _threshold(analysis, product, module) -> str:
    """Where the product the offset reaches wraps: ``; `bos * H * K` wraps once `bos` >= 2^31 / `H * K`, ...``."""
    if product is None:
        return ""
    shown = lambda node: " ".join(module.code_for_node(node).split())  # noqa: E731
    found = offset_threshold(analysis, product, shown)
    return f"; `{_short(shown(product))}` {found}" if found else ""


class SeqlensLoadedInt32(Rule):
    """Flags a token offset loaded and narrowed with `.to(tl.int32)` (or `tl.cast(.., tl.int32)`) that then
    reaches a product in pointer arithmetic that can pass 2^31."""

    decides = """
    The rule follows the data, not array names. A token offset is a loaded value that grows with the total token
    count: one of a pair of prefix-sum entries subtracted into a length (`eos - bos`), or a value added to token
    rows or multiplied by a runtime size. A loop over `range(bos, eos, BT)` counts up from `bos` in its type: the
    loop variable is the offset. A chunk or sequence index narrowed from `chunk_indices` (used to index
    another table or multiplied by a tile size) is small and is not reported; neither is a difference such as
    `T = (eos - bos).to(tl.int32)`, nor a bound used only in masks or lengths, nor a vector of ids gathered per
    element (`tl.load(row_ptr + offs)`, the rows of a sparse matrix: one start per sequence is a scalar). The
    kernels of a pytest module whose tests allocate every tensor from literal parameters, each of at most 2^31
    elements, are left alone: their offsets stay within those tensors.
    """

    code = "ASC203"
    name = "seqlens-loaded-int32"
    message = (
        "`{call}` narrows a loaded offset to 32 bits and it is multiplied in pointer arithmetic{threshold}; load it as"
        " int64"
    )
    severity = Severity.WARNING
    default = False
    opt_in_reason = (
        "below the 90% bar on repositories not used for tuning: 14 of 17 findings right over three untuned sets"
        " (one a position inside a sequence read from a sparse index array, two token offsets that wrap only past a"
        " million tokens); 40 of 40 read on the held-out tree and 14 of 14 on the fresh one; see docs/precision.md"
    )
    fix_safety = FixSafety.SAFE
    why = """
        Sequence starts loaded from `cu_seqlens` or chunk-offset arrays are token positions over the whole
        packed batch. Narrowed to int32, every product computed from them (`bos * H * K`) is 32-bit and wraps
        long before `bos` itself reaches 2^31, so the kernel reads or writes the wrong tokens, or faults with
        "DDR address out of range" on Ascend. Only products that can pass 2^31 count (the magnitude model of
        ASC202: about a million tokens per launch, per-token sizes by name): `bos * H` alone stays small.
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
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                o_k = tl.arange(0, K)
                for t0 in range(bos, eos, BT):
                    o_t = t0 + tl.arange(0, BT)
                    m = (o_t < eos)[:, None]
                    b_x = tl.load(x + (o_t[:, None] * H + i_h) * K + o_k[None, :], mask=m, other=0.0)
                    tl.store(o + (o_t[:, None] * H + i_h) * K + o_k[None, :], b_x * 2, mask=m)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                o_k = tl.arange(0, K)
                for t0 in range(bos, eos, BT):
                    o_t = t0 + tl.arange(0, BT)
                    m = (o_t < eos)[:, None]
                    b_x = tl.load(x + (o_t[:, None] * H + i_h) * K + o_k[None, :], mask=m, other=0.0)
                    tl.store(o + (o_t[:, None] * H + i_h) * K + o_k[None, :], b_x * 2, mask=m)
            """,
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
                end = language.load(chunk_offsets + i_n + 1)
                start = language.cast(start, language.int32)
                n = end - start
                row = start + i_t
                p = language.make_block_ptr(x + row * D, (n, D), (D, 1), (0, 0), (1, D), (1, 0))
                language.store(o + i_c, language.sum(language.load(p, boundary_check=(0, 1))))
            """,
            fixed="""
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
                end = language.load(chunk_offsets + i_n + 1)
                start = language.cast(start, language.int64)
                n = (end - start).to(language.int32)
                row = start + i_t
                p = language.make_block_ptr(x + row * D, (n, D), (D, 1), (0, 0), (1, D), (1, 0))
                language.store(o + i_c, language.sum(language.load(p, boundary_check=(0, 1))))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                p_x = tl.make_block_ptr(x + i_h * D, (eos, D), (H * D, 1), (bos, 0), (BT, D), (1, 0))
                b_x = tl.load(p_x, boundary_check=(0, 1))
                tl.store(o + (bos * H + i_h) * D + tl.arange(0, D), tl.sum(b_x, 0))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, cu_seqlens, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n).to(tl.int32)
                eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
                p_x = tl.make_block_ptr(x + i_h * D, (eos, D), (H * D, 1), (bos, 0), (BT, D), (1, 0))
                b_x = tl.load(p_x, boundary_check=(0, 1))
                tl.store(o + (tl.cast(bos, tl.int64) * H + i_h) * D + tl.arange(0, D), tl.sum(b_x, 0))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, chunk_indices, cu_seqlens, T, H: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
                i_c, i_h = tl.program_id(0), tl.program_id(1)
                i_n = tl.load(chunk_indices + i_c * 2).to(tl.int32)
                i_t = tl.load(chunk_indices + i_c * 2 + 1).to(tl.int32)
                bos = tl.load(cu_seqlens + i_n).to(tl.int64)
                p_x = tl.make_block_ptr(x + (bos * H + i_h) * D, (T, D), (H * D, 1), (i_t * BT, 0), (BT, D), (1, 0))
                b_x = tl.load(p_x, boundary_check=(0, 1))
                o_t = i_t * BT + tl.arange(0, BT)
                tl.store(o + (bos + o_t) * H + i_h, tl.sum(b_x, 1), mask=o_t < T)
            """
        ),
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
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, chunk_indices, H, K: tl.constexpr, BT: tl.constexpr):
                i_c, i_h = tl.program_id(0), tl.program_id(1)
                first = tl.load(chunk_indices + i_c * 2).to(tl.int32)
                o_k = tl.arange(0, K)
                for i_t in range(first, first + 4):
                    b_x = tl.load(x + (i_t * H + i_h) * K + o_k)
                    tl.store(o + (i_t * H + i_h) * K + o_k, b_x * 2)
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        if tests_allocate_small_tensors(self.facts):
            return  # a kernel of a test module: its offsets stay within the small tensors its tests allocate
        analysis = self.context.analysis(kernel)
        tables = analysis.index_tables
        reported: set[int] = set()
        block_sources = _block_offset_sources(analysis)
        uses: dict[int, list] = {}  # narrowed load -> the wrapping pointer expressions it reaches
        products: dict[int, cst.BaseExpression] = {}  # narrowed load -> the first wrapping product it reaches
        for pointer_expression, offsets in analysis.pointer_expressions:
            if _pointer_name(pointer_expression) in tables:
                continue
            for product in analysis.offset_nodes(offsets):
                if not (_is_product(product) and analysis.can_wrap(product) and not analysis.is_int64(product)):
                    continue
                factors = [product.left, product.right]
                for leaf in analysis.offset_nodes(factors, stop=lambda node: _is_length(analysis, node),
                                                  loop_starts=True):
                    if _narrowed_load(analysis, leaf):
                        uses.setdefault(id(leaf), [leaf])
                        if pointer_expression not in uses[id(leaf)][1:]:
                            uses[id(leaf)].append(pointer_expression)
                        products.setdefault(id(leaf), product)
        for key, (leaf, *pointers) in uses.items():
            if key in reported or not _is_token_offset(analysis, leaf):
                continue
            reported.add(key)
            self._report(analysis, leaf, pointers, reaches_block_offsets=key in block_sources, product=products[key])

    def _report(self, analysis, call: cst.Call, pointers, reaches_block_offsets: bool, product=None) -> None:
        _, dtype = analysis.cast_target(call)
        tl = self.facts.local_alias("tl", "tl")
        module = self.context.module
        lengths = _lengths_computed_from(analysis, call)
        widened_reads = _reads_in_pointers(analysis, call, pointers) if reaches_block_offsets else None

        def build(loc):
            if widened_reads is not None:  # keep the load narrow for the block pointer; widen at the bases
                return [edits.replace(loc, read, f"{tl}.cast({read.value}, {tl}.int64)") for read in widened_reads]
            found = [edits.replace(loc, dtype, f"{tl}.int64")]
            for length in lengths:
                found.append(edits.replace(loc, length, f"({module.code_for_node(length)}).to({tl}.int32)"))
            return found

        if reaches_block_offsets and not widened_reads:
            fix_message, build, applicability = None, None, None
        elif reaches_block_offsets:
            fix_message = "Widen the offset where it enters pointer arithmetic (it also sizes block pointer offsets)"
            applicability = None
        else:
            fix_message = "Load the offset as int64" + (" and narrow the lengths computed from it" if lengths else "")
            applicability = None
        self.report(
            call,
            self.message.format(call=_short(module.code_for_node(call)), threshold=_threshold(analysis, product, module)),
            fix_message=fix_message,
            edits=build,
            applicability=applicability,
        )


def _is_product(node) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply


def _pointer_name(expression) -> str | None:
    node = expression.target if type(expression) is cst.AugAssign else expression
    while type(node) is cst.BinaryOperation:
        node = node.left
    return node.value if type(node) is cst.Name else None


def _bound_names(analysis, call: cst.Call) -> list[str]:
    """The names a narrowed load is assigned to (`bos = tl.load(...).to(tl.int32)`, tuple targets included)."""
    statement = analysis.statement_of(call)
    names = []
    for binding in analysis._bindings.get(id(statement), ()) if statement is not None else ():
        name, definition = binding
        if definition.value is call or (definition.value is not None and _contains(definition.value, call)):
            names.append(name)
    return names


def _contains(expr, node) -> bool:
    stack = [expr]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(current.children)
    return False


_OFFSET_TABLE = lazy(r"cu_|seqlen|seq_len|offset|start|_loc|cumsum|indptr|prefix", re.IGNORECASE)
_INDEX_TABLE = lazy(r"indices|index|idx|_ids?$", re.IGNORECASE)


def _is_token_offset(analysis, call: cst.Call) -> bool:
    """A loaded value that grows with the token count (a prefix-sum entry), not a chunk or sequence index.

    Token offsets are subtracted from another loaded value into a length (`eos - bos`), multiplied by a runtime
    size, or loaded from a table named for offsets (`cu_seqlens`, `chunk_offsets`, `query_start_loc`); chunk and
    sequence indices are loaded from index tables (`chunk_indices`) and are not reported."""
    table = _loaded_table(analysis, call)
    if table is not None and _INDEX_TABLE.search(table):
        return False
    address = _loaded_address(analysis, call)
    if address is not None and analysis.is_tile(address):
        return False  # a vector of ids gathered per element (rows of a sparse matrix), not one start per sequence
    names = _bound_names(analysis, call)
    reads = [read for name in names for read in analysis.reads.get(name, ()) if _reads_binding(analysis, read, call)]
    for read in reads:
        parent = analysis.index.parent(read)
        while type(parent) is cst.Subscript:
            parent = analysis.index.parent(parent)
        if type(parent) is cst.BinaryOperation:
            other = parent.right if parent.left is read else parent.left
            if type(parent.operator) is cst.Subtract and analysis.is_loaded(other):
                return True
            if type(parent.operator) is cst.Multiply and not analysis.is_compile_time(other):
                return True
    return table is not None and bool(_OFFSET_TABLE.search(table))


def _loaded_address(analysis, call: cst.Call) -> cst.BaseExpression | None:
    """The address operand of the load a narrowing cast applies to (`cu_seqlens + i_n`), or None."""
    operand = analysis.cast_target(call)[0]
    if analysis.facts.is_call_to(operand, "tl.load") and operand.args:
        return operand.args[0].value
    return None


def _loaded_table(analysis, call: cst.Call) -> str | None:
    operand = analysis.cast_target(call)[0]
    for _ in range(4):
        if analysis.facts.is_call_to(operand, "tl.load") and operand.args:
            return _pointer_name(operand.args[0].value)
        cast = analysis.cast_target(operand) if type(operand) is cst.Call else None
        if cast is not None:
            operand = cast[0]
        elif type(operand) is cst.Name:
            values = [d.value for d in analysis.definitions(operand) if d.kind == "assign"]
            if len(values) != 1 or values[0] is None:
                return None
            operand = values[0]
        else:
            return None
    return None


def _reads_binding(analysis, read, call) -> bool:
    return any(d.value is call or (d.value is not None and _contains(d.value, call)) for d in analysis.definitions(read))


def _reads_in_pointers(analysis, call: cst.Call, pointers) -> list[cst.Name]:
    """The reads of the narrowed value inside the wrapping pointer expressions: where a cast to int64 widens the
    offset without touching the block pointer offsets."""
    names = set(_bound_names(analysis, call))
    found: dict[int, cst.Name] = {}
    for pointer in pointers:
        stack = [pointer]
        while stack:
            node = stack.pop()
            if type(node) is cst.Name and node.value in names and _reads_binding(analysis, node, call):
                found[id(node)] = node
            elif type(node) is not cst.Call:
                stack.extend(node.children)
    return list(found.values())


def _lengths_computed_from(analysis, call: cst.Call) -> list[cst.BinaryOperation]:
    """`eos - bos` differences assigned to a name and computed from ``call``: once the load is int64 they would be
    int64 too, and a length belongs in int32 (it sizes tiles, loops and block pointer shapes)."""
    found = []
    for node in analysis.nodes:
        named = type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name
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
        if type(node) in (cst.Tuple, cst.List):
            stack += [element.value for element in node.elements]
        elif type(node) is cst.BinaryOperation:
            stack += [node.left, node.right]
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
        elif type(node) is cst.Subscript:
            stack.append(node.value)
        elif type(node) is cst.IfExp:
            stack += [node.body, node.orelse]
        elif type(node) is cst.Call and analysis.cast_target(node) is None:
            stack += [a.value for a in node.args]
        elif type(node) is cst.Name:
            for definition in analysis.definitions(node):
                if definition.kind in ("assign", "augmented", "loop"):
                    stack.append(definition.value)
                if definition.kind == "augmented":
                    stack.append(definition.statement.target)  # `p += step` also keeps what `p` was
    return seen


def _is_length(analysis, node) -> bool:
    """`eos - bos` of two loaded positions is a length: it fits 32 bits whatever the positions are."""
    return (
        type(node) is cst.BinaryOperation
        and type(node.operator) is cst.Subtract
        and analysis.is_loaded(node.left)
        and analysis.is_loaded(node.right)
    )


def _narrowed_load(analysis, node) -> bool:
    """A narrowing cast of a value that is itself loaded (not of arithmetic such as `eos - bos`)."""
    if type(node) is not cst.Call or not analysis.is_narrowing_cast(node):
        return False
    return _loaded(analysis, analysis.cast_target(node)[0], 0)


def _loaded(analysis, value: cst.BaseExpression, depth: int) -> bool:
    if analysis.facts.is_call_to(value, "tl.load"):
        return True
    if type(value) is cst.Call and analysis.cast_target(value) is not None and depth < 4:
        return _loaded(analysis, analysis.cast_target(value)[0], depth + 1)
    if type(value) is cst.Name and depth < 4:
        definitions = analysis.definitions(value)
        return bool(definitions) and all(
            d.kind == "assign" and d.value is not None and _loaded(analysis, d.value, depth + 1) for d in definitions
        )
    return False


def _short(code: str, limit: int = 60) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."
