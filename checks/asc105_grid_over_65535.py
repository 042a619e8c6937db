import libcst as cst

from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.grid import launch_grid
from ascendlint.analysis.grid_factors import Kind, LaunchGrid, division_parts
from ascendlint.analysis.grid_threshold import grid_threshold
from ascendlint.analysis.module_role import is_test_or_benchmark, launches_for_decode
from ascendlint.analysis.npu_reach import reached_on_npu
from ascendlint.analysis.run_sizes import launch_bound
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.analysis.literals import integer_value

_LIMIT = 65535


class GridOver65535(Rule):
    """Flags a launch whose grid size grows with the data and has no cap, so it can pass 65535 programs."""

    decides = """
    The grid is followed through the launching host function (tuples, `lambda meta: (...)` and `def grid(meta)`,
    where `meta["M"]` is what the launch passes for `M`, names assigned from `triton.cdiv`, `numel()`, shapes and
    conditional expressions). Each factor of the grid product is a literal, a core count, a tile count of a
    runtime extent (`triton.cdiv(M, BM)`, `(n + B - 1) // B`), a total size or a plain extent (`B`,
    `x.shape[0]`). The launch is flagged when its size is a literal above 65535, when two tile counts of
    runtime extents multiply (M-tiles x N-tiles), when three or more runtime sizes multiply (`(NT, B * H)`;
    `cdiv(B * T, 64)` counts two), or when an axis counts a total size: the elements of a tensor
    (`cdiv(x.numel(), BLOCK)`, `cdiv(B * T * D, BLOCK)`) or its flattened rows, one program (or a small tile)
    per token (`x.view(-1, D).shape[0]`, `b * s` of `b, s, _ = x.shape`, a product of dimensions built in a host
    loop, `rows *= x.shape[i]`, or by `math.prod(x.shape[:dim])`).

    An axis that counts tokens or rows is read from the host code that launches (case (e) of the catalog): one
    program per token or row (`(num_tokens, H)`, `(n_rows,)`, `(N, cdiv(V, BV))` with `N, V = logits.shape`,
    `x.shape[0]` of an activation, `len(x)`) is reported, since a prefill of 64K tokens passes the limit; a tile count
    of tokens (`cdiv(T, BT)`, `len(block_info)` of a list of row blocks) is reported once another runtime size
    multiplies it (`[cdiv(T, BT), B * H]`, `(cdiv(M, BM), ngroups)`) or when its tile holds fewer than 16 rows.
    The M-tiles of routed MoE tokens (a host name such as `num_m_tiles`, `tile_row_start.shape[0]`) count tiles over
    every token of the launch: times a model dimension's tile count (`lambda meta: (num_m_tiles, cdiv(I,
    meta["BLOCK_N"]))`) they are reported, alone (`(num_m_tiles,)`) they are not. A launch through a local name
    bound to one of several kernels (`fn = k32 if BT == 32 else k64`, then `fn[grid](...)`) is read as a launch of
    the first. The message states the size at which the grid passes the limit, in the host's names (`passes 65535
    programs once T > 1,048,560`), the other factors taken at 1; a conditional axis gives the threshold of each side.
    Magnitudes: up to about a million tokens per launch; the leading dimension of weights, biases, rotary tables,
    block tables, sequence offsets and states, and host names that say heads, batch or speculative lengths, are not
    token counts. Nor are the query tokens of a decode step (a launch in a host function or of a kernel named for
    decoding, `paged_decode`, `_decode_score_kernel`; not `decoder`): a token or a few per request, read as a batch
    of requests unless the grid's literal factors alone pass the limit within 4096 of them (`(total_q, 256)`). A host `while` loop before the launch that grows a block until a size fits a literal
    (`while triton.cdiv(n, block) > 65535: block *= 2`) caps what it grows.

    Reported here only when the host code backs the growth: a factor counts tokens or rows by the host tensors (the
    leading dimension of an activation, its flattened rows, `batch * seq_len`, the sequence axis of `B, T, H, K =
    k.shape` or of a `[batch, seq_len]` token-id tensor, a host name of a token count or sequence length such as `T`,
    `seq_len`, `num_tokens` or `n_ctx`), a whole-tensor axis is divided by a literal tile of at most 4096 (`cdiv(n,
    1024)`: past the limit at 2**28 elements), a weight's channels are split into tiles of at most 16, or the grid is a
    literal above 65535. A split `(progs, cdiv(total, progs))` over a bounded axis is read as `total` programs, and
    `min(blocks, 65535 // n)` on one axis caps the product with the axis `n`. Grids that grow without such backing (GEMM
    tile counts of matrices the host does not tie to tokens, generic row counts `M` of a general-purpose op,
    whole-tensor grids over autotuned or large tiles) are ASC110's review sweep, and so is every launch in a test or a
    benchmark (a `tests/`, `unit_tests/` or `benchmarks/` folder below the linted tree, `test_*.py`, `*_test.py`,
    `bench_*.py`, `conftest.py`): a suite runs its launches at sizes it picks, and a grid past the limit fails on its
    first run, while a library launcher stays silent until a user sends a large input. So is a launch for decoding (the
    kernel or the host function that launches it is named for it, `paged_attention_decode`) whose literal factors
    alone take a decode batch past the limit: its rows are the requests of a decode step. The two never report the
    same launch.

    Not reported: a factor under `min(..., cap)` or computed per chunk inside a host loop `for start in range(0, n,
    step)`; grids sized from the core count, also indirectly (`cdiv(n, ceil(n / CORES))`, `cdiv(num_vectorcore, n_cols)
    x n_cols`, a host name such as `num_vectorcore` unpacked from a device query); plain extents (`(B, H)`, `(B * H,)`),
    including the number of segments of an offsets array (`cu_seqlens.numel() - 1`) and a head count taken from a
    per-head tensor (`H = A_log.numel()`); a ratio of two sizes (`N // group_size`); tile counts of a model dimension
    (`cdiv(V, BV)`, `cdiv(head_dim, BD)`, the last dimension of a `[B, T, H, D]` tensor), which the model fixes whatever
    the batch or the sequence length; a square-root split (`cdiv(n, next_power_of_2(ceil(sqrt(n))))`, about `sqrt(n)`
    programs, also with the block capped at 32768 or more); a grid whose product of axes a host condition bounds
    by the limit (`assert NT * B * H <= 65535`, `if math.prod(grid) > 65535: raise`, `grid[0] * grid[1] < 65536`); a
    size the enclosing host conditions bound by a literal (`if N <= 128:`, through a host flag such as `use_split =
    (N <= 128) and ...`, or after `if n > 4096: raise`), also a
    tensor's shape the host asserts or checks before the launch (`assert x.shape == (4096, 1024)`, `x.size(0) > 8192`
    raising, `assert x.numel() == 1024 * 1024`); a conditional expression whose test bounds the side it selects (`g if g
    < 65536 else 2048`, `t if t <= cores else min(t, cores * 4)`), or whose `x is None` side the launch's own guard (`if
    x is not None:`) excludes. A conditional with one uncapped side that can be taken stays reported. A module that sets
    `TRITON_ALL_BLOCKS_PARALLEL` itself has chosen the launcher's clamping and is not flagged. Nor is a launch the host
    code never reaches on an NPU: in a function the module rebinds under an NPU test (`if current_platform.is_npu():
    launcher = native_impl`), in a branch that is false on the NPU (`if not _is_npu:`, the `else` of `if is_npu():`, `if
    x.is_cuda and ...:`), or after an exit taken there (`if _is_npu: return torch_npu.npu_op(...)`, `if not x.is_cuda:
    raise`, `assert x.is_cuda`, also through a host name assigned once from such a test); a test the linter cannot
    decide keeps the launch reported. Nor is a launch of a test module or a script (a `test_*.py` or `*_test.py` file, a
    module importing pytest, or one with an `if __name__ == "__main__":` block) that no other linted module imports,
    whose launchers are called only from its own tests or main block, and whose every tensor allocation spells its
    dimensions with literals (directly, through `pytest.mark.parametrize`, through a function's parameters at every
    call, through a literal list of shapes a loop iterates, through module-level shape tuples and dicts of them such
    as `M, N = SHAPE_2D`): each extent is bounded by the largest dimension those tensors take (the rows of
    `x.reshape(-1, x.shape[-1])` by the product of their leading dimensions, `numel()` by their elements), a tile
    count by the largest extent over the smallest tile the module spells (`triton.cdiv(T, chunk)` with both
    parametrized), and a grid that stays at or under 65535 programs at those sizes is quiet. One size the module does
    not spell (a fixture of another file, a loaded tensor) and nothing is known.
    """

    code = "ASC105"
    name = "grid-over-65535"
    message = "launch grid can exceed 65535 programs: {reason}"
    severity = Severity.WARNING
    sweep = False  # the opt-in review sweep (ASC110) reports the grids this rule leaves to it
    default = False
    opt_in_reason = (
        "below the 90% bar: on an untuned set 7 of 18 findings were right before tests, benchmarks and launches the"
        " NPU never reaches were left out (7 of 7 after), and a stricter reading of this version on the trees it was"
        " tuned on found 60-89% (host helpers that size the grid to fit, decode-only kernels, tutorials at one small"
        " size); it catches 12 of 12 real upstream fixes of this trap; see docs/precision.md"
    )
    fix_safety = FixSafety.NONE
    why = """
        On Ascend the product of the grid axes (coreDim) must be at most 65535: triton-ascend's launcher refuses
        larger grids with `grid should be less than 65536!`, and distributed runs have been seen to hang instead.
        A grid that scales with the input passes small tests and fails on production shapes. Setting
        `TRITON_ALL_BLOCKS_PARALLEL=1` lifts the limit only by clamping the blocks to the physical cores, which
        changes how the kernel runs (programs that wait on each other can hang).
    """
    fix_notes = """
        Launch one program per physical core (`get_device_properties(dev)["num_vectorcore"]`, or `num_aicore` for
        kernels using `tl.dot`) and loop over the tiles inside the kernel
        (`for task in range(pid, n_tasks, num_programs)`), or cap the grid with `min(..., cap)`.

        `x.is_cuda` is read as the catalog reads it, CUDA-only evidence: a launch reached only when it holds is not
        reported. A project that patches `torch.Tensor.is_cuda` to answer for NPU tensors (as some Ascend ports do
        with `torch_npu`'s transfer helpers) runs those launches on the NPU, and this rule does not see them there.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x):
                n = x.numel()
                scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton import language as language

            @triton.jit
            def chunk_fwd(q_ptr, T, H, BT: language.constexpr):
                pass

            def run(q, B, T, H):
                NT = triton.cdiv(T, 64)
                chunk_fwd[(NT, B * H)](q, T, H, BT=64)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def fill(x_ptr, BLOCK: tl.constexpr):
                pass

            def run(x, B, T, D):
                fill[(triton.cdiv(B * T * D, 512),)](x, BLOCK=512)
            """,
        ),
        Invalid(
            """
            import triton

            @triton.jit
            def k(x_ptr):
                pass

            ROWS = 512

            def run(x):
                k[(ROWS, 256)](x)
            """,
        ),
        Invalid(
            """
            import triton as tt
            from triton import cdiv

            @tt.jit
            def add(x_ptr, y_ptr, n_rows, n_cols, BR: tt.language.constexpr, BC: tt.language.constexpr):
                pass

            def run(x, y):
                rows, cols = x.shape
                add[
                    (
                        tt.cdiv(rows, 16),
                        cdiv(cols, 256),
                    )
                ](x, y, rows, cols, BR=16, BC=256)
            """,
        ),
        Invalid(
            """
            import triton

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, BM: triton.language.constexpr, BN: triton.language.constexpr):
                pass

            def run(a, b, c):
                grid = lambda meta: (triton.cdiv(meta["M"], meta["BM"]) * triton.cdiv(meta["N"], meta["BN"]),)
                matmul[grid](a, b, c, a.shape[0], b.shape[1], BM=64, BN=64)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rms_rows(x_ptr, n_rows, D: tl.constexpr, BR: tl.constexpr):
                pass

            def run(x):
                b, s, _ = x.shape
                rms_rows[(triton.cdiv(b * s, 8),)](x, b * s, D=x.shape[-1], BR=8)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def norm_row(x_ptr, D: tl.constexpr):
                pass

            def run(x):
                D = x.shape[-1]
                T = x.view(-1, D).shape[0]
                norm_row[(T,)](x, D=D)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunk_scan(q_ptr, T, BT: tl.constexpr):
                pass

            def run(q, cu_seqlens, chunk_indices, BT=64):
                B, T, H, K = q.shape
                NT = triton.cdiv(T, BT) if cu_seqlens is None else len(chunk_indices)
                chunk_scan[(NT, B * H)](q, T, BT=BT)
            """,
        ),
        Invalid(
            """
            import os

            os.environ.setdefault("TRITON_ALL_BLOCKS_PARALLEL", "0")

            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x):
                n = x.numel()
                scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
            """
        ),
        Invalid(
            """
            import math

            import triton
            import triton.language as tl

            @triton.jit
            def partial_sum(x_ptr, mid_ptr, n, BLOCK: tl.constexpr):
                pass

            def total(x, mid):
                n = x.numel()
                block = min(triton.next_power_of_2(math.ceil(math.sqrt(n))), 2048)
                partial_sum[(triton.cdiv(n, block),)](x, mid, n, BLOCK=block)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def count_blocks(x_ptr, n, BLOCK: tl.constexpr):
                pass

            def count(x, max_programs=None):
                n = x.numel()
                blocks = triton.cdiv(n, 1024)
                programs = blocks if max_programs is None else min(blocks, max_programs)
                count_blocks[(programs,)](x, n, BLOCK=1024)
            """
        ),
        Invalid(
            """
            import math

            import triton
            import triton.language as tl

            @triton.jit
            def row_max(x_ptr, n_cols, BLOCK: tl.constexpr):
                pass

            def leading_rows(x, dim):
                rows = 1
                for i in range(dim):
                    rows *= x.shape[i]
                row_max[(rows, 1, 1)](x, x.shape[dim], BLOCK=1024)

            def last_dim_rows(x):
                rows = math.prod(x.shape[:-1])
                row_max[(triton.cdiv(rows, 4),)](x, x.shape[-1], BLOCK=1024)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import torch
            import triton
            import triton.language as tl

            @triton.jit
            def row_norm(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
                pass

            def norm(x):
                M, N = x.reshape(-1, x.shape[-1]).shape
                y = torch.empty_like(x)
                row_norm[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
                return y

            if __name__ == "__main__":
                for shape in [(128, 128), (512, 512)]:
                    norm(torch.randn(shape).npu())
            """,
        ),
        Valid(
            """
            import os

            os.environ["TRITON_ALL_BLOCKS_PARALLEL"] = "1"

            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x):
                n = x.numel()
                scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton.runtime import driver

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                n_programs = tl.num_programs(0)
                for start in range(pid * BLOCK, n, n_programs * BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x):
                n = x.numel()
                cores = driver.active.utils.get_device_properties(x.device.index)["num_vectorcore"]
                scale[(min(cores, triton.cdiv(n, 1024)),)](x, n, BLOCK=1024)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton

            @triton.jit
            def k(x_ptr, B, H):
                pass

            def run(x, B, H):
                k[(B, H)](x, B, H)
                k[(B * H,)](x, B, H)
            """
        ),
        Valid(
            """
            import triton

            @triton.jit
            def k(x_ptr, D, N, BD: triton.language.constexpr):
                pass

            def run(x, D, N):
                k[(triton.cdiv(D, 64), N)](x, D, N, BD=64)
            """
        ),
        Valid(
            """
            import triton

            @triton.jit
            def k(x_ptr, n, BLOCK: triton.language.constexpr):
                pass

            def run(x):
                n = x.numel()
                k[lambda meta: (min(triton.cdiv(n, meta["BLOCK"]), 65535),)](x, n, BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton

            @triton.jit
            def k(x_ptr, n, BLOCK: triton.language.constexpr):
                pass

            def run(x):
                n = x.numel()
                step = 65535 * 1024
                for start in range(0, n, step):
                    rest = min(n - start, step)
                    k[(triton.cdiv(rest, 1024),)](x[start:], rest, BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton

            @triton.jit
            def k(x_ptr, n, BLOCK: triton.language.constexpr):
                pass

            def run(x, B, H, chunk):
                flat = x.view(-1)
                for start in range(0, flat.numel(), chunk):
                    part = flat[start : start + chunk]
                    k[(triton.cdiv(part.numel(), 1024),)](part, part.numel(), BLOCK=1024)
                for b0 in range(0, B, chunk):
                    k[(triton.cdiv(H * 64, 1024), chunk, H)](x[b0:], H, BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton
            from triton.runtime import driver

            @triton.jit
            def k(x_ptr, n):
                pass

            def run(x):
                props = driver.active.utils.get_device_properties(0)
                n_cores = props["num_vectorcore"]
                k[(n_cores,)](x, x.numel())
                k[(128, 256)](x, x.numel())
            """
        ),
        Valid(
            """
            import math

            import triton
            import triton.language as tl

            @triton.jit
            def gather(x_ptr, n, BLOCK: tl.constexpr):
                pass

            def run(x, props):
                n = x.numel()
                cores = props["num_vectorcore"]
                block = math.ceil(n / cores)
                grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
                gather[grid](x, n, BLOCK=block)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def split_rows(x_ptr, n_rows, BLOCK: tl.constexpr):
                pass

            def run(x, device_properties, kv_hidden, head_dim):
                _, num_vectorcore = device_properties()
                n_cols = kv_hidden // head_dim
                n_rows = (num_vectorcore + n_cols - 1) // n_cols
                split_rows[(n_rows, n_cols, 1)](x, x.shape[0], BLOCK=head_dim)
                groups = x.shape[-1] // head_dim
                split_rows[(triton.cdiv(num_vectorcore, groups), groups)](x, x.shape[0], BLOCK=head_dim)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def attn_bwd(q_ptr, seq_offsets, A_log, BLOCK: tl.constexpr):
                pass

            def run(q, seq_offsets, A_log):
                batch = seq_offsets.numel() - 1
                _, head_num, head_dim = q.shape
                attn_bwd[(batch * head_num, 1)](q, seq_offsets, A_log, BLOCK=64)
                H = A_log.numel()
                attn_bwd[(batch, H)](q, seq_offsets, A_log, BLOCK=64)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def chunk_out(o_ptr, V, BV: tl.constexpr):
                pass

            def run(o, v, cu_seqlens, dim):
                B, T, H, V = v.shape
                N = B if cu_seqlens is None else len(cu_seqlens) - 1
                chunk_out[lambda meta: (triton.cdiv(V, meta["BV"]), N * H)](o, V, BV=64)
                _, _, _, e = v.shape
                NV = triton.cdiv(e, 32)
                chunk_out[(NV, N, H)](o, V, BV=32)
                chunk_out[(triton.cdiv(B, 8), triton.cdiv(dim, 512))](o, V, BV=512)
            """
        ),
        Valid(
            """
            import triton

            @triton.jit
            def norm(x_ptr, M, ngroups, BLOCK_M: triton.language.constexpr):
                pass

            def run(x, M, N, group_size):
                ngroups = N // group_size
                norm[(triton.cdiv(N, 64), ngroups)](x, M, ngroups, BLOCK_M=64)
            """
        ),
        Valid(
            """
            import math

            import triton
            import triton.language as tl

            @triton.jit
            def partial_sum(x_ptr, mid_ptr, n, BLOCK: tl.constexpr):
                pass

            def total(x, mid):
                n = x.numel()
                block = triton.next_power_of_2(math.ceil(math.sqrt(n)))
                partial_sum[(triton.cdiv(n, block),)](x, mid, n, BLOCK=block)
                wide = min(triton.next_power_of_2(math.ceil(math.sqrt(n))), 32768)
                partial_sum[(triton.cdiv(n, wide),)](x, mid, n, BLOCK=wide)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def dist_part(x_ptr, mid_ptr, d, BLOCK: tl.constexpr):
                pass

            def distances(x, mid):
                d = x.shape[-1]
                rows = x.numel() // d
                chunks = triton.cdiv(d, 4096)
                split = (rows <= 128) and (chunks >= 256)
                if split:
                    dist_part[(rows, chunks)](x, mid, d, BLOCK=4096)
                    return mid
                if rows > 4096:
                    raise ValueError("too many rows")
                dist_part[(rows,)](x, mid, d, BLOCK=4096)
                return mid
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scan_tiles(x_ptr, n, BLOCK: tl.constexpr):
                pass

            def scan(x, num_cores, max_programs=None):
                n = x.numel()
                tiles = triton.cdiv(n, 2048)
                ctas = tiles if tiles < 65536 else 4096
                scan_tiles[(ctas,)](x, n, BLOCK=2048)
                workers = tiles if tiles <= num_cores else min(tiles, num_cores * 4)
                scan_tiles[(workers,)](x, n, BLOCK=2048)
                programs = tiles if max_programs is None else min(tiles, max_programs)
                if max_programs is not None:
                    scan_tiles[(programs,)](x, n, BLOCK=2048)
            """
        ),
        Valid(
            """
            import torch
            import torch_npu
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                pass

            def run(x):
                if x.device.type == "npu":
                    return torch_npu.npu_scale(x)
                n = x.numel()
                scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)

            def run_cuda(x, y):
                if x.is_cuda and y.is_cuda:
                    n = x.numel()
                    scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
                else:
                    torch.mul(x, y, out=x)
            """
        ),
    ]

    def finish(self) -> None:
        if _opts_into_block_clamping(self.context.index):
            return
        suite = is_test_or_benchmark(self.facts)
        for launch in self.facts.launches:
            if not reached_on_npu(self.facts, launch.call):
                continue
            grid = launch_grid(self.facts, launch)
            code = self.context.module.code_for_node
            # a test or benchmark runs its launches at sizes it picks, and a decode step's rows are its requests: every
            # such grid is the sweep's
            if suite or launches_for_decode(self.facts, launch):
                found = unbounded_finding(grid, code) or unbounded_finding(grid, code, True) if self.sweep else None
            else:
                found = unbounded_finding(grid, code, self.sweep)
            if found is None:
                continue
            bound = launch_bound(self.facts, launch, grid.expr)
            if bound is not None and bound <= _LIMIT:
                continue  # a test or script that runs it only at the sizes it spells out
            reason, blamed = found
            threshold = grid_threshold(grid, blamed, lambda node: _text(code, node)) if blamed is not None else None
            self.report(launch.call, self.message.format(reason=reason) + (f"; {threshold}" if threshold else ""))


