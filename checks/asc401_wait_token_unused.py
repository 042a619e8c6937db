import builtins

import libcst as cst

from ascendlint.diagnostics import Severity
from ascendlint.analysis.distributed import distributed_kernels
from ascendlint.analysis.distributed_calls import CONSUME_TOKEN, WAIT, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.rule import Invalid, Rule, Valid

# Expressions a token may pass through on its way to an assignment or a call argument.
_TRANSPARENT = (cst.BinaryOperation, cst.UnaryOperation, cst.Arg, cst.Element, cst.Tuple)
_PYTHON_BUILTINS = frozenset(vars(builtins))


class WaitTokenUnused(Rule):
    """Flags a `dl.wait(...)` whose token never reaches `dl.consume_token(value, token)`."""

    decides = """
    Tokens may be summed (`token += dl.wait(...)`) and the sum consumed once; a token handed to a helper
    function or returned is left to that function. The libshmem_device dialect has no token:
    `signal_wait_until(slot, cmp, value)` is an external call with effects, kept by the compiler as written, so
    this rule has nothing to check there.
    """

    code = "ASC401"
    name = "wait-token-unused"
    message = "the token of this `dl.wait` never reaches `dl.consume_token`: the compiler may drop the wait"
    severity = Severity.ERROR
    why = """
        `dl.wait` only yields a token; nothing in the kernel depends on the wait until that token is tied to a
        value with `dl.consume_token`. Without that data dependency the compiler is free to remove the wait or
        to move the loads of the waited-for buffer above it, so the kernel reads data before it has arrived.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                dl.wait(signal_ptr, 1, "gpu", "acquire")
                tl.store(out_ptr + offs, tl.load(buf_ptr + offs))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist import language as tdl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for src in range(n_ranks):
                    token = tdl.wait(signal_ptr + src, 1, "gpu", "acquire")
                    tile = tl.load(buf_ptr + src * BLOCK + offs)
                    tl.store(out_ptr + src * BLOCK + offs, tile)
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist.language import wait, consume_token

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                first = wait(signal_ptr, 1, "gpu", "acquire")
                second = wait(signal_ptr + 1, 1, "gpu", "acquire")
                ready = consume_token(buf_ptr, first)
                tl.store(out_ptr + offs, tl.load(ready + offs))
            """
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def two_roles(buf_ptr, signal_ptr, out_ptr, is_consumer, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                if is_consumer:
                    token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                    ready = dl.consume_token(buf_ptr, token)
                    tl.store(out_ptr + offs, tl.load(ready + offs))
                else:
                    token = dl.wait(signal_ptr + 1, 1, "gpu", "acquire", waitValue=0)
                    tl.store(buf_ptr + offs, tl.load(out_ptr + offs))
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
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                ready = dl.consume_token(buf_ptr, token)
                tl.store(out_ptr + offs, tl.load(ready + offs))

            @triton.jit
            def consume_shmem(buf_ptr, sig_ptr, out_ptr, BLOCK: tl.constexpr):
                # the shmem dialect's wait returns no token: the call itself is kept, nothing to consume
                libshmem_device.signal_wait_until(sig_ptr, libshmem_device.ACLSHMEM_CMP_EQ, 1)
                offs = tl.arange(0, BLOCK)
                tl.store(out_ptr + offs, tl.load(buf_ptr + offs))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                ready = dl.consume_token(buf_ptr, token)
                tl.store(out_ptr + offs, tl.load(ready + offs))
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                for src in range(1, n_ranks):
                    token += dl.wait(signal_ptr + src, 1, "gpu", "acquire")
                ready = dl.consume_token(buf_ptr, token)
                tl.store(out_ptr + offs, tl.load(ready + offs))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                low = dl.wait(signal_ptr, 1, "gpu", "acquire")
                high = dl.wait(signal_ptr + 1, 1, "gpu", "acquire")
                total = low + high
                tile = tl.load(
                    dl.consume_token(
                        buf_ptr,
                        total,
                    )
                    + offs
                )
                tl.store(out_ptr + offs, tile)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                ready = dl.consume_token(buf_ptr, dl.wait(signal_ptr, 1, "gpu", "acquire"))
                tl.store(out_ptr + offs, tl.load(ready + offs))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def wait_slot(signal_ptr):
                return dl.wait(signal_ptr, 1, "gpu", "acquire")

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = wait_slot(signal_ptr)
                ready = dl.consume_token(buf_ptr, token=token)
                tl.store(out_ptr + offs, tl.load(ready + offs))
            """
        ),
        Valid(
            """
            import triton_dist.language as dl

            def host_side(signal):
                dl.wait(signal, 1, "gpu", "acquire")
            """
        ),
    ]

    def finish(self) -> None:
        for dist in distributed_kernels(self.context):
            waits = dist.calls_to(WAIT)
            if not waits:
                continue
            kept = _kept_definitions(dist)
            for wait in waits:
                if not _token_kept(dist, wait, kept):
                    self.report(wait)


def _kept_definitions(dist: DistAnalysis) -> set[int]:
    """Statements (by id) whose value reaches a `consume_token` token or leaves the kernel (returned, or passed
    to a helper), following only the definitions that reach each read."""
    roots: list[cst.BaseExpression] = []
    for call in dist.calls_to(CONSUME_TOKEN):
        token = call_argument(call, 1, "token")
        if token is not None:
            roots.append(token)
    for node in dist.nodes:
        if type(node) is cst.Return and node.value is not None:
            roots.append(node.value)
        elif type(node) is cst.Call and _is_helper_call(dist, node):
            roots.extend(arg.value for arg in node.args)
    return {id(d.statement) for root in roots for d in dist.definitions_reaching(root) if d.statement is not None}


def _is_helper_call(dist: DistAnalysis, call: cst.Call) -> bool:
    """A call that may take the token further: a function of the user's, not a Triton, Triton-distributed,
    shmem or Python built-in."""
    name = dist.qualname_of(call) or ""
    if name.startswith("local."):
        return name[len("local.") :] not in _PYTHON_BUILTINS
    return not name.startswith(("tl.", "dl.", "shmem.", "triton.", "cann."))


def _token_kept(dist: DistAnalysis, wait: cst.Call, kept: set[int]) -> bool:
    child: cst.CSTNode = wait
    for parent in dist.index.ancestors(wait):
        if isinstance(parent, _TRANSPARENT):
            child = parent
            continue
        if type(parent) is cst.Call:
            if dist.qualname_of(parent) == CONSUME_TOKEN:
                return child is not parent.args[0]
            if _is_helper_call(dist, parent):
                return True
            child = parent
            continue
        if type(parent) in (cst.Assign, cst.AnnAssign, cst.AugAssign):
            return id(parent) in kept
        return type(parent) in (cst.Return, cst.NamedExpr, cst.Lambda)
    return False
