import libcst as cst

from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_HINTS = ("eviction_policy", "cache_modifier")
_MEMORY_CALLS = ("tl.load", "tl.store")


class CudaMemoryHint(Rule):
    """Flags the CUDA cache hints `eviction_policy=` and `cache_modifier=` on `tl.load` / `tl.store`."""

    decides = """
    Each keyword is reported on its own; the fix deletes it. Nothing else of the call changes.
    """

    code = "ASC106"
    name = "cuda-memory-hint"
    message = "`{keyword}` is a CUDA cache hint; triton-ascend drops it before it reaches the NPU"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    why = """
        `eviction_policy` and `cache_modifier` steer the L1/L2 caches of NVIDIA GPUs (`evict_last`, `.cg`, ...).
        An Ascend vector core moves data between global memory and its Unified Buffer with explicit DMA, and
        triton-ascend has no use for the hints: its 3.2.0 frontend accepts them and records them on the TTIR
        `tt.load` / `tt.store` (`cacheModifier = cg evictionPolicy = evict_last`), and its lowering to Linalg
        drops them (checked offline; no later stage sees them). A kernel that relies on them for speed gets
        nothing, and a reader is led to think the kernel was tuned for Ascend's memory system when it was tuned
        for a GPU's.
    """
    fix_notes = """
        Delete the keyword. The kernel computes exactly the same values: the hint never changes what is loaded
        or stored, and the lowered kernel is the same with or without it. For a real Ascend data-movement knob
        look at `multibuffer` and the compile options instead.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rms_norm(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                mask = offs < N
                x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
                w = tl.load(w_ptr + offs, mask=mask, other=0.0)
                y = x * tl.rsqrt(tl.sum(x * x, axis=0) / N + eps) * w
                tl.store(y_ptr + row * N + offs, y, mask=mask, cache_modifier=".cs")
            """,
            count=2,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def rms_norm(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                mask = offs < N
                x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + offs, mask=mask, other=0.0)
                y = x * tl.rsqrt(tl.sum(x * x, axis=0) / N + eps) * w
                tl.store(y_ptr + row * N + offs, y, mask=mask)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            from triton.language import load, store, arange, constexpr

            @triton.jit
            def copy(src, dst, BLOCK: constexpr):
                offs = arange(0, BLOCK)
                v = load(
                    src + offs,
                    cache_modifier=".cg",
                    eviction_policy="evict_first",
                )
                store(dst + offs, v, eviction_policy="evict_first")
            """,
            count=3,
            fixed="""
            import triton
            from triton.language import load, store, arange, constexpr

            @triton.jit
            def copy(src, dst, BLOCK: constexpr):
                offs = arange(0, BLOCK)
                v = load(
                    src + offs,
                )
                store(dst + offs, v)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, BLOCK: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,))
                tl.store(p, tl.load(p, boundary_check=(0,), cache_modifier=".ca") * 2, boundary_check=(0,))
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, BLOCK: tl.constexpr):
                p = tl.make_block_ptr(x_ptr, (BLOCK,), (1,), (0,), (BLOCK,), (0,))
                tl.store(p, tl.load(p, boundary_check=(0,)) * 2, boundary_check=(0,))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def rms_norm(x_ptr, w_ptr, y_ptr, N, eps, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                offs = tl.arange(0, BLOCK)
                mask = offs < N
                x = tl.load(x_ptr + row * N + offs, mask=mask, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + offs, mask=mask, other=0.0)
                y = x * tl.rsqrt(tl.sum(x * x, axis=0) / N + eps) * w
                tl.store(y_ptr + row * N + offs, y, mask=mask)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def poll(flag_ptr, x_ptr, BLOCK: tl.constexpr):
                while tl.load(flag_ptr, volatile=True) == 0:
                    pass
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            """
        ),
        Valid(
            """
            import torch

            def gather(cache, index, eviction_policy="lru"):
                return cache.load(index, eviction_policy=eviction_policy, cache_modifier=None)
            """
        ),
    ]

    def __init__(self, context, options=None) -> None:
        super().__init__(context, options)
        self._possible = any(hint in context.text for hint in _HINTS)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._possible or self.facts.qualname(node.func) not in _MEMORY_CALLS:
            return
        args = list(node.args)
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value in _HINTS:
                keyword = arg.keyword.value
                self.report(
                    arg,
                    self.message.format(keyword=keyword),
                    fix_message=f"Remove `{keyword}`",
                    edits=lambda loc, i=index: [edits.delete_argument(loc, args, i)],
                )
