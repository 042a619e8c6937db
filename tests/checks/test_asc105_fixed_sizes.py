"""ASC105 and its sweep ASC110 read the sizes a test module or a script runs its launches at: a grid that grows with
the data stays quiet where the module is closed (its launches reached only from its own tests or ``__main__``
block) and every tensor it allocates is spelled with literals small enough that the grid stays at or under 65535
programs. The same launcher in a production module, or sized by a value nobody fixes, is still reported."""

from __future__ import annotations

import json

import pytest

from ascendlint.linter import engine
from ascendlint.analysis.project import ModuleInProject, ProjectFacts
from tests.helpers import lint, rules_named

PLAIN = "import torch\nimport triton\nimport triton.language as tl\n\n"
HEADER = "import pytest\n" + PLAIN

# one program per row of a 3-D activation times head tiles: ASC105 in a production module
ROPE = """
BLOCK_H = 16


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, n, h, BLOCK_H: tl.constexpr):
    pass


def rope(x, cos, sin):
    n = x.shape[0]
    h = x.shape[1]
    rope_kernel[(n, triton.cdiv(h, BLOCK_H))](x, cos, sin, n, h, BLOCK_H=BLOCK_H)
"""

# M-tiles x N-tiles of a matrix the host does not tie to tokens: ASC110 in a production module
TILES = """
@triton.jit
def add_tiles(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pass


def add(mat):
    M, N = mat.shape
    add_tiles[(triton.cdiv(M, 32), triton.cdiv(N, 32))](mat, M, N, BM=32, BN=32)
"""

# the rows of a flattened tensor, one program each: ASC105 in a production module
ROWS = """
@triton.jit
def row_norm(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    pass


def norm(x):
    M, N = x.reshape(-1, x.shape[-1]).shape
    y = torch.empty_like(x)
    row_norm[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    return y
"""

# tiles of a matrix, the tile sizes handed in: ASC105 in a production module
COPY = """
@triton.jit
def copy_tiles(x_ptr, y_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    pass


def copy(x, y, block_r, block_c):
    R, C = x.shape
    copy_tiles[(triton.cdiv(R, block_r), triton.cdiv(C, block_c))](x, y, R, C, BR=block_r, BC=block_c)
"""

# token chunks of a chunk size handed in, times batch x heads: ASC105 in a production module
CHUNKS = """
@triton.jit
def chunk_cumsum(x_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    pass


def cumsum(x, B, T, H, chunk_size):
    NT = (T + chunk_size - 1) // chunk_size
    chunk_cumsum[(NT, B * H)](x, T, H=H, BT=chunk_size)
"""

CLOSED = {
    # form 1: the launcher is called from a function the tests call with literal sizes
    "a function called by the tests with literals": (HEADER + ROPE + """

def run_case(tokens, heads, dim, dtype):
    x = torch.randn((tokens, heads, dim), device="npu", dtype=dtype)
    cos = torch.randn((tokens, dim), device="npu", dtype=dtype)
    sin = torch.randn((tokens, dim), device="npu", dtype=dtype)
    rope(x, cos, sin)


def test_fp16():
    run_case(256, 96, 128, torch.float16)


def test_bf16():
    run_case(128, 32, 64, torch.bfloat16)
""", "ASC105", "snippet.py"),
    # form 1 with parametrize and the sweep's GEMM tiles
    "parametrized sizes of a test": (HEADER + TILES + """

@pytest.mark.parametrize("M, N", [(128, 256), (512, 512)])
def test_add(M, N):
    mat = torch.randn(M, N, device="npu")
    add(mat)
""", "ASC110", "snippet.py"),
    # form 2: a script looping over a literal list of shapes, tensors made by a function taking the shape
    "a script looping over literal shapes": (PLAIN + ROWS + """

def make(shape):
    return torch.randn(shape, dtype=torch.float32)


if __name__ == "__main__":
    shapes = [(128, 128), (256, 256), (512, 512)]
    for shape in shapes:
        x = make(shape).npu()
        norm(x)
""", "ASC105", "snippet.py"),
    # a plain test function in a test file that imports no pytest
    "a plain test function of a test file": (PLAIN + ROWS + """

def test_norm():
    for rows in [64, 4096]:
        norm(torch.randn((rows, 1024)).npu())
""", "ASC105", "test_norm.py"),
    # module-level shape constants unpacked in a test; the input made by a helper from the shape
    "a module shape constant unpacked in a test": (HEADER + COPY + """

SHAPE_2D = (32, 50, 8, 8)


def make_input(shape):
    numel = 1
    for dim in shape:
        numel *= dim
    return torch.arange(numel, dtype=torch.float32).reshape(shape)


def test_copy():
    rows, cols, block_r, block_c = SHAPE_2D
    x = make_input((rows, cols))
    copy(x, torch.empty_like(x), block_r, block_c)
""", "ASC105", "snippet.py"),
    # a module-level dict of shapes, its values looped over and one entry read by key
    "a module dict of shapes": (HEADER + COPY + """

SHAPES = {"square": (64, 64), "wide": (16, 4096)}


def test_copy():
    for name, shape in SHAPES.items():
        x = torch.randn(shape)
        copy(x, torch.empty_like(x), 16, 64)
    x = torch.randn(SHAPES["wide"])
    copy(x, torch.empty_like(x), 16, 64)
""", "ASC105", "snippet.py"),
    # the tile size is a parametrize value too: the chunk count is at most the longest sequence over the
    # smallest chunk
    "a parametrized tile size dividing the grid": (HEADER + CHUNKS + """

@pytest.mark.parametrize("B, T, H, chunk_size", [(4, 2048, 8, 128), (2, 512, 4, 64)])
def test_cumsum(B, T, H, chunk_size):
    cumsum(torch.randn(B, T, H, device="npu"), B, T, H, chunk_size)
""", "ASC105", "snippet.py"),
}


