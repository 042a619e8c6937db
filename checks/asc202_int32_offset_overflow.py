import re

import libcst as cst

from ascendlint import edits
from ascendlint.analysis.host_arguments import allocated_per_head_matrices, host_argument_bounds, indexes_small_tensor
from ascendlint.analysis.magnitudes import FEATURE_BITS, SMALL_BITS, name_bits
from ascendlint.analysis.offset_threshold import offset_threshold
from ascendlint.analysis.spelling import as_parsed
from ascendlint.analysis.test_shapes import tests_allocate_small_tensors
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


# The magnitude model and the host facts it reads, on the pages of ASC202 and of its review sweep ASC207.
HOST_FACTS_AND_MAGNITUDES = """
    Host facts: a launch argument is read from what the host passes (`x.stride(0)` of an activation is a
    per-token size below 2^15, `logits.stride(0)` and `logits.size(1)` a vocabulary below 2^18,
    `k_cache.stride(0)` a KV block below 2^18, `x.shape[0]` of an activation a row count below 2^20,
    `x.stride(-1)` is 1, literals and `min(..., cap)` their value), and where no launch is visible, from the
    parameter's name by the magnitude model below. A tensor the host allocates with four or more dimensions
    whose last two are per-token sizes (`new_empty(N, HV, K, V)`) holds a matrix per sequence and head: batch
    x heads x K x V passes 2^31 at a few thousand sequences, whatever its name (a real fix widened
    `i_nh * K * V` into such a state). A pytest module whose test functions allocate every tensor from literal
    parameters, each of at most 2^31 elements, bounds what its reference kernels index.

    Magnitudes: up to about a million tokens per launch, tensors over 2^31 elements. Program ids are below 2^16
    (a few dozen on a core grid), or below the host size of their grid axis; loop variables below their bounds;
    loaded offsets below 2^20; `x % n` below `n`; integer parameters as large as their names say (`H` heads
    below 2^7, `K`/`V`/`D` and row strides below 2^15, `T` tokens below 2^20, batch strides a whole sequence;
    2^16 when the name says nothing); a sequence index times a token count is a token offset (below 2^21);
    a last-dimension stride the launch passes as `x.stride(-1)` is 1.
    """


