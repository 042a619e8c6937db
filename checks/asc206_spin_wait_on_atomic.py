from __future__ import annotations

import libcst as cst

from ascendlint.analysis.distributed import for_kernel
from ascendlint.analysis.distributed_values import DistAnalysis
from ascendlint.analysis.flow import bound_names
from ascendlint.diagnostics import FixSafety, Severity
from ascendlint.rule import Invalid, Rule, Valid

_LOADS = frozenset({"tl.load"})


def _is_volatile_load(dist: DistAnalysis, call: cst.Call) -> bool:
    if dist.qualname_of(call) not in _LOADS:
        return False
    return any(
        a.keyword is not None and a.keyword.value == "volatile" and type(a.value) is cst.Name and a.value.value == "True"
        for a in call.args
    )


def _is_atomic(dist: DistAnalysis, call: cst.Call) -> bool:
    return (dist.qualname_of(call) or "").startswith("tl.atomic_")


class SpinWaitOnAtomic(Rule):
    """Flags a busy-wait `while` loop that polls an atomic, and a spin-wait whose protected loads do not depend on
    what it polled."""

    decides = """
    A spin-wait is a `while` whose condition reads `tl.atomic_*(...)` or `tl.load(..., volatile=True)`, directly or
    through a name the loop body assigns from one. It is reported (once, on the `while`) when it polls an atomic,
    or when a `tl.load` that follows it in the kernel takes an address that none of the polled values feed.

    triton-ascend 3.2.0's frontend accepts both forms and lowers them to Linalg (checked offline), and what
    it makes of them shows how fragile they are. In the atomic poll, the `tl.atomic_add` becomes a
    `linalg.generic` tagged `GenericAtomicRMW = "add"`, `MemSemantic = "acquire"` inside the `scf.while`,
    but the loop condition compares a separate plain copy of the counter taken before it. A loop that only
    polls `tl.load(..., volatile=True)` is in the TTIR (`scf.while`) and gone from the Linalg altogether,
    with or without the acquire atomic after it. No spin-wait written in kernel code should be relied on
    without testing it on the device; Triton-distributed's `dl.wait` is the supported way to wait for a
    signal.
    """

    code = "ASC206"
    name = "spin-wait-on-atomic"
    message = "spin-wait {problem}"
    severity = Severity.ERROR
    fix_safety = FixSafety.NONE
    default = False
    opt_in_reason = (
        "Not yet measured: the rule reports nothing in the shared corpus, the held-out set or the fresh set "
        "(they hold no spin-wait on an atomic or a volatile load), so its precision on real code is unknown; "
        "it can join the default set once measured."
    )
    why = """
        A busy-wait is a loop the compiler sees with nothing inside it. Two things go wrong on Ascend. An atomic
        in the loop condition (`while tl.atomic_add(ctr, 0, sem="acquire") < n: pass`, `tl.atomic_cas` alike) has
        crashed the CANN compiler; and a load after the loop whose address does not depend on the polled value is,
        as far as the compiler knows, independent of the loop, so it has been hoisted above it and read the data
        before the producer wrote it. A real fix polls with `tl.load(ctr, volatile=True)`, issues one acquire
        atomic after the loop, and threads the polled value into the protected addresses, so the loads cannot move
        above the wait.
    """
    fix_notes = """
        Poll with a volatile load, order once after the loop, and make the protected addresses depend on what was
        polled:

            flag = tl.load(ctr, volatile=True)
            while flag < n:
                flag = tl.load(ctr, volatile=True)
            tl.atomic_add(ctr, 0, sem="acquire")
            offs = tl.arange(0, BLOCK) + (flag - flag)
            x = tl.load(data + offs)

        Where Triton-distributed is available, `dl.wait(ctr, 1, "gpu", "acquire")` with `dl.consume_token` does
        all of this in one call.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def reduce_after_barrier(ctr, partial, out, n_programs, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(partial + tl.program_id(0) * BLOCK + offs, tl.full([BLOCK], 1.0, tl.float32))
                tl.atomic_add(ctr, 1, sem="release")
                while tl.atomic_add(ctr, 0, sem="acquire") < n_programs:
                    pass
                tl.store(out + offs, tl.load(partial + offs))
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def locked_update(lock, x_ptr, BLOCK: tl.constexpr):
                while tl.atomic_cas(lock, 0, 1) == 1:
                    pass
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
                tl.atomic_xchg(lock, 0)
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def consumer(flag_ptr, data, out, BLOCK: tl.constexpr):
                ready = tl.load(flag_ptr, volatile=True)
                while ready == 0:
                    ready = tl.load(flag_ptr, volatile=True)
                offs = tl.arange(0, BLOCK)
                tl.store(out + offs, tl.load(data + offs))
            """,
        ),
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def consumer(flag_ptr, data, out, BLOCK: tl.constexpr):
                seen = tl.atomic_or(flag_ptr, 0)
                while seen == 0:
                    seen = tl.atomic_or(flag_ptr, 0)
                offs = tl.arange(0, BLOCK) + (seen - seen)
                tl.store(out + offs, tl.load(data + offs))
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def reduce_after_barrier(ctr, partial, out, n_programs, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(partial + tl.program_id(0) * BLOCK + offs, tl.full([BLOCK], 1.0, tl.float32))
                tl.atomic_add(ctr, 1, sem="release")
                arrived = tl.load(ctr, volatile=True)
                while arrived < n_programs:
                    arrived = tl.load(ctr, volatile=True)
                tl.atomic_add(ctr, 0, sem="acquire")
                tl.store(out + offs, tl.load(partial + offs + (arrived - arrived)))
            """,
            doc=True,
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def count_then_write(ctr, x_ptr, n, BLOCK: tl.constexpr):
                while tl.load(ctr, volatile=True) < n:
                    pass
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32))
            """
        ),
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def accumulate(ctr, x_ptr, n, BLOCK: tl.constexpr):
                i = 0
                acc = tl.zeros([BLOCK], dtype=tl.float32)
                while i < n:
                    acc += tl.load(x_ptr + i * BLOCK + tl.arange(0, BLOCK))
                    i += 1
                tl.atomic_add(ctr, 1)
                tl.store(x_ptr + tl.arange(0, BLOCK), acc)
            """
        ),
    ]

    def visit_While(self, node: cst.While) -> None:
        kernel = self.facts.enclosing_kernel(node)
        if kernel is None:
            return
        dist = for_kernel(self.context, kernel)
        polled_calls = self._polled_calls(dist, node)
        if not polled_calls:
            return
        problems = []
        atomics = [c for c in polled_calls if _is_atomic(dist, c)]
        if atomics:
            problems.append(f"polls `{dist.qualname_of(atomics[0])}`; poll with `tl.load(..., volatile=True)`")
        polled_names = {name.value for s in dist.below(node.body) if type(s) in (cst.Assign, cst.AugAssign)
                        for name, _ in bound_names(s)}
        polled_names.update(read.value for read in dist.reads_in(node.test))
        loose = self._independent_loads(dist, kernel, node, polled_names)
        if loose:
            where = f" (line {self.context.locator.span(loose[0])[0].row})"
            problems.append(
                f"guards loads whose addresses do not depend on what it polled{where}; the compiler may hoist them "
                "above the loop"
            )
        if problems:
            self.report(node, self.message.format(problem="; it ".join(problems)))

    def _polled_calls(self, dist: DistAnalysis, loop: cst.While) -> list[cst.Call]:
        """Atomics and volatile loads the condition reads, directly or through names the body assigns."""
        found = [n for n in (loop.test, *dist.below(loop.test)) if type(n) is cst.Call]
        read = {r.value for r in dist.reads_in(loop.test)}
        for statement in dist.below(loop.body):
            if type(statement) not in (cst.Assign, cst.AugAssign):
                continue
            if any(name.value in read for name, _ in bound_names(statement)):
                found.extend(n for n in dist.below(statement) if type(n) is cst.Call)
        return [c for c in found if _is_atomic(dist, c) or _is_volatile_load(dist, c)]

    def _independent_loads(self, dist: DistAnalysis, kernel, loop: cst.While, polled: set[str]) -> list[cst.Call]:
        """Non-volatile loads after ``loop`` (in the kernel's source order, up to the next spin-wait) whose address
        no polled value feeds."""
        order = dist.index.order
        start = order(loop)
        end_of_loop = max((order(n) for n in dist.below(loop)), default=start)
        found = []
        for call in dist.calls_to("tl.load"):
            position = order(call)
            if position <= end_of_loop or _is_volatile_load(dist, call) or not call.args:
                continue
            if self._spin_between(dist, end_of_loop, position):
                continue
            if not (dist.names_feeding(call.args[0].value) & polled):
                found.append(call)
        return sorted(found, key=order)

    def _spin_between(self, dist: DistAnalysis, after: int, before: int) -> bool:
        for node in dist.nodes:
            if type(node) is cst.While and after < dist.index.order(node) < before and self._polled_calls(dist, node):
                return True
        return False
