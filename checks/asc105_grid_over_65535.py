import libcst as cst

from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.grid import Kind, LaunchGrid, launch_grid
from ascendlint.rule import Invalid, Rule, Valid

_LIMIT = 65535


class GridOver65535(Rule):
    """Flags a launch whose grid size grows with the data and has no cap, so it can pass 65535 programs.

    The grid is followed through the launching host function (tuples, `lambda meta: (...)`, names assigned from
    `triton.cdiv`, `numel()` or shapes). It is flagged when its size is a literal above 65535, when two tile
    counts of runtime extents multiply (M-tiles x N-tiles), when three or more runtime factors multiply
    (`(NT, B * H)`), or when an axis counts a total size (`cdiv(x.numel(), BLOCK)`). A factor under
    `min(..., cap)` or computed per chunk inside a host loop `for start in range(0, n, step)` is bounded.
    A module that sets `TRITON_ALL_BLOCKS_PARALLEL` itself has chosen the launcher's clamping and is not flagged.
    """

    code = "ASC105"
    name = "grid-over-65535"
    message = "launch grid can exceed 65535 programs: {reason}"
    severity = Severity.WARNING
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
    ]
    VALID = [
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
            import triton

            @triton.jit
            def k(x_ptr, n):
                pass

            def run(x, grid):
                k[grid](x, x.numel())
            """
        ),
    ]

    def finish(self) -> None:
        if _opts_into_block_clamping(self.context.index):
            return
        for launch in self.facts.launches:
            reason = _unbounded_reason(launch_grid(self.facts, launch))
            if reason is not None:
                self.report(launch.call, self.message.format(reason=reason))


def _opts_into_block_clamping(index) -> bool:
    """The module itself sets `TRITON_ALL_BLOCKS_PARALLEL` (not to "0"): large grids are a deliberate choice there,
    the launcher clamps them to the physical cores instead of refusing them."""
    for node in index.of_type(cst.Call, cst.Assign):
        if isinstance(node, cst.Call):
            func = node.func
            named = isinstance(func, cst.Attribute) and func.attr.value in ("setdefault", "putenv")
            values = [a.value for a in node.args]
            if named and len(values) == 2 and _is_switch_name(values[0]) and not _is_zero(values[1]):
                return True
        else:
            targets = [t.target for t in node.targets]
            names_switch = any(isinstance(t, cst.Subscript) and _subscript_names_switch(t) for t in targets)
            if names_switch and not _is_zero(node.value):
                return True
    return False


def _subscript_names_switch(target: cst.Subscript) -> bool:
    return len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index) and _is_switch_name(
        target.slice[0].slice.value
    )


def _is_switch_name(node) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "TRITON_ALL_BLOCKS_PARALLEL"


def _is_zero(node) -> bool:
    return isinstance(node, cst.SimpleString) and node.evaluated_value == "0"


def _unbounded_reason(grid: LaunchGrid) -> str | None:
    """Why the grid can pass the limit, or None when it is bounded or not visible."""
    if grid.axes is None:
        return None
    size = grid.static_size
    if size is not None:
        return f"it launches {size} programs" if size > _LIMIT else None
    growing = [factor for factor in grid.factors if factor.grows]
    if any(factor.kind is Kind.TOTAL_SIZE for factor in growing):
        return "an axis counts the tiles of a whole tensor's size"
    if sum(factor.kind is Kind.TILE_COUNT for factor in growing) >= 2:
        return "tile counts of two runtime extents multiply"
    if len(growing) >= 3:
        return f"{len(growing)} runtime sizes multiply"
    return None
