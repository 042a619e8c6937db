from ascendlint.rule import Invalid, Valid

from .asc105_grid_over_65535 import GridOver65535


class GridOver65535Sweep(GridOver65535):
    """The review sweep of ASC105: grids that grow without a cap where the launching host code does not tie the
    growth to tokens, rows or a small tile."""

    decides = """
    ASC105 reports a grid that can pass 65535 programs when the host code shows what makes it large: one program
    (or a few) per token or row, token tiles times heads or groups, the elements of a tensor over a literal tile of
    at most 4096, a weight's channels over a tile of at most 16. This rule reports the other uncapped grids: tile
    counts of two extents the host does not name as tokens (`cdiv(M, BM) x cdiv(N, BN)` of a GEMM on whatever
    matrices it is given), three or more such sizes (`(A, part_num, C)` of a scan), and whole-tensor grids over an
    autotuned tile or one larger than 4096 elements (`cdiv(n, meta["BLOCK"])`). They pass the limit only on inputs
    the module does not show, so the sweep is opt-in, for a review of a general-purpose op library. It also takes
    every grid ASC105 would report in a test or a benchmark (a `tests/` or `benchmarks/` folder, `test_*.py`,
    `bench_*.py`), whose sizes the suite picks, and in a launch for decoding (named for it), whose rows are the
    requests of a decode step. The two never report the same launch.

    Not reported: what ASC105 leaves out (caps, chunking host loops, core-count grids, bounding host guards), and a
    launch the host code never reaches on an NPU (a launcher the module rebinds under `if is_npu():`, a branch false on
    the NPU such as `if not _is_npu:` or `if x.is_cuda:`, a launch after `if _is_npu: return ...` or `assert
    x.is_cuda`), and a launch of a test module or a script that runs it only at tensor sizes it spells with literals,
    when its grid stays at or under 65535 programs at those sizes.
    """

    code = "ASC110"
    name = "grid-over-65535-sweep"
    sweep = True
    default = False
    opt_in_reason = (
        "a review sweep: the launching host code does not tie the grid's growth to tokens, rows or a small tile, so"
        " the grid passes 65535 programs only on inputs the module does not show; ASC105 reports the grids the host"
        " shows to be large"
    )
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
                pass

            def mm(mat1, mat2, out):
                M, K = mat1.shape
                _, N = mat2.shape
                grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
                matmul[grid](mat1, mat2, out, M, N, K)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def fill(out_ptr, n, value, BLOCK: tl.constexpr):
                pass

            def full_like(out, value):
                n = out.numel()
                fill[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](out, n, value)
            """,
        ),
        Invalid(
            """
            import triton

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: triton.language.constexpr, BN: triton.language.constexpr):
                pass

            def run(a, b, c, M, N, K):
                grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
                matmul[grid](a, b, c, M, N, K, BM=128, BN=256)
            """,
        ),
        Invalid(
            """
            import triton

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: triton.language.constexpr, BN: triton.language.constexpr):
                pass

            def run(a, b, c, M, N, K):
                tiles = ((M + 127) // 128) * ((N + 255) // 256)
                matmul[(tiles,)](
                    a, b, c, M, N, K,
                    BM=128, BN=256,
                )
            """,
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
            import triton
            import triton.language as tl

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
                pass

            def mm(mat1, mat2, out, cores):
                M, K = mat1.shape
                _, N = mat2.shape
                grid = lambda meta: (min(triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]), cores),)
                matmul[grid](mat1, mat2, out, M, N, K)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                pass

            def run(x):
                n = x.numel()
                scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
            """
        ),
        Valid(
            """
            import torch_npu
            import triton
            import triton.language as tl
            from vllm.platforms import current_platform

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
                pass

            def mm(mat1, mat2, out):
                M, K = mat1.shape
                _, N = mat2.shape
                grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
                matmul[grid](mat1, mat2, out, M, N, K)

            if current_platform.is_npu():
                mm = torch_npu.npu_mm_out
            """
        ),
    ]
