import libcst as cst

from ascendlint.analysis.launch_sizes import data_dependent_constexprs, unlaunched_task_counts
from ascendlint.analysis.run_sizes import run_sizes
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid


class RuntimeSizeAsConstexpr(Rule):
    """Flags a `tl.constexpr` parameter whose launch value changes with the input data."""

    decides = """
    Reported once per parameter, on its declaration (where the fix goes), naming the launch.
    The value is followed back through the host code that launches (`T = x.shape[1]`, `NT = triton.cdiv(T, BT)`,
    `rows = x.view(-1, D).shape[0]`). It counts as data-dependent when the parameter or a host name it comes from
    names a count of tokens, rows, sequences, batches, tasks, chunks or pages (`T`, `M`, `B`, `num_tokens`,
    `seq_len`, `NT`, `task_num`, `num_pages`), when it is the rows of a flattened tensor, or, for a parameter whose
    name says nothing, when it is the first dimension of a tensor. A parameter named like a model dimension (`N`,
    `D`) is reported when the launch passes it a host name that spells out a count of the data (`N=num_tokens`,
    `D=batch_size`): the host's word outranks the kernel's. Not reported: tile sizes, flags, model
    dimensions (`H`, `K`, `V`, `head_dim`, `hidden_size`), literals, values under `min(..., cap)` or a guard that
    bounds them, values rounded to a power of two (`triton.next_power_of_2(n)`: a few buckets), and values passed
    on from a launching function's own parameter with a literal default of 2 or more (`split_size: int = 256`: a
    setting; a sentinel such as `max_len: int = -1` stands for the real size and does not count).
    Nor, whatever the names say: an axis after the sequence axis of a shape unpacking of rank 3 or more
    (`S` of `B, T, H, S = g.shape`, `rows` of `batch, seq_len, rows, cols = x.shape`: a feature or the heads of
    each token); a value with few possible values (a literal on every host path, `max`/`min` of such values, a
    row count over a literal of 65535 or more: at most 17 values up to a million rows); `len()` of a list the
    launch unpacks into the kernel (`*indices`: no more than the kernel has parameters); a dimension of a tensor
    the host builds with literal sizes (`mask = torch.ones(1024, 3072)`), also where it builds it only when the
    caller passes none (a parameter defaulting to `None`). Nor in a closed test module or script (its launches
    reached only from its own tests or `__main__`) that spells every size it allocates in literals: its kernels are
    compiled for those cases only.
    A kernel the module never launches (its host code lives elsewhere) is reported only for a constexpr that is
    the stop of its core-grid task loop (`for t in tl.range(core_id, task_num, num_core)`): a task count.
    """

    code = "ASC107"
    name = "runtime-size-as-constexpr"
    message = "constexpr `{param}` gets a size that changes with the data ({why}): every new value compiles the kernel again"
    severity = Severity.ADVISORY
    fix_safety = FixSafety.NONE
    default = False
    opt_in_reason = (
        "an advisory about compile time, not correctness, and below the default bar: of 30 findings sampled on "
        "fresh Ascend code, 25 passed a size that changes with the data and 5 did not (a block length read "
        "from a shape that is fixed per configuration, a decode length of 1 or 2 the kernel needs at compile "
        "time, sizes fixed by the model): 83%. Whether a size varies in production is often decided outside "
        "the module."
    )
    why = """
        A `tl.constexpr` parameter is part of the compiled kernel: Triton compiles (and caches) one binary per
        distinct value. Passing a token count, a row count or a count of tasks derived from them as a constexpr
        compiles the kernel again for each new value, and an Ascend compile through BiShengIR takes seconds, so a
        serving loop whose batch changes every step spends its time compiling. Real Ascend kernels have been fixed
        by turning such parameters into plain runtime integers, and by computing bucketed sizes on the host.
    """
    fix_notes = """
        Drop the `tl.constexpr` annotation so the value is a runtime argument (add the name to
        `do_not_specialize` if it can be 1 and must not be specialised). Where the kernel needs the value at
        compile time (a tile shape), round it on the host to a few buckets (`triton.next_power_of_2`, a small
        fixed set) and pass the runtime size separately for masking.
    """
    INVALID = [
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def cumsum_kernel(x, y, T: tl.constexpr, H: tl.constexpr, BT: tl.constexpr):
                i_t, i_h = tl.program_id(0), tl.program_id(1)
                offs = i_t * BT + tl.arange(0, BT)
                b = tl.load(x + offs * H + i_h, mask=offs < T, other=0.0)
                tl.store(y + offs * H + i_h, tl.cumsum(b, axis=0), mask=offs < T)

            def cumsum(x: torch.Tensor) -> torch.Tensor:
                T, H = x.shape
                y = torch.empty_like(x)
                BT = 64
                cumsum_kernel[(triton.cdiv(T, BT), H)](x, y, T=T, H=H, BT=BT)
                return y
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scan(x, y, n_rows, NT: tl.constexpr, D: tl.constexpr, BT: tl.constexpr):
                pass

            def run(x, chunk):
                rows = x.view(-1, x.shape[-1]).shape[0]
                NT = triton.cdiv(rows, chunk)
                scan[(NT,)](x, x, rows, NT, x.shape[-1], 64)
                scan[(1,)](x, x, rows, NT=rows, D=128, BT=64)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kkt(k, A, T, H: tl.constexpr, BT: tl.constexpr, task_num: tl.constexpr, num_core: tl.constexpr):
                for task in tl.range(tl.program_id(0), task_num, num_core):
                    i_bh = task % H
                    tl.store(A + task * BT + tl.arange(0, BT), tl.load(k + i_bh * T + tl.arange(0, BT)))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def paged(cache, out, PAGES: tl.constexpr, BLOCK: tl.constexpr):
                pass

            def decode(cache, out, block_tables):
                paged[(out.shape[0],)](cache, out, block_tables.shape[0], 128)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import pytest
            import torch
            import torch_npu
            import triton
            import triton.language as tl

            @triton.jit
            def prefix_product(out_ptr, x_ptr, N: tl.constexpr):
                offs = tl.arange(0, N)
                tl.store(out_ptr + offs, tl.cumprod(tl.load(x_ptr + offs), 0))

            @pytest.mark.parametrize("shape", [(1024,), (2048,)])
            def test_prefix_product(shape):
                x = torch.rand(shape, device="npu")
                out = torch.empty_like(x)
                prefix_product[1, 1, 1](out, x, x.shape[0])
            """
        ),
        Valid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def cumsum_kernel(x, y, T, H: tl.constexpr, BT: tl.constexpr):
                i_t = tl.program_id(0)
                offs = i_t * BT + tl.arange(0, BT)
                for i_h in range(H):
                    b = tl.load(x + offs * H + i_h, mask=offs < T, other=0.0)
                    tl.store(y + offs * H + i_h, tl.cumsum(b, axis=0), mask=offs < T)

            def cumsum(x: torch.Tensor) -> torch.Tensor:
                T, H = x.shape
                y = torch.empty_like(x)
                BT = 64
                cumsum_kernel[(triton.cdiv(T, BT),)](x, y, T=T, H=H, BT=BT)
                return y
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attn(q, o, T, K: tl.constexpr, V: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_T: tl.constexpr,
                     IS_VARLEN: tl.constexpr, NB: tl.constexpr, BS: tl.constexpr, SCALE_MODE: tl.constexpr):
                pass

            def run(q, k, v, cu_seqlens, T):
                B, T, H, K = q.shape
                V = v.shape[-1]
                BLOCK_T = min(triton.next_power_of_2(T), 128)
                NB = triton.next_power_of_2(B)
                if T <= 64:
                    BS = T
                else:
                    BS = 64
                attn[(B * H,)](q, q, T, K, V, q.shape[3], BLOCK_T, cu_seqlens is not None, NB, BS, 1)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def norm(x, y, N: tl.constexpr, BLOCK: tl.constexpr):
                pass

            def run(x):
                rows, hidden = x.shape
                norm[(rows,)](x, x, hidden, triton.next_power_of_2(hidden))
            """
        ),
    ]

    def finish(self) -> None:
        reported: set[tuple[int, str]] = set()
        # a closed test module or script that spells every size it allocates in literals compiles its kernels for
        # those cases only: a small fixed set of values, whatever the launch reads them from
        at_literal_sizes = run_sizes(self.facts) is not None
        for found in () if at_literal_sizes else data_dependent_constexprs(self.facts):
            kernel = found.launch.kernel
            key = (id(kernel.node), found.param)
            if key in reported:
                continue
            reported.add(key)
            row = self.context.locator.span(found.argument)[0].row
            self.report(
                _param_node(kernel.node, found.param),
                self.message.format(param=found.param, why=f"{found.why}, at the launch on line {row}"),
            )
        for kernel, param in unlaunched_task_counts(self.context):
            if (id(kernel.node), param) not in reported:
                self.report(_param_node(kernel.node, param), self.message.format(
                    param=param, why="the task count of its core-grid loop, computed from shapes by the host"))


def _param_node(function: cst.FunctionDef, name: str) -> cst.CSTNode:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param
    return function.name
