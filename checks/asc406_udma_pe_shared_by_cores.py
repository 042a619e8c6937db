from ascendlint.diagnostics import Severity
from ascendlint.analysis.distributed import distributed_kernels, kernels_launched_on_one_program
from ascendlint.analysis.distributed_calls import UDMA_CALLS, udma_argument
from ascendlint.rule import Invalid, Rule, Valid


class UdmaPeSharedByCores(Rule):
    """Flags `putmem`/`getmem` that every program runs for the same pe."""

    decides = """
    Quiet when the pe, the loop it comes from or an enclosing `if` that selects one program (`pid == ...`, or a
    test on the pe itself) depends on `tl.program_id`, e.g. `for pe in range(pid, n_pes, n_programs)`; a tile
    loop split by program id around a loop over every pe does not make it quiet (every program still drives every
    pe). Also quiet for
    a kernel that this module launches only on a one-program grid (a literal `(1, 1, 1)`, or a name the launching
    function raises on unless it is 1), and for the helpers only such kernels call. A `triton.jit` helper's
    parameter counts as a program id when a caller passes one in (or, for a helper this module never calls, when
    it is named `pid`).
    """

    code = "ASC406"
    name = "udma-pe-shared-by-cores"
    message = "`{call}` to pe `{pe}` runs on every program: several cores drive the same pe"
    severity = Severity.WARNING
    why = """
        UDMA completion (`quiet()`) keeps one slot per pe per core. When every program issues transfers to the
        same pe, several cores drive one pe's queue at once and completion tracking breaks: transfers are
        reported complete early or the kernel hangs. Partition the pes across programs so each pe has one
        driving core.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_tiles(buf_ptr, x_ptr, n_tiles, n_pes, nbytes):
                for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                    for pe in range(n_pes):
                        libshmem_device.putmem(buf_ptr + tile * nbytes, x_ptr + tile * nbytes, nbytes, pe)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                for pe in range(dl.num_ranks()):
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def pull_all(buf_ptr, y_ptr, nbytes, n_producers):
                pid = tl.program_id(0)
                if pid < n_producers:
                    for pe in range(shmem.n_pes()):
                        shmem.getmem(
                            y_ptr + pe * nbytes,
                            buf_ptr,
                            nbytes,
                            pe,
                        )
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def to_root(buf_ptr, x_ptr, nbytes):
                offset = tl.program_id(0) * nbytes
                libshmem_device.putmem(buf_ptr + offset, x_ptr + offset, nbytes, 0)
            """
        ),
        Invalid(
            """
            import triton
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_from(first_pe, buf_ptr, x_ptr, nbytes, n_pes):
                for pe in range(first_pe, n_pes):
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)

            @triton.jit
            def broadcast(buf_ptr, x_ptr, nbytes, n_pes):
                push_from(1, buf_ptr, x_ptr, nbytes, n_pes)
            """
        ),
        Invalid(
            """
            import triton
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_to_all(buf_ptr, x_ptr, nbytes, pid, n_pes):
                for step in range(n_pes):
                    pe = (pid + step) % n_pes
                    libshmem_device.putmem(buf_ptr + pid * nbytes, x_ptr, nbytes, pe)

            def run(buf, x, process_index, n_pes, n_cores):
                push_to_all[(n_cores,)](buf, x, x.numel() * x.element_size(), process_index, n_pes)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                for pe in range(dl.num_ranks()):
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)

            @triton.jit
            def all_gather_shmem(buf_ptr, x_ptr, nbytes):
                me = libshmem_device.my_pe()
                for pe in range(libshmem_device.n_pes()):
                    if pe != me:
                        libshmem_device.putmem(buf_ptr + me * nbytes, x_ptr, nbytes, pe)
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
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device
            from triton.language.extra.cann.extension import sub_vec_id

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                pid = tl.program_id(0)
                n_programs = tl.num_programs(0)
                for pe in range(pid, dl.num_ranks(), n_programs):
                    if pe != rank:  # the own copy goes through tl.load / tl.store (ASC411)
                        libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)

            @triton.jit
            def _push_all_shmem(buf_ptr, x_ptr, nbytes):
                me = libshmem_device.my_pe()
                for pe in range(libshmem_device.n_pes()):
                    if pe != me:
                        libshmem_device.putmem(buf_ptr + me * nbytes, x_ptr, nbytes, pe)

            @triton.jit
            def all_gather_shmem(buf_ptr, x_ptr, nbytes):
                # one core drives every pe: the helper runs on program 0's first vector sub-block only
                if (sub_vec_id() == 0) & (tl.program_id(0) == 0):
                    _push_all_shmem(buf_ptr, x_ptr, nbytes)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                rank = dl.rank()
                pid = tl.program_id(0)
                n_programs = tl.num_programs(0)
                for pe in range(pid, dl.num_ranks(), n_programs):
                    libshmem_device.putmem(buf_ptr + rank * nbytes, x_ptr, nbytes, pe)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def all_gather(buf_ptr, x_ptr, nbytes):
                pid = tl.program_id(0)
                n_ranks = dl.num_ranks()
                for pe in range(n_ranks):
                    if pe % tl.num_programs(0) == pid:
                        libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def one_pe_per_program(buf_ptr, x_ptr, nbytes):
                pe = tl.program_id(0)
                libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def routed(buf_ptr, x_ptr, dest_ptr, n_tasks, nbytes):
                pid = tl.program_id(0)
                for task in range(pid, n_tasks, tl.num_programs(0)):
                    pe = tl.load(dest_ptr + task)
                    libshmem_device.putmem(buf_ptr, x_ptr + task * nbytes, nbytes, pe)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def leader_only(buf_ptr, x_ptr, nbytes, n_pes):
                if tl.program_id(0) == 0:
                    for pe in range(n_pes):
                        libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)
            """
        ),
        Valid(
            """
            import torch
            import triton
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def broadcast(buf_ptr, x_ptr, nbytes, n_pes):
                for pe in range(n_pes):
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)

            def run(buf, x, n_pes):
                broadcast[(1,)](buf, x, x.numel() * x.element_size(), n_pes)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_tasks(first_task, task_step, buf_ptr, x_ptr, n_pes, n_chunks, chunk_bytes):
                for task in range(first_task, n_pes * n_chunks, task_step):
                    pe = task % n_pes
                    offset = (task // n_pes) * chunk_bytes
                    libshmem_device.putmem(buf_ptr + offset, x_ptr + offset, chunk_bytes, pe)

            @triton.jit
            def scatter(buf_ptr, x_ptr, n_pes, n_chunks, chunk_bytes):
                worker = tl.program_id(0)
                push_tasks(worker, tl.num_programs(0), buf_ptr, x_ptr, n_pes, n_chunks, chunk_bytes=chunk_bytes)
            """
        ),
        Valid(
            """
            import triton
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push_owned_pes(buf_ptr, x_ptr, nbytes, n_pes, pid, n_programs):
                for pe in range(pid, n_pes, n_programs):
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, pe)
            """
        ),
    ]

    def finish(self) -> None:
        single_program = kernels_launched_on_one_program(self.context.facts)
        for dist in distributed_kernels(self.context):
            if dist.kernel.name in single_program:
                continue
            for call in dist.calls_to(*sorted(UDMA_CALLS)):
                name = dist.qualname_of(call)
                pe = udma_argument(call, name, "pe")
                if pe is None or dist.partitioned_by_program(call, pe, loop_feeds_key=True):
                    continue
                shown = " ".join(self.context.module.code_for_node(pe).split())
                self.report(call, self.message.format(call=name.split(".")[-1], pe=shown))