def _opts_into_block_clamping(index) -> bool:
    """The module itself sets `TRITON_ALL_BLOCKS_PARALLEL` (not to "0"): large grids are a deliberate choice there,
    the launcher clamps them to the physical cores instead of refusing them."""
    for node in index.of_type(cst.Call, cst.Assign):
        if type(node) is cst.Call:
            func = node.func
            named = type(func) is cst.Attribute and func.attr.value in ("setdefault", "putenv")
            values = [a.value for a in node.args]
            if named and len(values) == 2 and _is_switch_name(values[0]) and not _is_zero(values[1]):
                return True
        else:
            targets = [t.target for t in node.targets]
            names_switch = any(type(t) is cst.Subscript and _subscript_names_switch(t) for t in targets)
            if names_switch and not _is_zero(node.value):
                return True
    return False


def _subscript_names_switch(target: cst.Subscript) -> bool:
    return len(target.slice) == 1 and type(target.slice[0].slice) is cst.Index and _is_switch_name(
        target.slice[0].slice.value
    )


def _is_switch_name(node) -> bool:
    return type(node) is cst.SimpleString and node.evaluated_value == "TRITON_ALL_BLOCKS_PARALLEL"


def _is_zero(node) -> bool:
    return type(node) is cst.SimpleString and node.evaluated_value == "0"


