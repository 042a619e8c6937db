from __future__ import annotations

import libcst as cst

from ascendlint.analysis.distributed import for_kernel
from ascendlint.analysis.distributed_calls import GET_CALLS, WAIT, call_argument
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

# What Triton-distributed's `dl.wait(barrierPtrs, numBarriers, scope, semantic, waitValue=1)` accepts: the scope and
# semantic strings go through Triton's `_str_to_scope` / `_str_to_sem`, which raise ValueError for anything else
# (an empty string or None selects the default: "gpu", "acq_rel").
SCOPES = ("gpu", "cta", "sys")
SEMANTICS = ("acquire", "release", "acq_rel", "relaxed")
_ACQUIRING = frozenset({"acquire", "acq_rel"})
_READS = frozenset({"tl.load", "dl.consume_token"}) | GET_CALLS


def _string(expr: cst.BaseExpression | None, constants: dict[str, str]) -> str | None:
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value
    if type(expr) is cst.Name:
        return constants.get(expr.value)
    return None


class WaitWithoutAcquire(Rule):
    """Flags a `dl.wait(...)` without acquire ordering at the scope of its producer."""

    decides = """
    Reported when the wait's `semantic` is `"relaxed"` or `"release"`, when its `scope` is `"cta"` (one core: a
    signal another core or rank sets is outside it), or when either is a string `dl.wait` does not accept
    (scopes `"gpu"`, `"cta"`, `"sys"`; semantics `"acquire"`, `"release"`, `"acq_rel"`, `"relaxed"`). Only waits
    followed by a read in the kernel (`tl.load`, `dl.consume_token`, `getmem`) guard data and are checked for
    ordering (up to the next `dl.wait`, which guards what follows it); an unknown name is reported wherever it
    is. Strings are read from literals and module constants.

    Triton-distributed passes the two strings through Triton's scope and semantic parsers, which accept only
    `"gpu"`, `"cta"`, `"sys"` and `"acquire"`, `"release"`, `"acq_rel"`, `"relaxed"` and raise ValueError at
    compile time for anything else; its Ascend lowering hands the parsed attributes on to the
    `aclshmem_wait_*` call.
    """

    code = "ASC415"
    name = "wait-without-acquire"
    message = "this `dl.wait` {problem}"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    default = False
    opt_in_reason = (
        'Not yet measured: the rule reports nothing in the shared corpus, the held-out set or the fresh set '
        '(every `dl.wait` there waits with "acquire" at "gpu" or "sys" scope), so its precision on real code '
        'is unknown; it can join the default set once measured.'
    )
    why = """
        `dl.wait(ptr, n, scope, semantic)` is the consumer's half of a signal: the producer writes the data, then
        sets the signal; the consumer waits for the signal, then reads the data. The read only sees the data if
        the wait carries acquire ordering at a scope that includes the producer. With `"relaxed"` (or
        `"release"`, which orders the consumer's earlier accesses, not its later ones) the wait returns when the
        signal arrives but later loads may still be served from before it, so the kernel reads stale data.
        `"cta"` orders only within one core; a signal set by another AI core or another rank (with `dl.notify`,
        whose own scopes are `"gpu"`, `"intra_node"`, `"inter_node"`) is outside it.
    """
    fix_notes = """
        Wait with `dl.wait(ptr, n, "gpu", "acquire")` (or `"sys"` where the host or another device writes the
        signal) and tie the reads to the token with `dl.consume_token`. There is no automatic fix: choosing the
        scope needs to know who produces the signal.
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
                token = dl.wait(signal_ptr, 1, "gpu", "relaxed")
                buf = dl.consume_token(buf_ptr, token)
                tl.store(out_ptr + offs, tl.load(buf + offs))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl
            from triton_dist import language as tdl

            SCOPE = "cta"

            @triton.jit
            def gather(buf_ptr, signal_ptr, out_ptr, n_ranks, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                for src in range(n_ranks):
                    token = tdl.wait(signal_ptr + src, 1, scope=SCOPE, semantic="acquire")
                    tile = tl.load(tdl.consume_token(buf_ptr, token) + src * BLOCK + offs)
                    tl.store(out_ptr + src * BLOCK + offs, tile)
                tdl.wait(signal_ptr, 1, "device", "acquire")
                token = tdl.wait(signal_ptr, n_ranks, "gpu", "release")
                tl.store(out_ptr + offs, tl.load(tdl.consume_token(buf_ptr, token) + offs))
            """,
            count=3,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def consumer(buf_ptr, signal_ptr, out_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                token = dl.wait(signal_ptr, 1, "gpu", "acquire")
                buf = dl.consume_token(buf_ptr, token)
                tl.store(out_ptr + offs, tl.load(buf + offs))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl
            import triton_dist.language as dl

            @triton.jit
            def relay(signal_ptr, next_signal_ptr, peer, scope: tl.constexpr):
                dl.wait(signal_ptr, 1, "gpu", "relaxed")
                dl.notify(next_signal_ptr, peer, signal=1, sig_op="set", comm_scope="intra_node")
                token = dl.wait(signal_ptr, 1, "sys", "acq_rel")
                dl.wait(signal_ptr, 1, scope, "acquire")
                tl.store(signal_ptr + 1, tl.load(dl.consume_token(signal_ptr, token) + 2))
            """
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.facts.qualname(node.func) != WAIT:
            return
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        constants = self._string_constants()
        scope = _string(call_argument(node, 2, "scope"), constants)
        semantic = _string(call_argument(node, 3, "semantic"), constants)
        if scope and scope not in SCOPES:
            self.report(node, self.message.format(
                problem=f"has scope {scope!r}, which `dl.wait` rejects (it takes {', '.join(map(repr, SCOPES))})"))
            return
        if semantic and semantic not in SEMANTICS:
            self.report(node, self.message.format(
                problem=f"has semantic {semantic!r}, which `dl.wait` rejects (it takes "
                        f"{', '.join(map(repr, SEMANTICS))})"))
            return
        if not self._guards_reads(for_kernel(self.context, kernel), node):
            return
        if semantic in ("relaxed", "release"):
            self.report(node, self.message.format(
                problem=f"has semantic {semantic!r}: no acquire ordering, so the reads after it can see stale data"))
        elif scope == "cta":
            self.report(node, self.message.format(
                problem="has scope 'cta' (one core): a signal set by another core or rank is outside it; use 'gpu'"))

    def _guards_reads(self, dist: DistAnalysis, wait: cst.Call) -> bool:
        """A read follows the wait in the kernel's source order before the next wait takes over."""
        order = dist.index.order
        after = order(wait)
        later_waits = [order(w) for w in dist.calls_to(WAIT) if order(w) > after]
        until = min(later_waits, default=None)
        return any(
            order(call) > after and (until is None or order(call) < until)
            for name in _READS for call in dist.calls_to(name)
        )

    def _string_constants(self) -> dict[str, str]:
        def collect() -> dict[str, str]:
            found: dict[str, str] = {}
            for statement in self.context.module.body:
                if type(statement) is not cst.SimpleStatementLine:
                    continue
                for small in statement.body:
                    if (type(small) is cst.Assign and len(small.targets) == 1
                            and type(small.targets[0].target) is cst.Name and type(small.value) is cst.SimpleString):
                        found[small.targets[0].target.value] = small.value.evaluated_value
            return found

        return self.context.memo(("asc415-string-constants",), collect)
