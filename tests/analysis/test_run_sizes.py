"""The run sizes of a closed module: the largest dimension, rows and elements of the tensors a test module or a
script allocates, each dimension followed to literals; None when the module is open or a size is not spelled."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.grid import launch_grid
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.run_sizes import launch_bound, run_sizes
from ascendlint.analysis.walk import NodeIndex

LAUNCHER = """
import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, N, BLOCK: tl.constexpr):
    pass


def rows(x):
    M, N = x.reshape(-1, x.shape[-1]).shape
    rows_kernel[(M,)](x, N, BLOCK=1024)
"""


def _facts(source: str, filename: str = "snippet.py", imported: bool | None = None) -> ModuleFacts:
    module = cst.parse_module(textwrap.dedent(LAUNCHER) + textwrap.dedent(source))
    facts = ModuleFacts(module, NodeIndex(module))
    facts.filename = filename
    facts.imported_in_project = imported
    return facts


def _bound(facts: ModuleFacts) -> int | None:
    launch = facts.launches[0]
    return launch_bound(facts, launch, launch_grid(facts, launch).expr)


def test_a_function_called_with_literals_sizes_the_module():
    facts = _facts("""
        def case(tokens, heads, dim):
            rows(torch.randn((tokens, heads, dim)))

        def test_case():
            case(256, 96, 128)
            case(64, 8, 512)
        """)
    sizes = run_sizes(facts)
    # each parameter at its largest over the calls; the launcher's reshape is a tensor of 256 * 96 rows too
    assert (sizes.dim, sizes.rows, sizes.elements) == (256 * 96, 256 * 96, 256 * 96 * 512)
    assert _bound(facts) == 256 * 96  # the rows of the reshape: the product of the leading dimensions


@pytest.mark.parametrize("cases", ['[(128, 64), (32, 2048)]', 'CASES', '[pytest.param(*c) for c in CASES]'])
def test_parametrize_cases_written_or_named(cases):
    facts = _facts(f"""
        CASES = [(128, 64), (32, 2048)]

        @pytest.mark.parametrize("M, N", {cases})
        def test_rows(M, N):
            rows(torch.empty(M, N))
        """)
    assert run_sizes(facts).dim == 2048
    assert _bound(facts) == 128


def test_a_script_loop_over_literal_shapes():
    facts = _facts("""
        if __name__ == "__main__":
            shapes = [(128, 128), (256, 512)]
            for shape in shapes:
                rows(torch.randn(*shape).npu())
        """)
    assert (run_sizes(facts).dim, run_sizes(facts).rows) == (512, 256)


def test_a_shape_handed_to_a_maker_of_another_module():
    facts = _facts("""
        import common

        if __name__ == "__main__":
            for shape in [(64, 128), (512, 512)]:
                rows(torch.from_numpy(common.make_array(shape, "float16")).npu())
        """)
    assert run_sizes(facts).rows == 512


@pytest.mark.parametrize("source", [
    # a loaded tensor spells no size
    """
    def test_rows():
        rows(torch.load("x.pt"))
        rows(torch.randn(8, 8))
    """,
    # a fixture of another file
    """
    def test_rows(x):
        rows(x)
        rows(torch.randn(8, 8))
    """,
    # a loop over sizes read from somewhere else
    """
    import sizes

    def test_rows():
        for n in sizes.ROWS:
            rows(torch.randn(n, 8))
    """,
])
def test_a_size_not_spelled_out_leaves_nothing_known(source):
    assert run_sizes(_facts(source)) is None


def test_a_local_fixture_is_read_like_the_tests():
    facts = _facts("""
        @pytest.fixture
        def x():
            return torch.randn(64, 256)

        def test_rows(x):
            rows(x)
        """)
    assert run_sizes(facts).dim == 256


def test_a_function_passed_as_a_value_takes_no_sizes_from_its_calls():
    facts = _facts("""
        def check(n):
            rows(torch.randn(n, 8))

        def test_rows(benchmark):
            check(8)
            benchmark(check, 1 << 20)
        """)
    assert run_sizes(facts) is None


def test_an_open_module_has_no_run_sizes():
    demo = """
        def demo():
            rows(torch.randn(8, 8))
        """
    assert run_sizes(_facts(demo.replace("def demo", "def test_demo"), "kernels.py")) is not None
    plain = textwrap.dedent(demo)
    module = cst.parse_module(textwrap.dedent(LAUNCHER).replace("import pytest\n", "") + plain)
    facts = ModuleFacts(module, NodeIndex(module))
    facts.filename = "kernels.py"
    assert run_sizes(facts) is None  # no test name, no pytest, no main block
    assert run_sizes(_facts(demo.replace("def demo", "def test_demo"), "test_k.py", imported=True)) is None


def test_a_long_chain_of_names_is_read_once_per_site():
    chain = "\n".join(f"    n{i + 1} = n{i} + n{i}" for i in range(40))
    facts = _facts(f"""
def test_chain():
    n0 = 1
{chain}
    rows(torch.randn(n40, 8))
    rows(torch.randn(4, 8))
""")
    assert run_sizes(facts) is None  # deeper than the names are followed: not known, and quickly so


def test_a_size_updated_in_place_is_not_its_first_value():
    facts = _facts("""
        def test_rows():
            n = 1
            for d in (64, 4096):
                n *= d
            rows(torch.arange(n))
            rows(torch.randn(8, 8))
        """)
    assert run_sizes(facts) is None  # `n` is more than the 1 it starts at, and the loop's product is not read


def test_a_size_raised_from_its_own_earlier_value():
    facts = _facts("""
        def test_rows():
            n = 32
            n = max(n, 4096)
            rows(torch.randn(n, 8))
        """)
    assert run_sizes(facts).dim == 4096


def test_a_loop_over_the_dimensions_of_a_literal_shape():
    facts = _facts("""
        def make(shape):
            return [torch.zeros(d) for d in shape]

        def test_rows():
            for x in make((16, 512)):
                rows(x)
        """)
    assert run_sizes(facts).dim == 512


def test_a_parametrized_tile_size_divides_at_its_smallest():
    facts = _facts("""
        @triton.jit
        def chunks(x_ptr, T, BT: tl.constexpr):
            pass

        @pytest.mark.parametrize("T, chunk", [(4096, 128), (512, 16)])
        def test_chunks(T, chunk):
            x = torch.randn(T)
            rows(x)
            chunks[(triton.cdiv(T, chunk), (T + chunk - 1) // chunk)](x, T, BT=chunk)
        """)
    launch = facts.launches[-1]
    # the largest numerator over the smallest divisor on each axis: 4096 / 16 and (4096 + 128) / 16
    assert launch_bound(facts, launch, launch_grid(facts, launch).expr) == 256 * 264


def test_a_tile_size_halved_in_place_divides_at_one():
    facts = _facts("""
        @triton.jit
        def chunks(x_ptr, T, BT: tl.constexpr):
            pass

        def test_chunks():
            x = torch.randn(65536)
            rows(x)
            chunk = 64
            while chunk > 1:
                chunk //= 2
            chunks[(triton.cdiv(65536, chunk),)](x, 65536, BT=chunk)
        """)
    launch = facts.launches[-1]
    assert launch_bound(facts, launch, launch_grid(facts, launch).expr) == 65536  # not 65536 // 64