# A whole-tensor grid over a literal tile of at most this many elements passes 65535 programs at 2**28 elements
# (a 16K-token by 16K-feature activation); over larger or autotuned tiles it takes tensors the host does not show.
_PRECISE_TILE = 4096


def unbounded_reason(grid: LaunchGrid, code, sweep: bool = False) -> str | None:
    """Why the grid can pass the limit, or None when it is bounded or not visible."""
    found = unbounded_finding(grid, code, sweep)
    return found[0] if found else None


def unbounded_finding(grid: LaunchGrid, code, sweep: bool = False):
    """(why the grid can pass the limit, the factor that grows), or None when it is bounded or not visible. ASC105
    takes the first reason the host code backs with tokens, rows or a small literal tile; the sweep takes the first
    reason of a grid that has none of those."""
    found = list(_reasons(grid, code))
    precise = [(reason, factor) for reason, backed, factor in found if backed]
    if sweep:
        return (found[0][0], found[0][2]) if found and not precise else None
    return precise[0] if precise else None


def _reasons(grid: LaunchGrid, code):
    """(reason, backed by the host) for each way the grid can pass the limit, the catalog's order."""
    if grid.axes is None:
        return
    size = grid.static_size
    if size is not None:
        if size > _LIMIT:
            yield f"it launches {size} programs", True, None
        return
    growing = [factor for factor in grid.factors if factor.grows_with_data]
    wide = [factor for factor in grid.factors if factor.wide and not factor.capped and not factor.chunked]
    others = [factor for factor in growing if not factor.wide]
    if wide and others:
        yield (f"{_spelled(grid, wide[0], code)} splits the channels of a weight into tiles of at most 16 (about a"
               f" thousand programs) times `{_text(code, others[0].expr)}`"), True, others[0]
    totals = [factor for factor in growing if factor.kind is Kind.TOTAL_SIZE]
    backed = [f for f in totals if f.tokens and f.host_tokens or f.tile is not None and f.tile <= _PRECISE_TILE]
    for total in backed[:1] or totals[:1]:
        yield f"{_spelled(grid, total, code)} counts the rows or elements of a whole tensor", bool(backed), total
    tiles = [factor for factor in growing if factor.kind is Kind.TILE_COUNT]
    if len(tiles) >= 2:
        yield (f"tile counts of two runtime extents multiply (`{_text(code, tiles[0].expr)}` and "
               f"`{_text(code, tiles[1].expr)}`)"), any(t.tokens and t.host_tokens for t in tiles), tiles[0]
    runtime = sum(factor.weight for factor in growing)
    if runtime >= 3:
        yield f"{runtime} runtime sizes multiply in `{_text(code, grid.expr)}`", any(
            f.tokens and f.host_tokens for f in growing), _largest(growing)
    found = _token_axis_reason(grid, growing, code)
    if found is not None:
        yield found[0], any(f.tokens and f.host_tokens for f in growing), found[1]