class Int32OffsetOverflow(Rule):
    """Flags pointer arithmetic whose int32 offset multiplies a runtime index into a value that can pass 2^31, in a
    tensor that the launching host code shows can hold that many elements."""

    decides = """
    A runtime index comes from `tl.program_id`, a loop variable or a loaded scalar (or is computed from them), and
    the product needs a runtime extent (an integer parameter, or a constexpr the host shows large): a literal or a
    tile size is none. What decides is the tensor indexed and the extent: the launch's arguments are followed back
    through the host code (`x.stride(0)` of an activation is a per-token size, `logits.stride(0)` and
    `V = logits.size(1)` are vocab-sized, `k_cache.stride(0)` spans a KV block, `x.shape[0]` of an activation
    counts rows, `x.stride(-1)` is 1, `new_empty(N, HV, K, V)` is a state of a matrix per sequence and head).
    Where the module launches the kernel, the offset is reported when the host shows it large: it starts at a
    token offset or a loaded id (`bos = tl.load(cu_seqlens + i_n)`, `bos = i_n * T`, a state slot), it steps by
    a row stride the launch reads from a large tensor (`row * stride_b` with `stride_b = logits.stride(0)`), or it
    points into a state the host allocates per sequence and head. In a module that launches no kernel (its host
    code lives elsewhere) a per-row extent is known by its name instead (`K`, `V`, `D`, `hidden_size`,
    `stride_*`, a token count `T`). Offsets into tensors that stay small (weights, per-sequence vectors,
    statistics, block tables, signal buffers), offsets that already hold an int64 value on every path, per-row
    scalar reads, and the kernels of a pytest module whose tests allocate tensors of at most 2^31 elements are left
    alone. The products this leaves out (rows of a grid or loop with no host sign of a large tensor, an extent
    the analysis cannot classify) are ASC207's review sweep.

    A row length the launch passes as a `tl.constexpr` from an activation's shape (`N=x.shape[-1]`) steps by rows
    like a row stride: the index stays int32 whatever the constexpr. An index loaded from a tensor that every launch
    passes as int64 (`torch.zeros(n, dtype=torch.int64)`, `.long()`, `.to(torch.int64)`) is int64 already, however it
    is named; narrowed with `.to(tl.int32)`, or loaded from an int32 tensor, it is not. The message states the index
    at which the product wraps (`row * row_stride` wraps once `row` >= 2^31 / `row_stride`), with a figure at the
    sizes the magnitude model allows the other factors.

    A product computed in an earlier statement (`base = row * stride_b`, used in `x + base + offs` below) is
    reported as a range from the product to the pointer expression: the first line, where `# noqa` goes, is the
    product the fix edits.
    """ + HOST_FACTS_AND_MAGNITUDES

    code = "ASC202"
    name = "int32-offset-overflow"
    sweep = False  # the opt-in review sweep (ASC207) reports the products this rule leaves to it
    options = {"report-unproven-rows": False}
    options_notes = """
        `report-unproven-rows`: also report products whose row index comes from a program id or a loop whose
        extent the module does not show to count tokens (no token-sized grid, bound or offset), rows the host
        gives no sign of a large tensor for (the part ASC207 sweeps), and per-row scalar reads
        (`rstd + rows * stride`). Such products wrap only for tensors beyond 2^31 elements that the
        code gives no sign of; on real code about half of them are bounded (decode-time, per-request or weight
        tensors), so they are off by default.
    """
    message = "`{product}`{where} multiplies a runtime index by a runtime extent in int32 and can wrap past 2^31"
    severity = Severity.WARNING
    fix_safety = FixSafety.UNSAFE
    default = False
    opt_in_reason = (
        "below the 90% bar on repositories not used for tuning: 12 of 15 findings right on an untuned set of 8"
        " Ascend repositories (a rotary table bounded by its width, a position inside one sequence, a launcher that"
        " never runs on the NPU); it catches 3 of 4 real upstream fixes of this trap; see docs/precision.md"
    )
    why = """
        Integer index arithmetic in a Triton kernel is 32-bit unless an operand is int64. Once batch x sequence x
        head x dim passes 2^31 elements, an offset such as `(bos * H + i_h) * K` wraps and the load or store
        touches the wrong rows, or faults with "DDR address out of range" on Ascend. Widening the first runtime
        index makes the whole offset 64-bit.
    """
    fix_notes = """
        The fix wraps the first runtime index of each product in `tl.cast(..., tl.int64)`. It is unsafe because it
        changes the integer type of the offset (and of anything else computed from that expression).
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (bos * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, cu_seqlens, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                bos = tl.load(cu_seqlens + i_n)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (tl.cast(bos, tl.int64) * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as language

            @triton.jit
            def kernel(x_ptr, y_ptr, stride_x, n_cols, BM: language.constexpr, BN: language.constexpr):
                pid = language.program_id(0)
                rows = pid * BM + language.arange(0, BM)
                cols = language.arange(0, BN)
                mask = cols[None, :] < n_cols
                vals = language.load(
                    x_ptr
                    + rows[:, None] * stride_x + cols[None, :],
                    mask=mask,
                )
                language.store(y_ptr + rows[:, None] * stride_x + cols[None, :], vals * 2.0, mask=mask)

            def launch(x, y):
                n_rows, n_cols = x.shape
                grid = (triton.cdiv(n_rows, 16),)
                kernel[grid](x, y, x.stride(0), n_cols, BM=16, BN=256)
            """,
            fixed="""
            import triton
            import triton.language as language

            @triton.jit
            def kernel(x_ptr, y_ptr, stride_x, n_cols, BM: language.constexpr, BN: language.constexpr):
                pid = language.program_id(0)
                rows = pid * BM + language.arange(0, BM)
                cols = language.arange(0, BN)
                mask = cols[None, :] < n_cols
                vals = language.load(
                    x_ptr
                    + language.cast(rows[:, None], language.int64) * stride_x + cols[None, :],
                    mask=mask,
                )
                language.store(y_ptr + language.cast(rows[:, None], language.int64) * stride_x + cols[None, :], vals * 2.0, mask=mask)

            def launch(x, y):
                n_rows, n_cols = x.shape
                grid = (triton.cdiv(n_rows, 16),)
                kernel[grid](x, y, x.stride(0), n_cols, BM=16, BN=256)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D, BT: tl.constexpr):
                NT = tl.cdiv(T, BT)
                for i_b in range(0, 4):
                    for i_t in range(0, NT):
                        p = x_ptr + i_b * T * D
                        p += i_t * BT * D
                        tl.store(p + tl.arange(0, BT), tl.zeros([BT], dtype=tl.float32))
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, D, BT: tl.constexpr):
                NT = tl.cdiv(T, BT)
                for i_b in range(0, 4):
                    for i_t in range(0, NT):
                        p = x_ptr + tl.cast(i_b, tl.int64) * T * D
                        p += tl.cast(i_t, tl.int64) * BT * D
                        tl.store(p + tl.arange(0, BT), tl.zeros([BT], dtype=tl.float32))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def clear_row(y_ptr, seq_len, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BLOCK)
                tl.store(y_ptr + row * seq_len + cols, 0.0, mask=cols < seq_len)

            @triton.jit
            def kernel(y_ptr, seq_len, BLOCK: tl.constexpr):
                clear_row(y_ptr, seq_len, BLOCK)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def clear_row(y_ptr, seq_len, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BLOCK)
                tl.store(y_ptr + tl.cast(row, tl.int64) * seq_len + cols, 0.0, mask=cols < seq_len)

            @triton.jit
            def kernel(y_ptr, seq_len, BLOCK: tl.constexpr):
                clear_row(y_ptr, seq_len, BLOCK)
            """,
        ),
        Invalid(
            """
            import triton
            from vllm.triton_utils import tl

            @triton.jit
            def kernel(q, k, o, T, D: tl.constexpr, BT: tl.constexpr):
                i_n = tl.program_id(0)
                bos = i_n * T
                offs = tl.arange(0, BT)
                b_q = tl.load(q + bos * D + offs)
                b_k = tl.load(k + bos * D + offs)
                tl.store(o + bos * D + offs, b_q + b_k)
            """,
            fixed="""
            import triton
            from vllm.triton_utils import tl

            @triton.jit
            def kernel(q, k, o, T, D: tl.constexpr, BT: tl.constexpr):
                i_n = tl.program_id(0)
                bos = i_n * T
                offs = tl.arange(0, BT)
                b_q = tl.load(q + tl.cast(bos, tl.int64) * D + offs)
                b_k = tl.load(k + tl.cast(bos, tl.int64) * D + offs)
                tl.store(o + tl.cast(bos, tl.int64) * D + offs, b_q + b_k)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(a_ptr, c_ptr, M, stride_am, BM: tl.constexpr, BK: tl.constexpr):
                pid = tl.program_id(0)
                offs_m = pid * BM + tl.arange(0, BM)
                offs_m = tl.where(offs_m < M, offs_m, 0)
                offs_k = tl.arange(0, BK)
                tile = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :])
                tl.store(c_ptr + offs_m[:, None] * BK + offs_k[None, :], tile)

            def launch(a, c):
                M = a.shape[0]
                kernel[(triton.cdiv(M, 64),)](a, c, M, a.stride(0), BM=64, BK=128)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(a_ptr, c_ptr, M, stride_am, BM: tl.constexpr, BK: tl.constexpr):
                pid = tl.program_id(0)
                offs_m = pid * BM + tl.arange(0, BM)
                offs_m = tl.where(offs_m < M, offs_m, 0)
                offs_k = tl.arange(0, BK)
                tile = tl.load(a_ptr + tl.cast(offs_m[:, None], tl.int64) * stride_am + offs_k[None, :])
                tl.store(c_ptr + offs_m[:, None] * BK + offs_k[None, :], tile)

            def launch(a, c):
                M = a.shape[0]
                kernel[(triton.cdiv(M, 64),)](a, c, M, a.stride(0), BM=64, BK=128)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def row_max(logits_ptr, out_ptr, B, V, stride_b, BLOCK_V: tl.constexpr):
                pid = tl.program_id(0)
                for row in tl.range(pid, B, tl.num_programs(0)):
                    base = row * stride_b
                    best = tl.full((), float("-inf"), tl.float32)
                    for start in range(0, V, BLOCK_V):
                        offs = start + tl.arange(0, BLOCK_V)
                        x = tl.load(logits_ptr + base + offs, mask=offs < V, other=float("-inf"))
                        best = tl.maximum(best, tl.max(x, axis=0))
                    tl.store(out_ptr + row, best)

            def run(logits, out, cores):
                B, V = logits.shape
                row_max[(min(cores, B),)](logits, out, B, V, logits.stride(0), BLOCK_V=1024)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def row_max(logits_ptr, out_ptr, B, V, stride_b, BLOCK_V: tl.constexpr):
                pid = tl.program_id(0)
                for row in tl.range(pid, B, tl.num_programs(0)):
                    base = tl.cast(row, tl.int64) * stride_b
                    best = tl.full((), float("-inf"), tl.float32)
                    for start in range(0, V, BLOCK_V):
                        offs = start + tl.arange(0, BLOCK_V)
                        x = tl.load(logits_ptr + base + offs, mask=offs < V, other=float("-inf"))
                        best = tl.maximum(best, tl.max(x, axis=0))
                    tl.store(out_ptr + row, best)

            def run(logits, out, cores):
                B, V = logits.shape
                row_max[(min(cores, B),)](logits, out, B, V, logits.stride(0), BLOCK_V=1024)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kkt(k, A, cu_seqlens, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
                i_b, i_h = tl.program_id(0), tl.program_id(1)
                if IS_VARLEN:
                    bos = tl.load(cu_seqlens + i_b)
                else:
                    bos = i_b.to(tl.int64) * T
                o_t = tl.arange(0, BT)
                b_k = tl.load(k + (bos * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :])
                tl.store(A + i_b * BT + o_t, tl.sum(b_k, 1))

            def run(k, A, cu_seqlens):
                B, T, H, K = k.shape
                kkt[(B, H)](k, A, cu_seqlens, T, H=H, K=K, BT=16, IS_VARLEN=cu_seqlens is not None)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kkt(k, A, cu_seqlens, T, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr, IS_VARLEN: tl.constexpr):
                i_b, i_h = tl.program_id(0), tl.program_id(1)
                if IS_VARLEN:
                    bos = tl.load(cu_seqlens + i_b)
                else:
                    bos = i_b.to(tl.int64) * T
                o_t = tl.arange(0, BT)
                b_k = tl.load(k + (tl.cast(bos, tl.int64) * H + i_h) * K + o_t[:, None] * (H * K) + tl.arange(0, K)[None, :])
                tl.store(A + i_b * BT + o_t, tl.sum(b_k, 1))

            def run(k, A, cu_seqlens):
                B, T, H, K = k.shape
                kkt[(B, H)](k, A, cu_seqlens, T, H=H, K=K, BT=16, IS_VARLEN=cu_seqlens is not None)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, rstd, stride_x, stride_rstd, BM: tl.constexpr, BN: tl.constexpr):
                rows = tl.program_id(0) * BM + tl.arange(0, BM)
                cols = tl.arange(0, BN)
                b_x = tl.load(x + rows[:, None] * BN + cols[None, :])
                tl.store(rstd + rows * stride_rstd, tl.sum(b_x, 1))

            def launch(x, rstd):
                n_rows = x.shape[0]
                kernel[(triton.cdiv(n_rows, 8),)](x, rstd, x.stride(0), rstd.stride(0), BM=8, BN=128)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x, o, stride_row, BN: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BN)
                tl.store(o + row * stride_row + cols, tl.load(x + row * stride_row + cols))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(k_cache, out, block_table, stride_bt, stride_k, H, BD: tl.constexpr):
                req_idx = tl.program_id(0)
                block = tl.load(block_table + req_idx * stride_bt)
                offs = tl.arange(0, BD)
                tl.store(out + req_idx * H * BD + offs, tl.load(k_cache + block * stride_k + offs))

            def launch(k_cache, out, block_table):
                kernel[(block_table.shape[0],)](
                    k_cache, out, block_table, block_table.stride(0), k_cache.stride(-1), 8, BD=128
                )
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(q, o, H, K, BK: tl.constexpr):
                i_n, i_h = tl.program_id(0), tl.program_id(1)
                o_k = tl.arange(0, BK)
                b_q = tl.load(q + (tl.cast(i_n, tl.int64) * H + i_h) * K + o_k)
                tl.store(o + o_k, b_q)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, stride, BT: tl.constexpr, D: tl.constexpr):
                i_t = tl.program_id(0)
                o_t = i_t * BT + tl.arange(0, BT)
                x = tl.load(x_ptr + o_t * D, mask=o_t < T)
                cols = tl.arange(0, BT)
                tl.store(y_ptr + cols * stride, x)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, H, K, BT: tl.constexpr):
                i_b = tl.program_id(0).to(tl.int64)
                i_h = tl.program_id(1)
                base = (i_b * T * H + i_h) * K
                widened = (i_h * T).to(tl.int64)
                tl.store(y_ptr + base + tl.arange(0, BT), tl.load(x_ptr + widened + tl.arange(0, BT)))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, y_ptr, T, H, BT: tl.constexpr):
                i_t = tl.program_id(0)
                n = T * H
                scale = i_t * T
                tl.store(y_ptr + i_t, scale + n)
                p = x_ptr + i_t * BT
                for i in range(0, tl.cdiv(T, BT)):
                    p += BT
                tl.store(p + tl.arange(0, BT), tl.zeros([BT], dtype=tl.float32))
            """
        ),
    ]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kernel = self.facts.kernels.get(node.name.value)
        if kernel is None or kernel.node is not node:
            return
        if tests_allocate_small_tensors(self.facts):
            return  # a kernel of a test module, run over the small tensors its tests allocate
        analysis = self.context.analysis(kernel)
        tl = self.facts.local_alias("tl", "tl")
        tables = analysis.index_tables
        everything = self.settings["report-unproven-rows"]
        # where the module launches its kernels, the host code must show the offset large: a token offset or loaded
        # id, a host row stride, or a state allocated per (sequence, head); other rows are the sweep's
        hosted = bool(self.facts.launches)
        groups: dict[object, list] = {}  # one finding per unwidened index, however many offsets it reaches
        for pointer_expression, offsets in analysis.pointer_expressions:
            if _pointer_name(pointer_expression) in tables:
                continue
            if not everything and _per_row_scalars(analysis, offsets):
                continue
            nodes = analysis.offset_nodes(offsets)
            if any(analysis.is_int64(n) for n in analysis.offset_nodes(offsets, stop=_mixed_width(analysis))):
                continue  # int64 on every path (a value widened on one path only still wraps on the other)
            # a state the host allocates as a matrix per (sequence, head) grows with the batch, not the tokens
            states = _indexes_per_head_matrices(self.facts, kernel, pointer_expression)
            wrapping = [n for n in nodes if _is_product(n) and not analysis.is_int64(n)
                        and self._wraps(analysis, n, everything or states)]
            if _indexes_small_tensor(self.facts, kernel, pointer_expression):
                continue  # an in-bounds offset into a small tensor (a weight, a table, a signal buffer) cannot wrap
            proven = [n for n in wrapping if analysis.host_proven(n) and (
                not hosted or everything or states or self._starts_at_token_offset(analysis, n)
                or self._steps_by_host_row_stride(kernel, n))]
            wrapping = (wrapping if not proven else []) if self.sweep else proven
            if not wrapping:
                continue
            local = set(map(id, analysis.offset_nodes(offsets, stop=lambda n: type(n) is cst.Name)))
            wrapping.sort(key=lambda product: id(product) not in local)  # show a product written here first
            key = _index_key(analysis, _first_index_leaf(analysis, wrapping[0]))
            groups.setdefault(key, []).append((pointer_expression, wrapping))
        for members in groups.values():
            self._report(analysis, members, tl)

    @staticmethod
    def _wraps(analysis, product: cst.BinaryOperation, everything: bool) -> bool:
        """A runtime index times something else whose product can pass 2^31; by default only when the product
        scales with the tokens of the launch (a token count or offset, a loaded offset, or rows of a grid sized by
        a token count)."""
        factors = _factors(product)
        if len(factors) < 2 or not any(analysis.is_runtime_index(f) for f in factors):
            return False
        if not (analysis.is_runtime_extent(product) or analysis.host_proven(product)):
            return False  # `slot * 16`, `i * BLOCK`: a literal or a tile size is not a runtime extent
        if not analysis.can_wrap(product):
            return False
        return everything or analysis.scales_with_tokens(product)

    @staticmethod
    def _starts_at_token_offset(analysis, product: cst.BinaryOperation) -> bool:
        """`(bos * H + i_h) * K`, `(i_h * T_all + bos) * K`, `tmp0 * HV * K * V`: a name in the product is a sequence
        start or a loaded offset or id, whose value grows with the tokens (or the slots) of a launch."""
        return any(type(n) is cst.Name and _names_token_offset(analysis, n) for n in _arithmetic(product))

    def _steps_by_host_row_stride(self, kernel, product: cst.BinaryOperation) -> bool:
        """`row * stride_b` with `stride_b = logits.stride(0)`: a factor is a row stride the launch reads from a
        tensor shown large (an activation, vocab-sized logits, a KV cache)."""
        for node in _arithmetic(product):
            if type(node) is cst.Name and node.value in kernel.params:
                bound = host_argument_bounds(self.facts, kernel, node.value)
                if bound is not None and _ROW_STRIDE_EVIDENCE.search(bound.evidence) \
                        and bound.kind_bits >= FEATURE_BITS:
                    return True
                if bound is not None and _ROW_LENGTH_EVIDENCE.search(bound.evidence) and _row_length_step(
                        product, node.value):
                    return True
        return False

    def _report(self, analysis, members, tl: str) -> None:
        pointer_expression, wrapping = members[0]
        products = [p for _, found in members for p in found]
        wrapping_ids = {id(p) for p in products}
        memo: dict[int, bool] = {}
        leaves = [_first_index_leaf(analysis, p) for p in products]
        leaves = [leaf for leaf in leaves if not _widened_where_defined(analysis, leaf, wrapping_ids, memo)]
        module = self.context.module
        shown = " ".join(module.code_for_node(wrapping[0]).split())
        locate = self.context.locator.span
        product_start, (here_start, here_end) = locate(wrapping[0])[0], locate(pointer_expression)
        where = "" if product_start.row == here_start.row else f" (line {product_start.row})"
        # a product computed in an earlier statement (`base = row * stride`, used in `x + base + offs` below): the
        # range runs from the product to the pointer expression, so the line the fix edits is part of the finding
        span = (product_start, here_end) if product_start.row < here_start.row else None
        more = len({as_parsed(module, p) for p, _ in members}) - 1  # an offset written twice (a reload) is one
        also = f"; {more} more offset{'s use' if more > 1 else ' uses'} the same index" if more else ""

        def build(loc):
            unique = {id(leaf): leaf for leaf in leaves}.values()
            return [edits.replace(loc, leaf, f"{tl}.cast({_bare_code(module, leaf)}, {tl}.int64)") for leaf in unique]

        threshold = offset_threshold(analysis, wrapping[0], lambda node: " ".join(module.code_for_node(node).split()))
        self.report(
            pointer_expression,
            self.message.format(product=shown, where=where) + (f"; it {threshold}" if threshold else "") + also,
            fix_message="Cast the first runtime index to int64" + (" in each of them" if more else ""),
            edits=build,
            span=span,
        )


