"""The shared kernel analysis: reaching definitions, value traits, later reads and branch exclusivity."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis import flow
from ascendlint.analysis.values import KernelAnalysis
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex

HEADER = "import triton\nimport triton.language as tl\n\n"


class Probe:
    """One analysed kernel and a way to pick its nodes by their source text."""

    def __init__(self, code: str, kernel: str = "kernel") -> None:
        self.module = cst.parse_module(HEADER + textwrap.dedent(code).lstrip("\n"))
        self.index = NodeIndex(self.module)
        self.facts = ModuleFacts(self.module, self.index)
        self.analysis = KernelAnalysis(self.facts.kernels[kernel], self.facts, self.index)

    def nodes(self, source: str, kind: type = cst.CSTNode) -> list:
        return [
            n
            for n in self.analysis.nodes
            if isinstance(n, kind) and not isinstance(n, cst.Module) and self.module.code_for_node(n) == source
        ]

    def expr(self, source: str, occurrence: int = -1):
        """The expression with this exact text (the last occurrence unless told otherwise)."""
        found = [n for n in self.nodes(source, cst.BaseExpression)]
        assert found, f"no expression {source!r}"
        return found[occurrence]

    def read(self, name: str, occurrence: int = -1) -> cst.Name:
        return self.analysis.reads[name][occurrence]

    def assigned(self, read: cst.Name) -> list[str]:
        """Source of the value each reaching definition binds (``<param>`` / ``<loop>`` for the others)."""
        shown = []
        for definition in self.analysis.definitions(read):
            if definition.kind == "param":
                shown.append("<param>")
            elif definition.kind == "loop":
                shown.append("<loop>")
            else:
                shown.append(self.module.code_for_node(definition.value))
        return sorted(shown)


# -- reaching definitions ----------------------------------------------------------------------------------------


def test_a_reassignment_replaces_the_earlier_value_in_straight_code():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            v = 1
            v = tl.program_id(0)
            tl.store(x, v)
        """
    )
    assert probe.assigned(probe.read("v")) == ["tl.program_id(0)"]


def test_both_branches_of_an_if_reach_the_code_after_it_but_not_each_other():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            if n > 0:
                v = 1
            else:
                w = v
                v = 2
            tl.store(x, v)
        """
    )
    assert probe.assigned(probe.read("v", 0)) == []  # the else branch never sees the if branch
    assert probe.assigned(probe.read("v", 1)) == ["1", "2"]


def test_an_if_without_else_keeps_the_value_from_before_it():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            v = 0
            if n > 0:
                v = 1
            tl.store(x, v)
        """
    )
    assert probe.assigned(probe.read("v")) == ["0", "1"]


def test_a_value_assigned_late_in_a_loop_reaches_the_top_of_the_next_iteration():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            p = x
            for i in range(0, n):
                tl.store(p, i)
                p = p + 1
            tl.store(p, 0)
        """
    )
    assert probe.assigned(probe.read("p", 0)) == ["p + 1", "x"]
    assert probe.assigned(probe.read("p", -1)) == ["p + 1", "x"]
    assert probe.assigned(probe.read("i")) == ["<loop>"]


def test_return_break_and_continue_end_their_paths():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            v = 0
            if n > 5:
                v = 1
                return
            for i in range(0, n):
                v = 2
                if i > 3:
                    v = 3
                    break
                v = 4
                continue
                v = 5
            tl.store(x, v)
        """
    )
    assert probe.assigned(probe.read("v")) == ["0", "3", "4"]


def test_a_parameter_reaches_until_it_is_reassigned():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            a = n + 1
            n = 2
            tl.store(x, n + a)
        """
    )
    assert probe.assigned(probe.read("n", 0)) == ["<param>"]
    assert probe.assigned(probe.read("n", 1)) == ["2"]


def test_tuple_assignment_pairs_each_name_with_its_element():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, cu):
            bos, eos = tl.load(cu), tl.load(cu + 1)
            tl.store(x + bos, eos)
        """
    )
    assert probe.assigned(probe.read("bos")) == ["tl.load(cu)"]
    assert probe.assigned(probe.read("eos")) == ["tl.load(cu + 1)"]


