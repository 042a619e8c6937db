"""ASC303 across modules: a block pointer returned by a jit helper of another linted module is checked where it
is loaded or stored, as it is when the helper sits in the same module (the README's cross-module promise)."""

from __future__ import annotations

import json

HELPER = """
import triton
import triton.language as tl


@triton.jit
def tile_ptr(x_ptr, T, D, i_t, BT: tl.constexpr, BD: tl.constexpr):
    return tl.make_block_ptr(x_ptr, (T, D), (D, 1), (i_t * BT, 0), (BT, BD), (1, 0))
"""

KERNEL = """
import triton
import triton.language as tl

from .ptrs import tile_ptr


@triton.jit
def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    i_t = tl.program_id(0)
    p_x = tile_ptr(x_ptr, T, D, i_t, BT, BD)
    tl.store(y_ptr + tl.arange(0, BT), tl.sum(tl.load(p_x), axis=1))
    tl.store(tile_ptr(y_ptr, T, D, i_t, BT, BD), tl.load(p_x, boundary_check=(0, 1)))
"""


def _findings(cli, root, *paths, extra=()):
    result = cli("check", *paths, "--select", "ASC303", "--format", "json", "--no-cache", *extra, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["filename"].replace("\\\\", "/"), d["location"]["row"], d["location"]["column"], d["message"])
                  for d in json.loads(result.stdout))


def _tree(write, helper=HELPER):
    write("pkg/__init__.py", "")
    write("pkg/ptrs.py", helper)
    write("pkg/kern.py", KERNEL)


def test_a_block_pointer_from_another_module_is_checked_like_one_from_this_module(cli, write, tmp_path):
    _tree(write)
    across = [row[1:] for row in _findings(cli, tmp_path, "pkg")]
    one = KERNEL.replace("from .ptrs import tile_ptr\n", HELPER.split("\n", 3)[3])
    write("one.py", one)
    alone = _findings(cli, tmp_path, "one.py")
    shift = one.splitlines().index("def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):") - \
        KERNEL.splitlines().index("def copy_tile(x_ptr, y_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):")
    assert [(row - shift, column, message) for _, row, column, message in alone] == across
    assert len(across) == 2  # the unchecked load, and the store of the helper's second block


def test_the_fix_adds_the_helper_blocks_rank(cli, write, tmp_path):
    _tree(write)
    result = cli("check", "pkg", "--select", "ASC303", "--fix", "--unsafe-fixes", "--no-cache", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = (tmp_path / "pkg" / "kern.py").read_text(encoding="utf-8")
    assert "tl.load(p_x, boundary_check=(0, 1))" in fixed


def test_a_helper_block_that_fits_its_tensor_is_quiet_across_modules_too(cli, write, tmp_path):
    _tree(write, HELPER.replace("(T, D), (D, 1), (i_t * BT, 0), (BT, BD)", "(W, D), (D, 1), (0, 0), (W, D)"))
    assert _findings(cli, tmp_path, "pkg") == []


def test_a_model_dimension_is_reported_only_with_the_option(cli, write, tmp_path):
    _tree(write, HELPER.replace("(T, D), (D, 1), (i_t * BT, 0), (BT, BD)", "(T, K), (K, 1), (0, 0), (T, BD)"))
    assert _findings(cli, tmp_path, "pkg") == []
    (tmp_path / "ascendlint.toml").write_text("[block-ptr-no-boundary-check]\ncheck-model-dimensions = true\n")
    assert len(_findings(cli, tmp_path, "pkg")) == 2