_ROW_STRIDE_EVIDENCE = re.compile(r"^=.*stride\((0|1)\)")  # read from the host tensor itself, a leading stride
# the row length of an activation passed for a row stride (`N=x.shape[-1]`, also as a `tl.constexpr`: the index
# stays int32 whatever the constexpr)
_ROW_LENGTH_EVIDENCE = re.compile(r"^=.*\.shape\[(-1|1)\], a per-token size$")


def _row_length_step(product, name: str) -> bool:
    """`row * N`: the index times the row length alone steps by rows of a `[rows, N]` tensor. With more factors
    (`i * HV * V`, `i_b * seq_len * NUM_HEADS`) the length is an inner extent of a larger layout, and a length
    named for a small count (heads, groups) is no row of an activation."""
    factors = _factors(product)
    return len(factors) == 2 and any(type(f) is cst.Name and f.value == name for f in factors) and (
        name_bits(name) > SMALL_BITS)


def _names_token_offset(analysis, name: cst.Name) -> bool:
    """A name bound, on some path, to a value loaded from memory (`bos = tl.load(cu_seqlens + i_n)`, a state slot
    `tl.load(state_indices + i_n)`) or to a sequence index times a token count (`bos = i_n * T`); a name merely
    computed from such values (a loop bound, `last = min(i_t * BT + BT, T) - 1`) is not one."""
    facts = analysis.facts
    for definition in analysis.definitions(name):
        value = definition.value if definition.kind == "assign" else None
        while type(value) is cst.Call and analysis.cast_target(value) is not None:
            value = analysis.cast_target(value)[0]
        if value is None:
            continue
        if facts.is_call_to(value, "tl.load") or _is_product(value) and analysis.is_token_offset(value):
            return True
    return False