# -- traits ------------------------------------------------------------------------------------------------------

CONSTEXPR_KERNEL = """
@triton.jit
def kernel(x, h0, T, B: tl.constexpr, C: tl.constexpr):
    a = B * C + 1
    flag = (B > 2) and not (C == 1)
    has = h0 is not None
    pid = tl.program_id(0)
    mixed = B + pid
    tl.store(x + a + mixed + T, flag + has)
"""


@pytest.mark.parametrize(
    "source, constexpr, compile_time",
    [
        ("B * C + 1", True, True),
        ("(B > 2) and not (C == 1)", True, True),
        ("h0 is not None", True, True),
        ("a", False, True),  # plain assignment binds a tensor, whose value the compiler still folds
        ("flag", False, True),
        ("has", False, True),
        ("mixed", False, False),
        ("T", False, False),
        ("pid", False, False),
    ],
)
def test_constexpr_objects_and_compile_time_values(source, constexpr, compile_time):
    probe = Probe(CONSTEXPR_KERNEL)
    assert probe.analysis.is_constexpr(probe.expr(source)) is constexpr
    assert probe.analysis.is_compile_time(probe.expr(source)) is compile_time


WIDTH_KERNEL = """
@triton.jit
def kernel(x, T, n, BM: tl.constexpr):
    i_m = tl.program_id(0).to(tl.int64)
    i_t = tl.program_id(1)
    a = i_m * BM
    b = tl.cast(i_t, tl.int64) * BM
    c = i_t * BM
    d = (i_t * T).to(tl.int64)
    e = d.to(tl.int32)
    if n > 0:
        f = a
    else:
        f = c
    for j in range(0, a):
        g = j * BM
    for k in range(0, n):
        h = k * BM
    tl.store(x + a + b + c + d + e + f + g + h, 0)
"""


@pytest.mark.parametrize(
    "name, int64, may_be_int64",
    [("a", True, True), ("b", True, True), ("c", False, False), ("d", True, True), ("e", False, False),
     ("f", False, True), ("g", True, True), ("h", False, False), ("j", True, True), ("k", False, False)],
)
def test_int64_flows_through_arithmetic_names_branches_and_loop_bounds(name, int64, may_be_int64):
    probe = Probe(WIDTH_KERNEL)
    read = probe.read(name)
    assert probe.analysis.is_int64(read) is int64
    assert probe.analysis.may_be_int64(read) is may_be_int64


INDEX_KERNEL = """
@triton.jit
def kernel(x, cu, T, H, BT: tl.constexpr):
    i_bh = tl.program_id(0)
    i_b = i_bh // H
    NT = tl.cdiv(T, BT)
    bos = tl.load(cu + i_b)
    offs = tl.arange(0, BT)
    for i_t in range(0, NT):
        tl.store(x + i_b * T + bos + offs + NT + i_t, 0)
    for s in tl.static_range(4):
        tl.store(x + s, 0)
"""


@pytest.mark.parametrize(
    "name, index, extent, constexpr",
    [("i_b", True, False, False), ("NT", False, True, False), ("bos", True, False, False),
     ("offs", False, False, False), ("i_t", True, False, False), ("T", False, True, False),
     ("BT", False, False, True), ("s", False, False, True)],
)
def test_runtime_indices_and_extents_are_told_apart(name, index, extent, constexpr):
    probe = Probe(INDEX_KERNEL)
    read = probe.read(name)
    assert probe.analysis.is_runtime_index(read) is index
    assert probe.analysis.is_runtime_extent(read) is extent
    assert probe.analysis.is_constexpr(read) is constexpr


def test_pointer_parameters_include_those_only_passed_to_a_helpers_pointer_parameter():
    probe = Probe(
        """
        @triton.jit
        def load_row(p, i, N: tl.constexpr):
            return tl.load(p + i * N + tl.arange(0, N))

        @triton.jit
        def kernel(x, y, z, n, N: tl.constexpr):
            row = load_row(x, n, N)
            bp = tl.make_block_ptr(base=y, shape=(n,), strides=(1,), offsets=(0,), block_shape=(N,), order=(0,))
            tl.store(z + tl.arange(0, N), row + tl.load(bp, boundary_check=(0,)))
        """
    )
    assert probe.analysis.pointer_params == {"x", "y", "z"}
    assert probe.analysis.is_pointer(probe.expr("z + tl.arange(0, N)"))
    assert not probe.analysis.is_pointer(probe.read("n"))


