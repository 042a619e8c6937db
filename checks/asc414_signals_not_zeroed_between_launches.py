import libcst as cst

from ascendlint.analysis.distributed import bound_arguments, for_kernel, imports_distributed, targets_other_backend
from ascendlint.analysis.distributed_calls import WAIT, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.signal_protocol import credit_returns_in, waits_for_zero
from ascendlint.analysis.syntax import is_integer
from ascendlint.analysis.module_facts import Kernel, dotted_name
from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid

_SIGNAL_WAITS = frozenset({WAIT, "shmem.signal_wait_until"})
_ZEROING_METHODS = frozenset({"zero_", "fill_"})
_LOOPS = (cst.For, cst.While)


class SignalsNotZeroedBetweenLaunches(Rule):
    """Flags a repeated host launch of a kernel that waits on a signal buffer and leaves it set, when the host does
    not zero that buffer and then pass a cross-rank barrier before each launch."""

    decides = """
    A launch is repeated when it sits in a loop, or in a function that a loop of this module calls.

    The kernel leaves a buffer set when it waits on slots of it (for a non-zero value that is not a launch
    argument such as an epoch) and never returns them to 0, whether its own programs or other ranks set them; a
    kernel that hands every credit back needs no zeroing, and flags the host raises itself (`torch.ones`,
    `fill_(1)`, `flag[i] = 1` in the launching function) are left alone, as are modules for GPU backends. Zeroing is `buf.zero_()` or `buf.fill_(0)`
    on the launch's argument (or the object it comes from); the barrier is a host call named like a barrier
    (`dist.barrier()`, `nvshmem_barrier_all_on_stream(stream)`) between the zeroing and the launch. Opt-in
    (`extend-select = ["ASC414"]`): host code resets signals in too many ways for the rule to be sure.
    """

    code = "ASC414"
    name = "signals-not-zeroed-between-launches"
    default = False  # opt-in: its precision on real host code is not established (see docs/precision-distributed.md)
    message = (
        "`{kernel}` waits on `{buffer}`, which it leaves set, and is launched repeatedly without zeroing it and a "
        "cross-rank barrier before each launch: the next launch sees this launch's signals"
    )
    barrier_message = (
        "`{buffer}` is zeroed before this launch but no cross-rank barrier (`dist.barrier()`) follows: a fast rank "
        "can signal a peer before the peer has zeroed its copy"
    )
    severity = Severity.WARNING
    why = """
        `dl.wait` does not consume a signal. A slot set in one launch still holds its value when the next launch
        starts, so the consumer of the second launch proceeds before its data exists (or the producer waits for a
        slot that never reads 0): the first launch passes, later ones fail. Zero the signal buffer before every
        launch, and wait for every rank to have zeroed it (`dist.barrier()`) before any rank launches, or make the
        kernel return every slot to 0 itself.
    """
    INVALID = [
        Invalid(
            """
            import torch
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def wait_rows(signal_ptr, buf_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            @triton.jit
            def gather_kernel(buf_ptr, signal_ptr, out_ptr, peer, BLOCK: tl.constexpr):
                dl.notify(signal_ptr, peer, signal=1)
                wait_rows(signal_ptr, buf_ptr, out_ptr, BLOCK)

            def run_steps(buf, signal, outs, peer):
                for out in outs:
                    gather_kernel[(1,)](buf, signal, out, peer, BLOCK=64)
            """
        ),
        Invalid(
            """
            import torch.distributed as dist
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                rank = dl.rank()
                offs = tl.arange(0, BLOCK)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + rank * BLOCK + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr + rank * 8, peer, signal=1)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 8, 1, "gpu", "acquire")
                    rows = dl.consume_token(buf_ptr, token) + src * BLOCK
                    tl.store(out_ptr + src * BLOCK + offs, tl.load(rows + offs))

            def run_steps(buf, signal, x, outs, n_ranks, n_cores):
                for out in outs:
                    gather_kernel[(n_cores,)](buf, signal, x, out, n_ranks, BLOCK=256)
            """,
        ),
        Invalid(
            """
            import torch.distributed as dist
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def relay_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                peer = (dl.rank() + 1) % dl.num_ranks()
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer, signal=1)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            def step(ws, x, out, n_cores):
                ws.signal.zero_()
                relay_kernel[(n_cores,)](ws.buf, ws.signal, x, out, BLOCK=256)

            def train(ws, x, outs, n_cores):
                for out in outs:
                    step(ws, x, out, n_cores)
            """
        ),
        Invalid(
            """
            import torch.distributed as dist
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                rank = dl.rank()
                offs = tl.arange(0, BLOCK)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + rank * BLOCK + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr + rank * 8, peer, signal=1)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 8, 1, "gpu", "acquire")
                    rows = dl.consume_token(buf_ptr, token) + src * BLOCK
                    tl.store(out_ptr + src * BLOCK + offs, tl.load(rows + offs))

            def run_steps(buf, signal, x, outs, n_ranks, n_cores):
                for out in outs:
                    gather_kernel[(n_cores,)](buf, signal, x, out, n_ranks, BLOCK=256)

            @triton.jit
            def wait_rows_shmem(buf_ptr, sig_ptr, out_ptr, BLOCK: tl.constexpr):
                # waits on a slot the other ranks set, and never resets it
                libshmem_device.signal_wait_until(sig_ptr, libshmem_device.ACLSHMEM_CMP_EQ, 1)
                offs = tl.arange(0, BLOCK)
                tl.store(out_ptr + offs, tl.load(buf_ptr + offs))

            def train_shmem(buf, sig, outs):
                for out in outs:
                    wait_rows_shmem[(1,)](buf, sig, out, BLOCK=256)
            """,
            count=2,
            doc=True,
        ),
    ]
    VALID = [
        Valid(
            """
            import torch.distributed as dist
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                rank = dl.rank()
                offs = tl.arange(0, BLOCK)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + rank * BLOCK + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr + rank * 8, peer, signal=1)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 8, 1, "gpu", "acquire")
                    rows = dl.consume_token(buf_ptr, token) + src * BLOCK
                    tl.store(out_ptr + src * BLOCK + offs, tl.load(rows + offs))

            def run_steps(buf, signal, x, outs, n_ranks, n_cores):
                for out in outs:
                    signal.fill_(0)
                    dist.barrier()
                    gather_kernel[(n_cores,)](buf, signal, x, out, n_ranks, BLOCK=256)

            @triton.jit
            def wait_rows_shmem(buf_ptr, sig_ptr, out_ptr, BLOCK: tl.constexpr):
                libshmem_device.signal_wait_until(sig_ptr, libshmem_device.ACLSHMEM_CMP_EQ, 1)
                offs = tl.arange(0, BLOCK)
                tl.store(out_ptr + offs, tl.load(buf_ptr + offs))

            def train_shmem(buf, sig, outs):
                for out in outs:
                    sig.zero_()
                    dist.barrier()
                    wait_rows_shmem[(1,)](buf, sig, out, BLOCK=256)
            """,
            doc=True,
        ),
        Valid(
            """
            import torch.distributed as dist
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def gather_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                rank = dl.rank()
                offs = tl.arange(0, BLOCK)
                for peer in range(n_ranks):
                    tl.store(dl.symm_at(buf_ptr, peer) + rank * BLOCK + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                for peer in range(n_ranks):
                    dl.notify(signal_ptr + rank * 8, peer, signal=1)
                for src in range(n_ranks):
                    token = dl.wait(signal_ptr + src * 8, 1, "gpu", "acquire")
                    rows = dl.consume_token(buf_ptr, token) + src * BLOCK
                    tl.store(out_ptr + src * BLOCK + offs, tl.load(rows + offs))

            def run_steps(buf, signal, x, outs, n_ranks, n_cores):
                for out in outs:
                    signal.fill_(0)
                    dist.barrier()
                    gather_kernel[(n_cores,)](buf, signal, x, out, n_ranks, BLOCK=256)
            """,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def ring_consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for rnd in range(n_rounds):
                    slot = signal_ptr + (rnd % 2) * 8
                    token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
                    tl.store(out_ptr + rnd * BLOCK + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))
                    libshmem_device.fence()
                    dl.notify(slot, rank, 0)

            def run_steps(buf, signal, outs, n_rounds, rank, n_cores):
                for out in outs:
                    ring_consumer[(n_cores,)](buf, signal, out, n_rounds, rank, BLOCK=256)
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl
            from triton_dist.language.extra import libshmem_device

            @triton.jit
            def relay_kernel(buf_ptr, signal_ptr, x_ptr, out_ptr, epoch, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                peer = (dl.rank() + 1) % dl.num_ranks()
                tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
                libshmem_device.fence()
                dl.notify(signal_ptr, peer, signal=epoch)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire", waitValue=epoch)
                tl.store(out_ptr + offs, tl.load(dl.consume_token(buf_ptr, token) + offs))

            def run_steps(buf, signal, x, outs, n_cores):
                for epoch, out in enumerate(outs, start=1):
                    relay_kernel[(n_cores,)](buf, signal, x, out, epoch, BLOCK=256)
            """
        ),
    ]

    def finish(self) -> None:
        facts = self.context.facts
        if not facts.launches or not imports_distributed(facts):
            return
        if targets_other_backend(self.context):
            return  # written for a GPU backend of Triton-distributed
        leaving: dict[str, list[str]] = {}
        for launch in facts.launches:
            kernel = launch.kernel
            if kernel is None:
                continue
            if kernel.name not in leaving:
                leaving[kernel.name] = _buffers_left_set(self.context, for_kernel(self.context, kernel))
            for param in leaving[kernel.name]:
                argument = _argument_for(kernel, launch.call, param)
                if self._host_sets(launch.call, argument):
                    continue  # a ready flag the host raises: its business, not a stale signal
                if self._repeated(launch.call):
                    self._check(launch, kernel, param, _argument_for(kernel, launch.call, param))
                    break  # one finding per launch

    def _check(self, launch, kernel: Kernel, param: str, argument: cst.BaseExpression | None) -> None:
        """``argument`` is None when the launch passes ``*args``: then any zeroing in the scope counts."""
        scope = self._repeat_scope(launch.call)
        position = self.context.index.order(launch.call)
        zeroings = [c for c in _calls_in(self.context, scope)
                    if self.context.index.order(c) < position and _zeroes(c, argument)]
        text = param if argument is None else " ".join(self.context.module.code_for_node(argument).split())
        if not zeroings:
            self.report(launch.call, self.message.format(kernel=kernel.name, buffer=text))
            return
        last = max(self.context.index.order(z) for z in zeroings)
        barriers = [c for c in _calls_in(self.context, scope)
                    if last < self.context.index.order(c) < position and _is_barrier(c)]
        if not barriers:
            self.report(launch.call, self.barrier_message.format(buffer=text))

    def _host_sets(self, call: cst.Call, argument: cst.BaseExpression | None) -> bool:
        """The host function launching ``call`` gives the argument's buffer a non-zero value itself:
        ``torch.ones(...)``, ``torch.full(..., v)``, ``x.fill_(v)`` with ``v != 0``, or ``x[...] = v``."""
        target = _root_name(argument) if argument is not None else None
        function = self._host_function(call)
        if target is None or function is None:
            return False
        for node in self.context.index.subtree(function):
            if type(node) is cst.Call:
                name = dotted_name(node.func) or ""
                func = node.func
                if type(func) is cst.Attribute and func.attr.value == "fill_" and _root_name(func.value) == target:
                    if node.args and not (is_integer(node.args[0].value, 0)
                                          or _is_zero_float(node.args[0].value)):
                        return True
            elif type(node) is cst.Assign:
                for assigned in node.targets:
                    where = assigned.target
                    if type(where) is cst.Subscript and _root_name(where) == target:
                        return True
                    if type(where) is cst.Name and where.value == target and type(node.value) is cst.Call:
                        maker = (dotted_name(node.value.func) or "").split(".")[-1]
                        if maker in ("ones", "ones_like", "full", "full_like"):
                            return True
        return False

    # -- where a launch repeats ------------------------------------------------------------------------------
    def _repeated(self, call: cst.Call) -> bool:
        return self._enclosing_loop(call) is not None or self._called_in_loop(self._host_function(call))

    def _repeat_scope(self, call: cst.Call) -> cst.CSTNode:
        """The loop body (or the host function) in which the zeroing and barrier must precede the launch."""
        loop = self._enclosing_loop(call)
        return loop if loop is not None else (self._host_function(call) or self.context.module)

    def _enclosing_loop(self, node: cst.CSTNode):
        for ancestor in self.context.index.ancestors(node):
            if type(ancestor) is cst.FunctionDef:
                return None
            if isinstance(ancestor, _LOOPS):
                return ancestor
        return None

    def _host_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.context.index.ancestors(node) if type(a) is cst.FunctionDef), None)

    def _called_in_loop(self, function: cst.FunctionDef | None) -> bool:
        if function is None:
            return False
        name = function.name.value
        for call in self.context.index.of_type(cst.Call):
            callee = dotted_name(call.func)
            if callee is not None and callee.split(".")[-1] == name and self._enclosing_loop(call) is not None:
                return True
        return False


def _buffers_left_set(context, dist: DistAnalysis, _inside: frozenset = frozenset()) -> list[str]:
    """Kernel parameters whose slots the kernel waits on and never resets to 0: set by its own programs, or by
    other ranks (a kernel that only waits). Waits and resets in the `triton.jit` helpers it calls count as its
    own, on the arguments it passes them.

    A wait for a value the launch passes in (an epoch, a call count) is not fooled by the previous launch's
    signals; a buffer the host itself raises is the host's business (see `_host_sets`): neither counts.
    """
    waited: list[str] = []
    for wait in dist.calls_to(*_SIGNAL_WAITS):
        if waits_for_zero(wait, dist.qualname_of(wait)):
            continue
        if _epoch(dist, _expected_value(dist, wait)):
            continue  # epoch-style signalling: each launch waits for a value of its own
        slot = wait.args[0].value if wait.args else None
        root = dist.pointer_root(slot) if slot is not None else None
        if root is not None and root not in waited:
            waited.append(root)
    reset = {dist.pointer_root(slot) for _, slot in credit_returns_in(dist, dist.kernel.node)}
    for call, helper in _helper_calls(context, dist):
        if helper.name in _inside:
            continue
        helper_dist = for_kernel(context, helper)
        helper_left = _buffers_left_set(context, helper_dist, _inside | {dist.kernel.name, helper.name})
        helper_reset = {helper_dist.pointer_root(slot)
                        for _, slot in credit_returns_in(helper_dist, helper_dist.kernel.node)}
        for param, argument in bound_arguments(helper, call):
            root = dist.pointer_root(argument)
            if root is None:
                continue
            if param in helper_left and root not in waited:
                waited.append(root)
            if param in helper_reset:
                reset.add(root)
    return [root for root in waited if root not in reset]


def _helper_calls(context, dist: DistAnalysis):
    """(call, helper) for every call of a `triton.jit` function of this module in ``dist``'s kernel."""
    for node in dist.nodes:
        if type(node) is not cst.Call:
            continue
        name = dist.qualname_of(node) or ""
        if name.startswith("local."):
            helper = context.facts.kernels.get(name[len("local."):])
            if helper is not None:
                yield node, helper


def _expected_value(dist: DistAnalysis, wait: cst.Call) -> cst.BaseExpression | None:
    if dist.qualname_of(wait) == WAIT:
        return call_argument(wait, 4, "waitValue")
    return call_argument(wait, 2, "cmp_val", "cmp_value")


def _epoch(dist: DistAnalysis, expected: cst.BaseExpression | None) -> bool:
    """The awaited value comes straight from kernel arguments (``epoch``, ``call_count + 1``)."""
    if expected is None:
        return False
    reads = dist.reads_in(expected)
    return bool(reads) and all(
        all(d.kind == "param" for d in dist.values.definitions(read)) for read in reads)


def _argument_for(kernel: Kernel, call: cst.Call, param: str) -> cst.BaseExpression | None:
    """The launch's argument for ``param``; None when it cannot be told (``*args``)."""
    position = kernel.params.index(param)
    positional = [a for a in call.args if a.keyword is None]
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    return positional[position].value if position < len(positional) else None


def _calls_in(context, scope: cst.CSTNode):
    nodes = context.index.subtree(scope) if type(scope) in (cst.FunctionDef, cst.For, cst.While) else \
        context.index.nodes
    return [n for n in nodes if type(n) is cst.Call]


def _zeroes(call: cst.Call, argument: cst.BaseExpression | None) -> bool:
    """``x.zero_()`` / ``x.fill_(0)`` on the launch's argument or on the object it is taken from (on anything
    when the argument is unknown)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in _ZEROING_METHODS:
        return False
    if func.attr.value == "fill_" and not (call.args and is_integer(call.args[0].value, 0)
                                          or call.args and _is_zero_float(call.args[0].value)):
        return False
    if argument is None:
        return True
    receiver, target = _root_name(func.value), _root_name(argument)
    return receiver is not None and receiver == target


def _is_zero_float(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Float and float(expr.value) == 0.0


def _root_name(expr: cst.BaseExpression) -> str | None:
    while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
        expr = expr.value if type(expr) is not cst.Call else expr.func
    return expr.value if type(expr) is cst.Name else None


def _is_barrier(call: cst.Call) -> bool:
    """A host-side barrier: `dist.barrier()`, `nvshmem_barrier_all_on_stream(...)`, `group.barrier()`..."""
    name = dotted_name(call.func)
    return name is not None and "barrier" in name.split(".")[-1]
