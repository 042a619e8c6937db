"""Launch-grid analysis: factors are classified through host code, core-count grids are recognised."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.grid import grid_core_source, launch_grid
from ascendlint.analysis.grid_factors import Kind
from ascendlint.analysis.launch_arguments import literal_arguments
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex

HEADER = """
import math
import torch
import triton
import triton.language as tl
from triton.runtime import driver

@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass

"""


def facts_and_last_launch(body: str):
    module = cst.parse_module(textwrap.dedent(HEADER) + textwrap.dedent(body))
    facts = ModuleFacts(module, NodeIndex(module))
    assert facts.launches, "the snippet must launch the kernel"
    return facts, facts.launches[-1]


def kinds(body: str) -> list[list[str]]:
    facts, launch = facts_and_last_launch(body)
    grid = launch_grid(facts, launch)
    return [[factor.kind.value for factor in axis] for axis in grid.axes]


@pytest.mark.parametrize(
    "body, expected",
    [
        pytest.param(
            """
            def run(x):
                cores = driver.active.utils.get_device_properties(0)["num_aicore"]
                kernel[(cores,)](x, x.numel(), BLOCK=1024)
            """,
            "cube",
            id="device-property-through-assignment",
        ),
        pytest.param(
            """
            def run(x):
                props = driver.active.utils.get_device_properties(0)
                kernel[(props["num_vectorcore"],)](x, 1, BLOCK=1024)
            """,
            "vector",
            id="vector-property",
        ),
        pytest.param(
            """
            def run(x, utils):
                kernel[(utils.get_aivector_core_num(), 1)](x, 1, BLOCK=64)
            """,
            "vector",
            id="vector-function-times-literal-one",
        ),
        pytest.param(
            """
            def run(x, utils, n_tasks):
                grid = lambda meta: (min(n_tasks, utils.get_aicore_num()),)
                kernel[grid](x, n_tasks, BLOCK=64)
            """,
            "cube",
            id="min-of-tasks-and-cores-in-lambda",
        ),
        pytest.param(
            """
            def run(x, utils):
                n = utils.get_device_core_num()
                kernel[(n,)](x, 1, BLOCK=64)
            """,
            "cores",
            id="generic-core-count",
        ),
        pytest.param(
            """
            def run(x, props):
                kernel[(props.num_aicore,)](x, 1, BLOCK=64)
            """,
            "cube",
            id="property-attribute",
        ),
        pytest.param(
            """
            from project.cores import cube_core_count

            def run(x, n_cores=None):
                n_cores = n_cores or cube_core_count(x.device)
                kernel[(n_cores,)](x, 1, BLOCK=64)
            """,
            "cube",
            id="override-or-core-count-helper",
        ),
        pytest.param(
            """
            def run(x, utils):
                kernel[(int(utils.vector_core_count()),)](x, 1, BLOCK=64)
            """,
            "vector",
            id="core-count-helper-under-int",
        ),
        pytest.param(
            """
            def run(x):
                kernel[(20,)](x, 1, BLOCK=64)
            """,
            None,
            id="literal-grid-is-not-a-core-grid",
        ),
        pytest.param(
            """
            def run(x):
                kernel[(triton.cdiv(x.numel(), 1024),)](x, 1, BLOCK=1024)
            """,
            None,
            id="data-sized-grid-is-not-a-core-grid",
        ),
        pytest.param(
            """
            def run(x, props, B):
                kernel[(props["num_aicore"], B)](x, 1, BLOCK=64)
            """,
            None,
            id="core-count-times-batch-exceeds-the-cores",
        ),
        pytest.param(
            """
            def run(x, grid):
                kernel[grid](x, 1, BLOCK=64)
            """,
            None,
            id="grid-from-a-parameter-is-unknown",
        ),
    ],
)
def test_grid_core_source(body, expected):
    facts, launch = facts_and_last_launch(body)
    assert grid_core_source(facts, launch) == expected


@pytest.mark.parametrize(
    "body, expected",
    [
        pytest.param(
            """
            def run(x, M, N):
                kernel[lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))](x, M, BLOCK=64)
            """,
            [["tile count"], ["tile count"]],
            id="cdiv-axes-are-tile-counts",
        ),
        pytest.param(
            """
            def run(x, n):
                kernel[((n + 127) // 128,)](x, n, BLOCK=128)
            """,
            [["tile count"]],
            id="round-up-division-is-a-tile-count",
        ),
        pytest.param(
            """
            def run(x, T, B, H):
                NT = triton.cdiv(T, 64)
                kernel[(NT, B * H)](x, T, BLOCK=64)
            """,
            [["tile count"], ["extent", "extent"]],
            id="named-tile-count-and-product-of-extents",
        ),
        pytest.param(
            """
            def run(x, y):
                n = y.numel()
                grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
                kernel[grid](x, n, BLOCK=1024)
            """,
            [["total size"]],
            id="numel-through-assignments",
        ),
        pytest.param(
            """
            def run(x, B, T, D):
                kernel[(triton.cdiv(B * T * D, 1024),)](x, B, BLOCK=1024)
            """,
            [["total size"]],
            id="three-extents-divided-is-a-total-size",
        ),
        pytest.param(
            """
            def run(x):
                kernel[(x.shape[0], x.size(1))](x, 1, BLOCK=64)
            """,
            [["extent"], ["extent"]],
            id="shapes-are-extents",
        ),
        pytest.param(
            """
            def run(x):
                batch, heads, _ = x.shape
                kernel[(batch, heads)](x, 1, BLOCK=64)
            """,
            [["extent"], ["extent"]],
            id="unpacked-shape-items-are-extents",
        ),
        pytest.param(
            """
            def run(x):
                def grid(meta):
                    return (triton.cdiv(4096, meta["BLOCK"]), 8)
                kernel[grid](x, 1, BLOCK=64)
            """,
            [["literal"], ["literal"]],
            id="local-grid-function-reads-the-launch-argument",
        ),
        pytest.param(
            """
            def run(x):
                def grid(meta):
                    return (triton.cdiv(4096, meta["BLOCK"]), 8)
                kernel[grid](x, 1)
            """,
            [["compile-time constant"], ["literal"]],
            id="meta-value-chosen-by-autotuning-is-a-constant",
        ),
        pytest.param(
            """
            def run(x, M):
                kernel[lambda meta: (meta["n"] * 4,)](x, x.numel(), BLOCK=64)
            """,
            [["total size", "literal"]],
            id="meta-reads-a-runtime-argument",
        ),
        pytest.param(
            """
            def run(x):
                b, s, _ = x.shape
                kernel[(triton.cdiv(b * s, 64),)](x, 1, BLOCK=64)
            """,
            [["tile count"]],  # tiles of the flattened rows: tokens, counted by the token model (case (e))
            id="leading-dimensions-with-a-token-count-are-the-flattened-rows",
        ),
        pytest.param(
            """
            def run(q):
                B, H, D = q.shape
                kernel[(B * H,)](q, 1, BLOCK=64)
            """,
            [["extent", "extent"]],
            id="batch-times-heads-stays-two-extents",
        ),
        pytest.param(
            """
            def run(x, D):
                T = x.view(-1, D).shape[0]
                rows = x.reshape(-1, D).contiguous()
                kernel[(T, rows.shape[0])](x, 1, BLOCK=64)
            """,
            [["total size"], ["total size"]],
            id="rows-of-a-flattened-view",
        ),
        pytest.param(
            """
            def run(x, n):
                cores = driver.active.utils.get_device_properties(0)["num_vectorcore"]
                block = math.ceil(n / cores)
                kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, n, BLOCK=block)
            """,
            [["vector"]],
            id="tiles-of-a-per-core-share-count-the-cores",
        ),
        pytest.param(
            """
            def run(x, n_cols):
                _, num_vectorcore = get_device_properties()
                kernel[((num_vectorcore + n_cols - 1) // n_cols, n_cols)](x, 1, BLOCK=64)
            """,
            [["vector"], ["extent"]],
            id="host-name-of-a-core-count",
        ),
        pytest.param(
            """
            def run(x, offsets, heads):
                batch = offsets.numel() - 1
                H = x.numel()
                kernel[(batch * heads, H)](x, 1, BLOCK=64)
            """,
            [["extent", "extent"], ["extent"]],
            id="segments-of-an-offsets-array-and-a-head-count-are-extents",
        ),
        pytest.param(
            """
            def run(x, N, group_size, cache_steps):
                kernel[(N // group_size, x.shape[1] // cache_steps, N // 64)](x, 1, BLOCK=64)
            """,
            [["extent"], ["extent"], ["tile count"]],
            id="a-ratio-of-sizes-is-an-extent-not-a-tile-count",
        ),
        pytest.param(
            """
            def run(x, T, B, H, BT):
                NT = triton.cdiv(T, BT) if B > 1 else len(x)
                kernel[(NT, B * H)](x, T, BLOCK=64)
            """,
            [["tile count"], ["extent", "extent"]],
            id="conditional-expression-takes-the-faster-growing-branch",
        ),
    ],
)
def test_factor_kinds(body, expected):
    assert kinds(body) == expected


def test_min_caps_a_growing_axis():
    facts, launch = facts_and_last_launch(
        """
        def run(x, n):
            kernel[(min(triton.cdiv(n, 1024), 4096),)](x, n, BLOCK=1024)
        """
    )
    (factor,) = launch_grid(facts, launch).factors
    assert factor.capped and not factor.grows


def test_host_loop_over_chunks_marks_the_chunk_dependent_axis():
    facts, launch = facts_and_last_launch(
        """
        def run(x, n, B):
            for start in range(0, n, 1 << 26):
                rest = min(n - start, 1 << 26)
                kernel[(triton.cdiv(rest, 1024), B)](x, rest, BLOCK=1024)
        """
    )
    chunk_axis, batch_axis = launch_grid(facts, launch).axes
    assert chunk_axis[0].chunked and not chunk_axis[0].grows
    assert batch_axis[0].grows


def test_static_size_multiplies_literals_through_module_constants():
    facts, launch = facts_and_last_launch(
        """
        ROWS = 300

        def run(x):
            kernel[(ROWS, 300)](x, 1, BLOCK=64)
        """
    )
    assert launch_grid(facts, launch).static_size == 90000


def test_unresolvable_grid_has_no_axes():
    facts, launch = facts_and_last_launch(
        """
        def run(x, make_grid):
            kernel[make_grid()](x, 1, BLOCK=64)
        """
    )
    grid = launch_grid(facts, launch)
    assert [f.kind for f in grid.factors] == [Kind.UNKNOWN]


def test_literal_arguments_map_positions_and_keywords_through_host_names():
    facts, launch = facts_and_last_launch(
        """
        def run(x):
            width = 32
            kernel[(1,)](x, 7, BLOCK=width)
        """
    )
    assert literal_arguments(facts, launch) == {"n": 7, "BLOCK": 32}