def test_block_pointers_come_from_make_block_ptr_advance_and_jit_helpers():
    probe = Probe(
        """
        @triton.jit
        def tile(x, T, BT: tl.constexpr):
            return tl.make_block_ptr(x, (T,), (1,), (0,), (BT,), (0,))

        @triton.jit
        def kernel(x, y, T, BT: tl.constexpr):
            a = tile(x, T, BT)
            b = tl.advance(a, (BT,))
            c = x + 1
            tl.store(y, tl.load(a) + tl.load(b) + tl.load(c))
        """
    )
    analysis = probe.analysis
    assert analysis.is_block_pointer(probe.read("a", -1))
    assert analysis.is_block_pointer(probe.read("b"))
    assert not analysis.is_block_pointer(probe.read("c"))


def test_a_float_value_is_told_from_an_integer_one():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            a = tl.load(x) * 2.0
            b = n * 3
            c = n / 2
            tl.store(x, a + b + c)
        """
    )
    analysis = probe.analysis
    assert analysis.maybe_float(probe.read("a")) and analysis.maybe_float(probe.read("c"))
    assert not analysis.maybe_float(probe.read("b"))


# -- later reads, exclusive branches, loops ----------------------------------------------------------------------

LATER_READS_KERNEL = """
@triton.jit
def kernel(x, n, FLAG: tl.constexpr):
    a = tl.load(x)
    b = tl.load(x + 1)
    c = tl.load(x + 2)
    s = tl.dot(a, b)
    if FLAG:
        t = tl.dot(c, b)
    else:
        t = c * 2
    b = t + s
    for i in range(0, n):
        u = tl.dot(a, c)
    tl.store(x, a + b + u)
"""


def test_later_reads_follow_the_value_until_reassignment_and_across_iterations():
    probe = Probe(LATER_READS_KERNEL)
    analysis = probe.analysis
    first_a, first_b, first_c = probe.read("a", 0), probe.read("b", 0), probe.read("c", 0)
    loop_a = probe.read("a", 1)
    later = analysis.later_reads([first_a, first_b, first_c, loop_a])
    lines = lambda reads: sorted(probe.module.code_for_node(analysis.statement_of(r)).strip() for r in reads)
    assert lines(later[id(first_a)]) == ["tl.store(x, a + b + u)", "u = tl.dot(a, c)"]
    assert lines(later[id(first_b)]) == ["t = tl.dot(c, b)"]  # `b = t + s` reassigns before the store
    assert lines(later[id(first_c)]) == ["u = tl.dot(a, c)"]  # the else branch is exclusive
    assert loop_a in later[id(loop_a)]  # the next iteration reads it again


def test_are_exclusive_only_for_different_branches_of_one_if():
    probe = Probe(LATER_READS_KERNEL)
    analysis = probe.analysis
    in_if, in_else = probe.read("c", 0), probe.read("c", 1)
    after = probe.read("c", 2)
    assert analysis.are_exclusive(in_if, in_else)
    assert not analysis.are_exclusive(in_if, after)
    assert not analysis.are_exclusive(in_if, in_if)


def test_enclosing_loops_lists_loops_innermost_first():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, n):
            for i in range(0, n):
                while n > 0:
                    tl.store(x, i)
        """
    )
    loops = probe.analysis.enclosing_loops(probe.read("i"))
    assert [type(loop).__name__ for loop in loops] == ["While", "For"]


# -- sharing and cost --------------------------------------------------------------------------------------------


def test_the_analysis_is_built_once_per_kernel_and_shared_with_helpers():
    probe = Probe(
        """
        @triton.jit
        def kernel(x):
            tl.store(x, 1)
        """
    )
    kernel = probe.facts.kernels["kernel"]
    assert KernelAnalysis.of(kernel, probe.facts, probe.index) is probe.analysis