def _mixed_width(analysis):
    """A name that is int64 on some paths and int32 on others (`bos` widened in the fixed-length branch, loaded
    as it is in the varlen one): its int64 definitions do not widen the offset on the other paths."""
    return lambda node: type(node) is cst.Name and analysis.may_be_int64(node) and not analysis.is_int64(node)


def _indexes_small_tensor(facts, kernel, pointer_expression) -> bool:
    """The offset points into a pointer parameter whose tensor stays small (weights, states, statistics)."""
    name = _pointer_name(pointer_expression)
    return name is not None and name in kernel.params and indexes_small_tensor(facts, kernel, name)


def _indexes_per_head_matrices(facts, kernel, pointer_expression) -> bool:
    name = _pointer_name(pointer_expression)
    return name is not None and name in kernel.params and allocated_per_head_matrices(facts, kernel, name)


def _index_key(analysis, leaf) -> object:
    """What identifies an unwidened index: the definitions that reach a name (through `rows[:, None]`), or the
    node itself."""
    while type(leaf) is cst.Subscript:
        leaf = leaf.value
    if type(leaf) is cst.Name:
        return (leaf.value, frozenset(id(d) for d in analysis.definitions(leaf)))
    return id(leaf)


def _per_row_scalars(analysis, offsets) -> bool:
    """`rstd + rows * stride`: one vector of row indices times a stride and no other vector term reads one value
    per row (a per-row statistic: its stride is 1, its size the row count)."""
    tiles = [o for o in offsets if analysis.is_tile(o)]
    return len(tiles) == 1 and len(offsets) == 1 and _is_product(tiles[0])


