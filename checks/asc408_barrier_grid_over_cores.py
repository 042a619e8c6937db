import re

import libcst as cst

from ascendlint.analysis.distributed import for_kernel, waiting_kernels
from ascendlint.diagnostics import Severity
from ascendlint.analysis.grid import grid_core_source, launch_grid
from ascendlint.analysis.grid_factors import Factor, Kind
from ascendlint.rule import Invalid, Rule, Valid

# Programs every Ascend device keeps resident at once (the smallest AI-core count the distributed kernels target).
RESIDENT_PROGRAMS = 20


class BarrierGridOverCores(Rule):
    """Flags a launch of a kernel that waits on other programs with a grid not sized by the core count."""

    decides = """
    Waiting means `dl.wait`, `barrier_all()`, `signal_wait_until` or a spin loop (`while` on a volatile load
    or an atomic), in the kernel or a `triton.jit` helper it calls. Sized by the core count means
    `get_*core_num()`, the `num_aicore` / `num_vectorcore` device properties, or `min(x, core_count)` (a cap
    named as a core or SM count, `n_cores`, `num_sms`, counts); a data-sized grid or a literal grid of more than 20
    programs is flagged, a grid this module cannot see (a parameter of the host function, whatever its name) is
    not. A kernel that only runs a barrier (`barrier_all_vec()` and nothing else) launched on a literal grid is
    flagged too: such a launch completes the transfers earlier launches issued, and a barrier does that only for
    the cores it runs on.
    """

    code = "ASC408"
    name = "barrier-grid-over-cores"
    message = (
        "`{kernel}` waits on other programs but its grid `{grid}` is not sized by the core count: programs past "
        "the resident ones never start, and the launch hangs"
    )
    severity = Severity.WARNING
    default = False
    opt_in_reason = (
        "below the default bar on real code: its one finding on untuned kernels was wrong (a vector-only kernel whose"
        " host admits the grid only up to the 40 vector cores of a 910B, more than the 20 programs the rule assumes"
        " resident) and its one finding on the corpus debatable; the hang it describes is shown by mutation tests of"
        " the fused distributed kernels"
    )
    why = """
        Only as many programs run at once as there are physical cores; the rest start when a running program
        finishes. A program that waits for another program (a signal, a barrier, a spin loop) never finishes
        when the one it waits for is not resident yet, so the launch hangs as soon as the grid exceeds the core
        count. Size the grid by the core count and loop over the work inside the kernel.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def exchange(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
                libshmem_device.barrier_all()

            def run(x):
                exchange[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def wait_ready(signal_ptr):
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                return token

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                token = wait_ready(signal_ptr + tl.program_id(0))
                offs = tl.arange(0, BLOCK)
                tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            def run(buf, signal, out):
                ncore = 40
                consumer[(ncore,)](buf, signal, out, BLOCK=128)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def grid_sync(counter_ptr, x_ptr, n_programs):
                tl.atomic_add(counter_ptr, 1)
                while tl.load(counter_ptr, volatile=True) < n_programs:
                    pass
                tl.store(x_ptr + tl.program_id(0), 1)

            def run(counter, x):
                batch, heads = x.shape[0], x.shape[1]
                grid = (batch, heads)
                grid_sync[grid](counter, x, batch * heads)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def stage_and_sync(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
                libshmem_device.barrier_all()

            def run(x):
                stage_and_sync[(64,)](x, x.numel(), BLOCK=1024)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def exchange(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
                libshmem_device.barrier_all()

            def run(x):
                exchange[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)

            @triton.jit
            def fence_all_puts_shmem():
                libshmem_device.barrier_all_vec()

            def run_shmem():
                fence_all_puts_shmem[(1, 1, 1)]()
            """,
            count=2,
            doc=True,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device
            from triton.runtime import driver

            @triton.jit
            def exchange(x_ptr, n, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
                libshmem_device.barrier_all()

            def run(x):
                props = driver.active.utils.get_device_properties(x.device.index)
                n_cores = props["num_vectorcore"]
                exchange[(n_cores,)](x, x.numel(), BLOCK=1024)

            @triton.jit
            def fence_all_puts_shmem():
                libshmem_device.barrier_all_vec()

            def run_shmem():
                from triton.backends.ascend.driver import NPUUtils
                fence_all_puts_shmem[(NPUUtils().get_aivector_core_num(), 1, 1)]()
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device
            from triton.runtime import driver

            @triton.jit
            def exchange(x_ptr, n, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
                    offs = start + tl.arange(0, BLOCK)
                    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
                libshmem_device.barrier_all()

            def run(x):
                props = driver.active.utils.get_device_properties(x.device.index)
                n_cores = props["num_vectorcore"]
                exchange[(n_cores,)](x, x.numel(), BLOCK=1024)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_tasks, BLOCK: tl.constexpr):
                for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
                    token = dl.wait(signal_ptr + task, 1, "gpu", "acquire")
                    offs = task * BLOCK + tl.arange(0, BLOCK)
                    tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            def run(buf, signal, out, n_tasks, get_aicore_num):
                consumer[(min(n_tasks, get_aicore_num()),)](buf, signal, out, n_tasks, BLOCK=128)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            def run(x):
                scale[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device
            from my_project.cores import cube_core_count

            @triton.jit
            def exchange(x_ptr, n, BLOCK: tl.constexpr):
                libshmem_device.barrier_all()

            def run(x, grid):
                exchange[grid](x, x.numel(), BLOCK=1024)
                exchange[(cube_core_count(x.device),)](x, x.numel(), BLOCK=1024)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def publish_row(sym_ptr, out_ptr, RANK: tl.constexpr, N_RANKS: tl.constexpr, ELEMS: tl.constexpr):
                offs = tl.arange(0, ELEMS)
                for peer in range(N_RANKS):
                    libshmem_device.putmem(sym_ptr + RANK * ELEMS, sym_ptr + RANK * ELEMS, ELEMS * 4, peer)
                libshmem_device.barrier_all_vec()
                tl.store(out_ptr + offs, tl.load(sym_ptr + ((RANK + 1) % N_RANKS) * ELEMS + offs))

            def run(sym, out, rank, n_ranks):
                publish_row[(1, 1, 1)](sym, out, RANK=rank, N_RANKS=n_ranks, ELEMS=16)
                publish_row[8, 1, 1](sym, out, RANK=rank, N_RANKS=n_ranks, ELEMS=16)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def persistent_consumer(buf_ptr, signal_ptr, out_ptr, n_tiles, BLOCK: tl.constexpr):
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    token = dl.wait(signal_ptr + tile, 1, "gpu", "acquire")
                    offs = tile * BLOCK + tl.arange(0, BLOCK)
                    tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            def run(buf, signal, out, n_tiles, num_sms, reserved_sms):
                worker_sms = num_sms - reserved_sms
                grid = lambda meta: (min(worker_sms, triton.cdiv(n_tiles, meta["BLOCK"])),)
                persistent_consumer[grid](buf, signal, out, n_tiles, BLOCK=128)
                persistent_consumer[(num_sms,)](buf, signal, out, n_tiles, BLOCK=128)
            """
        ),
    ]

    def finish(self) -> None:
        facts = self.context.facts
        if not facts.launches:
            return
        waiting = waiting_kernels(self.context)
        barrier_only = _barrier_only_kernels(self.context) if waiting else set()
        for launch in facts.launches:
            name = _waiting_launched(launch, waiting, facts)
            if name is None:
                continue
            grid = " ".join(self.context.module.code_for_node(launch.grid).split())
            if name in barrier_only and launch.kernel is not None and _literal_grid(facts, launch):
                self.report(launch.call, _BARRIER_ONLY_MESSAGE.format(kernel=name, grid=grid))
                continue
            if not _grid_is_known_and_not_core_sized(facts, launch):
                continue
            self.report(launch.call, self.message.format(kernel=name, grid=grid))


def _waiting_launched(launch, waiting: set[str], facts) -> str | None:
    """The launched kernel's name when it waits on other programs: a kernel of this module, or one imported from
    another linted module whose summary says it waits."""
    if launch.kernel is not None:
        return launch.kernel.name if launch.kernel.name in waiting else None
    if type(launch.target) is cst.Name:
        summary = facts.imported_helpers.get(launch.target.value)
        if summary is not None and summary.waits:
            return launch.target.value
    return None


_BARRIER_ONLY_MESSAGE = (
    "`{kernel}` only runs a barrier, on the literal grid `{grid}`: the barrier completes the transfers of the "
    "cores it runs on, so the other cores' transfers may still be in flight (wrong results); run it on the core grid"
)
_BARRIERS = frozenset({"shmem.barrier_all", "shmem.barrier_all_vec", "shmem.barrier", "shmem.barrier_vec"})


def _literal_grid(facts, launch) -> bool:
    """The grid is a literal (`(1, 1, 1)`, `[4]`), not sized by anything at run time."""
    if grid_core_source(facts, launch) is not None:
        return False
    grid = launch_grid(facts, launch)
    return grid.axes is not None and grid.static_size is not None


def _barrier_only_kernels(context) -> set[str]:
    """Kernels whose body calls barriers and nothing else (no load, store, transfer, signal or helper): a launch
    of one exists to complete what earlier launches issued, on every core that issued it."""
    found = set()
    for name, kernel in context.facts.kernels.items():
        dist = for_kernel(context, kernel)
        if dist.has_call(*_BARRIERS) and all(n in _BARRIERS for n in dist.calls):
            found.add(name)
    return found


def _grid_is_known_and_not_core_sized(facts, launch) -> bool:
    if grid_core_source(facts, launch) is not None:
        return False
    grid = launch_grid(facts, launch)
    if grid.axes is None:
        return False
    size = grid.static_size
    if size is not None and size <= RESIDENT_PROGRAMS:
        return False  # a literal grid that small is resident on every device
    return not any(_unknown(factor) for factor in grid.factors)


def _unknown(factor: Factor) -> bool:
    """A factor this module cannot size: unresolved, a compile-time meta value, a parameter of the host function
    that the caller fills (`num_programs`, `n_cores`, `workers`: what it holds is decided elsewhere, whatever its
    name), or a `min(...)` capped by a value named as a core count."""
    if factor.kind in (Kind.UNKNOWN, Kind.CONSTANT):
        return True
    if factor.kind is Kind.EXTENT and type(factor.expr) is cst.Name:
        return True
    return factor.capped and type(factor.expr) is cst.Call and any(
        type(arg.value) is cst.Name and _counts_cores(arg.value.value) for arg in factor.expr.args
    )


_CORE_WORDS = frozenset({"core", "cores", "ncore", "ncores", "aicore", "sm", "sms", "nsm", "nsms"})


def _counts_cores(name: str) -> bool:
    """`ncore`, `n_cores`, `num_sms`, `gemm_sm`, `multi_processor_count`: a count of cores or SMs."""
    lowered = name.lower()
    if "core" in lowered or "processor" in lowered:
        return True
    return bool(_CORE_WORDS & set(re.split(r"[^a-z0-9]+", lowered)))
