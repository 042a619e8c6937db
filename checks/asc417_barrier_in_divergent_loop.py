import libcst as cst

from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import BARRIERS
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.rank_loops import depends_on_rank
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class BarrierInDivergentLoop(Rule):
    """Flags `barrier_all()` / `barrier_all_vec()` inside a loop whose trip count depends on the program id or the
    rank."""

    decides = """
    `barrier_all` returns once every program of every rank has arrived, and it counts arrivals: every program must
    reach it the same number of times. A barrier inside a loop whose bounds come from `tl.program_id` (a task loop
    `range(pid, n_tasks, n_programs)`, a per-pe loop split by program id) or from the rank is reached fewer times by
    the programs with fewer iterations; they leave the kernel while the others wait for them forever (or, with a
    counting barrier, pair one program's second barrier with another's first). Trigger: a barrier call in the body of
    a `for` whose iterable, or a `while` whose condition, depends on the program id (here or passed in by a caller)
    or the rank. Non-triggers: a barrier after such a loop; a barrier in a loop whose bounds are the same for every
    program (`range(n_steps)`, `range(num_ranks())`).
    """

    code = "ASC417"
    name = "barrier-in-divergent-loop"
    message = "`{call}` inside a loop whose trip count depends on the {source}: programs that run fewer " \
              "iterations leave while the others wait in the barrier"
    severity = Severity.WARNING
    default = False
    opt_in_reason = (
        "New: no real kernel puts a barrier in such a loop (see docs/precision-distributed.md), so its precision on "
        "real code is not measured"
    )
    why = """
        `barrier_all` waits until every program of every rank has arrived, counting arrivals, so each program has
        to reach it equally often. Inside a task loop `for t in range(pid, n_tasks, n_programs)` the programs run
        different numbers of iterations whenever the grid does not divide the task count, and a loop over the
        pes split by program id does the same when the grid is not the rank count. The programs that finish
        their share early leave the kernel; the rest wait for arrivals that never come, and the kernel hangs (or
        works only for shapes where the counts happen to agree). Put the barrier after the loop, or give every
        program the same trip count and mask the surplus work.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_tiles(x_ptr, gathered_ptr, n_tiles, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    x = tl.load(x_ptr + tile * BLOCK + offs)
                    for peer in range(n_ranks):
                        tl.store(dl.symm_at(gathered_ptr, peer) + tile * BLOCK + offs, x)
                    libshmem_device.barrier_all()
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_owned(buf_ptr, x_ptr, BLOCK: tl.constexpr):
                pid = tl.program_id(0)
                for pe in range(pid, dl.num_ranks(), tl.num_programs(0)):
                    tl.store(dl.symm_at(buf_ptr, pe) + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))
                    libshmem_device.barrier_all_vec()
            """
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_tiles(x_ptr, gathered_ptr, n_tiles, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    x = tl.load(x_ptr + tile * BLOCK + offs)
                    for peer in range(n_ranks):
                        tl.store(dl.symm_at(gathered_ptr, peer) + tile * BLOCK + offs, x)
                libshmem_device.barrier_all()
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def steps(buf_ptr, n_steps, BLOCK: tl.constexpr):
                for step in range(n_steps):
                    tl.store(buf_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), step)
                    libshmem_device.barrier_all()
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            for barrier in dist.calls_to(*sorted(BARRIERS)):
                source = _divergent_loop_source(dist, barrier)
                if source is not None:
                    call = (dist.qualname_of(barrier) or "").replace("shmem.", "")
                    self.report(barrier, self.message.format(call=call, source=source))


def _divergent_loop_source(dist: DistAnalysis, barrier: cst.Call) -> str | None:
    """What the trip count of the innermost divergent loop around ``barrier`` depends on, or None."""
    for loop in dist.enclosing_loops(barrier):
        bounds = loop.iter if type(loop) is cst.For else loop.test
        if dist.depends_on_program_id(bounds):
            return "program id"
        if depends_on_rank(dist, bounds):
            return "rank"
    return None
