"""ASC303 reads the literal sizes a test module or a script launches a kernel with: when every launch of the kernel
(and every ``warmup`` compile of it) passes an extent that the block divides, spelled with literals through names,
module-level shape tuples or parametrize cases, the block never overshoots there. The same kernel launched by a
production function, at a size the block does not divide, or handed on elsewhere is still reported."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEADER = "import pytest\nimport torch\nimport triton\nimport triton.language as tl\n"

# rows are tiled without a boundary check; columns are checked
KERNEL = HEADER + """

@triton.jit
def copy_rows(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    r0 = tl.program_id(0) * BR
    c0 = tl.program_id(1) * BC
    p_x = tl.make_block_ptr(x_ptr, (R, C), (C, 1), (r0, c0), (BR, BC), (1, 0))
    p_y = tl.make_block_ptr(y_ptr, (R, C), (C, 1), (r0, c0), (BR, BC), (1, 0))
    tl.store(p_y, tl.load(p_x, boundary_check=(1,)), boundary_check=(1,))
"""

EXACT = {
    "a module shape tuple unpacked in the test": """
SHAPE_2D = (32, 50, 8, 8)


def test_copy():
    rows, cols, block_r, block_c = SHAPE_2D
    x = torch.randn(rows, cols, device="npu")
    y = torch.empty_like(x)
    copy_rows[(triton.cdiv(rows, block_r), triton.cdiv(cols, block_c))](x, y, rows, cols, BR=block_r, BC=block_c)
""",
    "parametrize cases, through a helper the tests call": """
def run(rows, cols, block_r):
    x = torch.randn(rows, cols, device="npu")
    copy_rows[(rows // block_r, 1)](x, torch.empty_like(x), rows, cols, BR=block_r, BC=64)


@pytest.mark.parametrize("rows, block_r", [(64, 16), (128, 32)])
def test_copy(rows, block_r):
    run(rows, 50, block_r)
""",
    "literal keywords at the launch and at a warmup compile": """
def test_copy():
    t, block = 64, 16
    x = torch.randn(t, 8, device="npu")
    copy_rows.warmup(x, x, R=t, C=8, BR=block, BC=8, grid=(t // block, 1))
    copy_rows[(t // block, 1)](x, torch.empty_like(x), R=t, C=8, BR=block, BC=8)
""",
    # the extent is a multiple of the block case by case (24 of 8, 32 of 16), not across cases (24 of 16)
    "parametrize cases read one case at a time": """
@pytest.mark.parametrize("block_r, stride", [(8, 3), (16, 2)])
def test_copy(block_r, stride):
    rows = block_r * stride
    x = torch.randn(rows, 8, device="npu")
    copy_rows[(stride, 1)](x, torch.empty_like(x), rows, 8, BR=block_r, BC=8)
""",
}

REPORTED = {
    "a production launcher": """
def copy(x, y, block_r):
    R, C = x.shape
    copy_rows[(triton.cdiv(R, block_r), 1)](x, y, R, C, BR=block_r, BC=C)
""",
    "a literal size the block does not divide": """
@pytest.mark.parametrize("rows, block_r", [(64, 16), (100, 16)])
def test_copy(rows, block_r):
    x = torch.randn(rows, 8, device="npu")
    copy_rows[(triton.cdiv(rows, block_r), 1)](x, torch.empty_like(x), rows, 8, BR=block_r, BC=8)
""",
    "a kernel handed on as well": """
def test_copy(benchmark):
    x = torch.randn(64, 8, device="npu")
    copy_rows[(4, 1)](x, torch.empty_like(x), 64, 8, BR=16, BC=8)
    benchmark(copy_rows, x)
""",
    "a size updated in place": """
def test_copy():
    rows = 16
    for _ in range(3):
        rows *= 3
    x = torch.randn(rows, 8, device="npu")
    copy_rows[(triton.cdiv(rows, 16), 1)](x, torch.empty_like(x), rows, 8, BR=16, BC=8)
""",
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_literal_launch_sizes_the_block_divides_are_quiet(name):
    assert [d.code for d in lint(KERNEL + EXACT[name], "ASC303", filename="test_copy.py")] == []


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_sizes_not_fixed_or_not_divided_stay_reported(name):
    assert [d.code for d in lint(KERNEL + REPORTED[name], "ASC303", filename="test_copy.py")] == ["ASC303"] * 2