def _pointer_name(expression) -> str | None:
    node = expression.target if type(expression) is cst.AugAssign else expression
    while type(node) is cst.BinaryOperation:
        node = node.left
    return node.value if type(node) is cst.Name else None


def _is_product(node) -> bool:
    return type(node) is cst.BinaryOperation and type(node.operator) is cst.Multiply


def _factors(product: cst.BaseExpression) -> list[cst.BaseExpression]:
    if _is_product(product):
        return _factors(product.left) + _factors(product.right)
    return [product]


def _widened_where_defined(analysis, leaf, wrapping_ids: set[int], memo: dict[int, bool]) -> bool:
    """A name whose every definition computes a wrapping product: the fix there widens the name too."""
    if type(leaf) is not cst.Name:
        return False
    definitions = analysis.definitions(leaf)
    for definition in definitions:
        if id(definition) not in memo:
            memo[id(definition)] = (
                definition.kind == "assign"
                and definition.value is not None
                and any(id(n) in wrapping_ids for n in _arithmetic(definition.value))
            )
    return bool(definitions) and all(memo[id(d)] for d in definitions)


def _arithmetic(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expression and its operands through arithmetic, without following names."""
    found, stack = [], [expr]
    while stack:
        node = stack.pop()
        found.append(node)
        if type(node) is cst.BinaryOperation:
            stack += [node.left, node.right]
        elif type(node) is cst.UnaryOperation:
            stack.append(node.expression)
    return found


def _first_index_leaf(analysis, expr: cst.BaseExpression) -> cst.BaseExpression:
    """The first operand, in evaluation order, that carries the runtime index (through parentheses and sums)."""
    while type(expr) is cst.BinaryOperation:
        expr = expr.left if analysis.is_runtime_index(expr.left) else expr.right
    if type(expr) is cst.UnaryOperation and analysis.is_runtime_index(expr.expression):
        return _first_index_leaf(analysis, expr.expression)
    return expr


def _bare_code(module: cst.Module, node: cst.CSTNode) -> str:
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    return module.code_for_node(node)