def _largest(factors: list):
    """The factor that grows fastest: a token count first, then the heaviest (``B * T * D`` counts three)."""
    return max(factors, key=lambda f: (f.tokens, f.kind is Kind.TOTAL_SIZE, f.weight)) if factors else None


def _token_axis_reason(grid: LaunchGrid, growing: list, code):
    """Case (e): an axis counting tokens or rows. One program per token or row passes 65535 at a prefill of 64K
    tokens; a token tile count (`cdiv(T, BT)`) does once another runtime size (heads, groups, `B * H`) multiplies
    it. Batch sizes multiplied with a token count are part of it (`B * T` tokens per launch)."""
    tokens = [f for f in growing if f.tokens]
    if not tokens:
        return None
    per_token = [f for f in tokens if f.kind is not Kind.TILE_COUNT]
    if per_token:
        return f"{_spelled(grid, per_token[0], code)} launches one program per token or row", per_token[0]
    few = [f for f in tokens if _tile_of(f) is not None and _tile_of(f) < 16]
    if few:  # a million tokens over tiles of fewer than 16 rows
        return f"{_spelled(grid, few[0], code)} launches one program per {_tile_of(few[0])} tokens or rows", few[0]
    others = [f for f in grid.factors if not f.tokens and not f.chunked and not f.model_bounded and not f.batch_axis
              and f.kind in (Kind.EXTENT, Kind.TILE_COUNT, Kind.TOTAL_SIZE, Kind.UNKNOWN)
              and not (f.kind is Kind.EXTENT and f.capped and f.value is not None)]
    if others:
        return (f"token tiles {_spelled(grid, tokens[0], code)} times `{_text(code, others[0].expr)}` grow with the"
                " tokens of a launch"), tokens[0]
    # tiles over every token of the launch (routed MoE M-tiles) times a model dimension's tiles
    # (`(num_m_tiles, cdiv(I, BLOCK_N))`)
    wide_tokens = [f for f in tokens if f.launch_wide]
    model = [f for f in grid.factors if f.model_bounded and f.grows and f.kind is Kind.TILE_COUNT]
    if wide_tokens and model:
        return (f"routed token tiles {_spelled(grid, wide_tokens[0], code)} times `{_text(code, model[0].expr)}` grow"
                " with the tokens of a launch"), wide_tokens[0]
    # token tiles times the batch they belong to count the token tiles of the launch (`(NT, B)`); a further tile
    # count of a model dimension multiplies them (`(cdiv(D, BD), NT, B)`)
    batch = [f for f in grid.factors if f.batch_axis and f.grows]
    model = [f for f in grid.factors if f.model_bounded and f.grows and f.kind is Kind.TILE_COUNT]
    if batch and model:
        return (f"token tiles {_spelled(grid, tokens[0], code)} of the batch `{_text(code, batch[0].expr)}` times"
                f" `{_text(code, model[0].expr)}` grow with the tokens of a launch"), tokens[0]
    return None


def _tile_of(factor) -> int | None:
    """The literal tile size a tile count divides by (``cdiv(rows, 4)`` gives 4), else None."""
    parts = division_parts(factor.expr)
    if parts is not None and type(parts[1]) is cst.Integer:
        return integer_value(parts[1])
    return None


def _spelled(grid: LaunchGrid, factor, code) -> str:
    """The grid axis holding ``factor`` as written at the launch, and what it resolves to when that differs
    (`` `T` (`x.view(-1, D).shape[0]`) ``)."""
    resolved = _text(code, factor.expr)
    elements = grid.expr.elements if type(grid.expr) in (cst.Tuple, cst.List) else [grid.expr]
    for axis, element in zip(grid.axes, elements):
        if any(f is factor for f in axis):
            written = _text(code, element.value if isinstance(element, cst.BaseElement) else element)
            return f"`{written}`" if written == resolved else f"`{written}` (`{resolved}`)"
    return f"`{resolved}`"


def _text(code, node) -> str:
    """Source text of a grid part on one line, shortened for the message."""
    text = " ".join(code(node).split())
    return text if len(text) <= 80 else text[:77] + "..."
