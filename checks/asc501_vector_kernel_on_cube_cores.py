from __future__ import annotations

import libcst as cst

from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.grid import grid_core_source
from ascendlint.analysis.module_facts import Kernel
from ascendlint.rule import Invalid, Rule, Valid

_CUBE_OPS = {"tl.dot", "tl.dot_scaled"}
_KNOWN_LIBRARIES = ("tl.", "dl.", "shmem.", "cann.", "triton.")


class VectorKernelOnCubeCores(Rule):
    """Flags a launch of a kernel that never calls `tl.dot` (nor do the jit helpers it calls) on a grid sized by
    the cube core count (`num_aicore`, `get_aicore_num()`)."""

    decides = """
    A kernel that calls a function imported from another module is left alone: that function may use the cube.
    """

    code = "ASC501"
    name = "vector-kernel-on-cube-cores"
    message = "`{kernel}` uses no `tl.dot` but its grid is the cube core count; size it by the vector core count"
    severity = Severity.ADVISORY
    default = False
    opt_in_reason = "a performance advisory"
    fix_safety = FixSafety.NONE
    why = """
        An Ascend AI core pairs one cube unit with two vector units (A2: 24 cube, 48 vector cores). A kernel without
        matrix multiplication runs only on vector units, so one program per cube core leaves half of them idle.
    """
    fix_notes = """
        Launch `get_device_properties(dev)["num_vectorcore"]` programs (or `get_aivector_core_num()`) and let the
        task loop stride by `tl.num_programs(0)`.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton.runtime import driver

            @triton.jit
            def relu(x_ptr, n, BLOCK: tl.constexpr):
                for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    x = tl.load(x_ptr + offs, mask=offs < n)
                    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)

            def run(x):
                cores = driver.active.utils.get_device_properties(x.device.index)["num_aicore"]
                relu[(cores,)](x, x.numel(), BLOCK=1024)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale_tile(x, factor):
                return x * factor

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, scale_tile(tl.load(x_ptr + offs, mask=offs < n), 2.0), mask=offs < n)

            def run(x, utils):
                n_tasks = triton.cdiv(x.numel(), 1024)
                grid = lambda meta: (min(n_tasks, utils.get_aicore_num()),)
                scale[grid](x, x.numel(), BLOCK=1024)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            from triton.runtime import driver

            @triton.jit
            def relu(x_ptr, n, BLOCK: tl.constexpr):
                for start in range(tl.program_id(0) * BLOCK, n, tl.num_programs(0) * BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    x = tl.load(x_ptr + offs, mask=offs < n)
                    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=offs < n)

            def run(x):
                cores = driver.active.utils.get_device_properties(x.device.index)["num_vectorcore"]
                relu[(cores,)](x, x.numel(), BLOCK=1024)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def tile_product(a, b):
                return tl.dot(a, b)

            @triton.jit
            def matmul(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
                offs_m = tl.arange(0, BM)
                offs_n = tl.arange(0, BN)
                offs_k = tl.arange(0, BK)
                a = tl.load(a_ptr + offs_m[:, None] * BK + offs_k[None, :])
                b = tl.load(b_ptr + offs_k[:, None] * BN + offs_n[None, :])
                tl.store(c_ptr + offs_m[:, None] * BN + offs_n[None, :], tile_product(a + 0.0, b))

            def run(a, b, c, props):
                matmul[(props["num_aicore"],)](a, b, c, BM=128, BN=128, BK=64)
            """
        ),
        Valid(
            """
            import triton
            from triton.language import arange, constexpr, dot, load, store

            @triton.jit
            def outer(a_ptr, b_ptr, c_ptr, BM: constexpr):
                offs = arange(0, BM)
                a = load(a_ptr + offs[:, None] * BM + offs[None, :])
                b = load(b_ptr + offs[:, None] * BM + offs[None, :])
                store(c_ptr + offs[:, None] * BM + offs[None, :], dot(a, b))

            def run(a, b, c, utils):
                outer[(utils.get_aicore_num(),)](a, b, c, BM=128)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from my_project.tiles import fused_tile

            @triton.jit
            def fused(x_ptr, w_ptr, BLOCK: tl.constexpr):
                fused_tile(x_ptr, w_ptr, BLOCK)

            def run(x, w, props):
                fused[(props["num_aicore"],)](x, w, BLOCK=128)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def relu(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=offs < n), 0.0), mask=offs < n)

            def run(x, props):
                relu[(props["num_aicore"] * 2,)](x, x.numel(), BLOCK=1024)
                relu[(256,)](x, x.numel(), BLOCK=1024)
            """
        ),
    ]

    def __init__(self, context, options=None) -> None:
        super().__init__(context, options)
        self._uses_cube: dict[int, bool | None] = {}

    def finish(self) -> None:
        for launch in self.facts.launches:
            kernel = launch.kernel
            if kernel is None or grid_core_source(self.facts, launch) != "cube":
                continue
            if self._cube_use(kernel) is False:
                self.report(launch.call, self.message.format(kernel=kernel.name))

    def _cube_use(self, kernel: Kernel, visiting: frozenset = frozenset()) -> bool | None:
        """True if the kernel (or a jit helper it calls) uses the cube, False if not, None when it cannot tell."""
        key = id(kernel.node)
        if key in self._uses_cube:
            return self._uses_cube[key]
        if key in visiting:
            return False
        answer: bool | None = False
        for node in self.context.index.subtree(kernel.node):
            if type(node) is not cst.Call:
                continue
            name = self.facts.qualname(node.func)
            if name in _CUBE_OPS:
                answer = True
                break
            helper = self.facts.kernels.get(node.func.value) if type(node.func) is cst.Name else None
            if helper is not None:
                inner = self._cube_use(helper, visiting | {key})
                if inner is not False:
                    answer = inner
                    if inner:
                        break
            elif name is not None and not name.startswith(_KNOWN_LIBRARIES):
                answer = None  # an imported function: it may well use the cube
        self._uses_cube[key] = answer
        return answer