def _codes(source: str, filename: str = "snippet.py", project: ModuleInProject | None = None) -> list[str]:
    rules = rules_named("ASC105", "ASC110")
    found = engine.lint_text(source, filename, rules, None, project) if project else lint(
        source, "ASC105", "ASC110", filename=filename)
    return [d.code for d in found if d.code in ("ASC105", "ASC110")]


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_a_closed_module_at_small_literal_sizes_is_quiet(name):
    source, _, filename = CLOSED[name]
    assert _codes(source, filename) == []


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_the_same_launcher_without_its_callers_is_reported(name):
    source, code, _ = CLOSED[name]
    launcher = next(launcher for launcher in (ROPE, ROWS, TILES, COPY, CHUNKS) if launcher in source)
    assert _codes(PLAIN + launcher) == [code]


def test_a_module_another_linted_module_imports_is_reported():
    source, code, filename = CLOSED["a script looping over literal shapes"]
    project = ModuleInProject("bench_rows", False, ProjectFacts(), export=True)
    assert _codes(source, filename, project) == [code]
    quiet = ModuleInProject("bench_rows", False, ProjectFacts(), export=False)
    assert _codes(source, filename, quiet) == []


REPORTED = {
    # `n` comes from a test argument nobody fixes (a fixture of another file)
    "a size from an argument nobody fixes": HEADER + ROWS + """

def check(n, d):
    x = torch.randn((n, d), device="npu")
    norm(x)


def test_rows(n):
    check(n, 128)
""",
    # a million rows with one program per row: past the limit at the module's own sizes
    "a million rows, one program each": HEADER + ROWS + """

@pytest.mark.parametrize("rows", [1 << 20])
def test_rows(rows):
    norm(torch.randn((rows, 64), device="npu"))
""",
    # a production module (no test name, no pytest, no main block) with a demo of its own
    "a production module with a literal demo": PLAIN + ROWS + """

def demo():
    norm(torch.randn((128, 64), device="npu"))
""",
    # a test whose launcher is handed to a benchmark function: called from elsewhere too
    "a launcher passed as a value": HEADER + ROWS + """

def bench(fn, x):
    return fn(x)


def test_rows():
    bench(norm, torch.randn((128, 64), device="npu"))
""",
    # a shape read from a file: not spelled out
    "a tensor loaded from disk": HEADER + ROWS + """

def test_rows():
    norm(torch.randn((128, 64), device="npu"))
    norm(torch.load("rows.pt"))
""",
}


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_sizes_the_module_does_not_spell_stay_reported(name):
    assert _codes(REPORTED[name]) == ["ASC105"]


def test_a_test_module_linted_through_the_command_is_quiet(cli, write, tmp_path):
    source, _, _ = CLOSED["a function called by the tests with literals"]
    write("test_rope.py", source)
    result = cli("check", "test_rope.py", "--no-cache", "--select", "ASC105,ASC110", "--format", "json",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []
