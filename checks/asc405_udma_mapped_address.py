from ascendlint import edits
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import UDMA_CALLS, udma_remote_operand
from ascendlint.rule import Invalid, Rule, Valid


class UdmaMappedAddress(Rule):
    """Flags `putmem` whose destination (or `getmem` whose source) is a mapped peer pointer."""

    decides = """
    A pointer that comes from `dl.symm_at(...)` or `libshmem_device.remote_ptr(...)`, directly or through
    assignments and offsets, is mapped; a kernel argument offset by anything stays symmetric.
    """

    code = "ASC405"
    name = "udma-mapped-address"
    message = "`{call}` needs the symmetric address of the peer buffer, not a pointer mapped by `{mapping}`"
    severity = Severity.ERROR
    fix_safety = FixSafety.UNSAFE
    why = """
        UDMA transfers (`putmem`, `getmem`) translate the symmetric address themselves, using the `pe` argument:
        the remote operand must be the same pointer value the local rank uses. A pointer already mapped to the
        peer by `dl.symm_at` / `remote_ptr` gets translated a second time and the transfer lands at a wrong
        address (or faults).
    """
    fix_notes = """
        The fix passes the symmetric pointer the mapping was made from. It is unsafe because it rewrites the
        argument expression; a name assigned more than once is left for a manual fix.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer):
                remote = dl.symm_at(buf_ptr, peer)
                libshmem_device.putmem(remote, x_ptr, nbytes, peer)
            """,
            fixed="""
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer):
                remote = dl.symm_at(buf_ptr, peer)
                libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def pull(buf_ptr, y_ptr, offset, nbytes, peer):
                shmem.getmem(y_ptr, shmem.remote_ptr(buf_ptr + offset, peer), nbytes, peer)
            """,
            fixed="""
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device as shmem

            @triton.jit
            def pull(buf_ptr, y_ptr, offset, nbytes, peer):
                shmem.getmem(y_ptr, buf_ptr + offset, nbytes, peer)
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra.libshmem_device import putmem_nbi

            @triton.jit
            def push(buf_ptr, x_ptr, signal_ptr, offset, nbytes, peer):
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                base = dl.consume_token(dl.symm_at(buf_ptr, peer), token)
                putmem_nbi(
                    base + offset,
                    x_ptr,
                    nbytes,
                    peer,
                )
            """,
            fixed="""
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra.libshmem_device import putmem_nbi

            @triton.jit
            def push(buf_ptr, x_ptr, signal_ptr, offset, nbytes, peer):
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                base = dl.consume_token(dl.symm_at(buf_ptr, peer), token)
                putmem_nbi(
                    dl.consume_token(buf_ptr, token) + offset,
                    x_ptr,
                    nbytes,
                    peer,
                )
            """,
        ),
        Invalid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer):
                remote = dl.symm_at(buf_ptr, peer)
                libshmem_device.putmem(remote, x_ptr, nbytes, peer)

            @triton.jit
            def push_shmem(buf_ptr, x_ptr, nbytes, peer):
                libshmem_device.putmem(libshmem_device.remote_ptr(buf_ptr, peer), x_ptr, nbytes, peer)
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

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer):
                if tl.program_id(0) == 0:  # the symmetric address itself; one core drives the pe
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)

            @triton.jit
            def push_shmem(buf_ptr, x_ptr, nbytes, peer):
                if tl.program_id(0) == 0:
                    libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer):
                libshmem_device.putmem(buf_ptr, x_ptr, nbytes, peer)
            """,
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, signal_ptr, offset, nbytes, peer):
                token = dl.wait(dl.symm_at(signal_ptr, peer), 1, "gpu", "acquire", waitValue=0)
                dst = dl.consume_token(buf_ptr + offset, token)
                libshmem_device.putmem(dst, x_ptr + offset, nbytes, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def pull(buf_ptr, y_ptr, nbytes, peer):
                local_copy = dl.symm_at(y_ptr, peer)
                libshmem_device.getmem(local_copy, buf_ptr, nbytes, peer)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def push(buf_ptr, x_ptr, nbytes, peer, BLOCK: tl.constexpr):
                if peer == dl.rank():
                    dst = dl.symm_at(buf_ptr, peer)
                    offs = tl.arange(0, BLOCK)
                    tl.store(dst + offs, tl.load(x_ptr + offs))
                else:
                    dst = buf_ptr
                    libshmem_device.putmem(dst, x_ptr, nbytes, peer)
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            for call in dist.calls_to(*sorted(UDMA_CALLS)):
                name = dist.qualname_of(call)
                operand = udma_remote_operand(call, name)
                mapping = dist.mapping_call(operand) if operand is not None else None
                if mapping is None:
                    continue
                symmetric = dist.symmetric_form(operand)
                self.report(
                    call,
                    self.message.format(call=_short(name), mapping=_short(dist.qualname_of(mapping))),
                    fix_message="Pass the symmetric pointer itself",
                    edits=None if symmetric is None else _replacement(operand, symmetric),
                )


def _short(qualname: str) -> str:
    return qualname.split(".")[-1]


def _replacement(operand, symmetric):
    return lambda loc: [edits.replace(loc, operand, symmetric)]