def test_long_sums_and_long_assignment_chains_stay_fast_and_shallow():
    terms = " + ".join(f"a{i % 5} * T" for i in range(1500))
    chain = "\n".join(f"    c{i + 1} = c{i} + c{i} * T" for i in range(300))
    code = (
        "@triton.jit\ndef kernel(x, T):\n    c0 = tl.program_id(0)\n"
        + "".join(f"    a{i} = c0 + {i}\n" for i in range(5))
        + chain
        + f"\n    tl.store(x + {terms} + c300, 0)\n"
    )
    steps_before = flow.steps_taken
    probe = Probe(code)
    store = next(n for n in probe.analysis.nodes if probe.facts.is_call_to(n, "tl.store"))
    pointer = store.args[0].value
    assert probe.analysis.is_pointer(pointer)
    assert not probe.analysis.may_be_int64(pointer)
    assert probe.analysis.is_runtime_index(probe.read("c300"))
    # one forward pass over 307 statements: each runs once (re-evaluation per query would be exponential)
    assert flow.steps_taken - steps_before <= 2 * 310


def test_a_runtime_index_keeps_its_traits_through_tl_where():
    probe = Probe(
        """
        @triton.jit
        def kernel(x, M, stride, BM: tl.constexpr):
            offs = tl.program_id(0) * BM + tl.arange(0, BM)
            clamped = tl.where(offs < M, offs, 0)
            wide = tl.where(offs < M, offs.to(tl.int64), 0)
            tl.store(x + clamped * stride + wide, 0.0)
        """
    )
    analysis = probe.analysis
    assert analysis.is_runtime_index(probe.read("clamped"))
    assert not analysis.may_be_int64(probe.read("clamped"))
    assert analysis.may_be_int64(probe.read("wide"))
    assert probe.expr("tl.program_id(0)") in analysis.offset_nodes([probe.read("clamped")])


def test_the_definitions_of_a_read_come_in_source_order_whatever_their_addresses():
    """Definitions hash by identity; a set of them iterates in memory order, which changed the headline product
    of ASC202 from run to run. The branches below give a read twelve reaching definitions."""
    branches = "\n".join(f"    {'if' if k == 0 else 'elif'} mode == {k}:\n        x = n * {k + 1}" for k in range(12))
    probe = Probe(f"@triton.jit\ndef kernel(p, n, mode):\n    x = n\n{branches}\n    tl.store(p + x, 1.0)\n")
    found = probe.analysis.definitions(probe.read("x"))
    assert len(found) == 13  # the first assignment (no branch taken) and one per branch
    rows = [probe.module.code_for_node(d.statement).strip() for d in found]
    assert rows == ["x = n", *(f"x = n * {k + 1}" for k in range(12))]


TOKEN_OFFSET_KERNEL = """
@triton.jit
def kernel(x, cu_seqlens, T, n_tasks, stride_t, H: tl.constexpr, K: tl.constexpr, BT: tl.constexpr,
           IS_VARLEN: tl.constexpr):
    for task in range(tl.program_id(0), n_tasks, tl.num_programs(0)):
        NT = tl.cdiv(T, BT)
        i_b, i_t = task // NT, task % NT
        if IS_VARLEN:
            bos = tl.load(cu_seqlens + i_b).to(tl.int32)
            T = tl.load(cu_seqlens + i_b + 1).to(tl.int32) - bos
        first = i_b * T
        chunk = i_b * tl.cdiv(T, BT) + i_t
        head_row = (first * H + i_b) * K
        strided = i_b * T * stride_t
        tl.store(x + first + chunk + head_row + strided, 0)
"""


@pytest.mark.parametrize(
    "source, wraps",
    [("i_b * T", False), ("i_b * tl.cdiv(T, BT) + i_t", False), ("(first * H + i_b) * K", True),
     ("i_b * T * stride_t", True)],
)
def test_token_offsets_and_chunk_indices_stay_below_the_tokens_of_a_launch(source, wraps):
    """A sequence index taken from a flattened task id (``task // tl.cdiv(T, BT)``) times the sequence length is
    a token offset, also where ``T`` is rebound to a varlen sequence's length; a per-token extent makes it wrap."""
    probe = Probe(TOKEN_OFFSET_KERNEL)
    assert probe.analysis.can_wrap(probe.expr(source)) is wraps
