"""A host condition on the product of the grid axes bounds the launch: ``assert NT * B * H <= 65535`` or an early
exit ``if math.prod(grid) > 65535: raise`` before ``kernel[(NT, B * H)]`` leaves ASC105 and ASC110 quiet, while a
bound above the limit, a bound on only part of the product, or a condition after the launch does not."""

from __future__ import annotations

import pytest

from tests.helpers import lint

HEAD = """
import torch_npu
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, o_ptr, T, BT: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(o_ptr + pid, tl.load(x_ptr + pid))


def launch(q, o):
    B, T, H, K = q.shape
    BT = 64
    NT = triton.cdiv(T, BT)
"""

BOUNDED = {
    "assert on the product": "    assert NT * B * H <= 65535\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "factors in another order": "    assert B * H * NT < 65536\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "early exit": "    if NT * B * H > 65535:\n        raise ValueError('grid too large')\n"
                  "    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "named total": "    total = NT * B * H\n    assert total <= 65535, total\n"
                   "    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "entries of a grid tuple": "    grid = (NT, B * H)\n    assert grid[0] * grid[1] <= 65535\n"
                               "    kernel[grid](q, o, T, BT=BT)\n",
    "math.prod of the grid": "    import math\n    grid = (NT, B * H)\n    if math.prod(grid) > 65535:\n"
                             "        raise RuntimeError('split the launch')\n    kernel[grid](q, o, T, BT=BT)\n",
    "inside the branch that fits": "    if NT * B * H <= 65535:\n        kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "reversed comparison": "    assert 65535 >= NT * B * H\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "at most the core count": "    props = triton.runtime.driver.active.utils.get_device_properties(0)\n"
                              "    cores = props['num_vectorcore']\n"
                              "    if NT * B * H <= cores:\n        kernel[(NT, B * H)](q, o, T, BT=BT)\n",
}

UNBOUNDED = {
    "no condition": "    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "a bound above the limit": "    assert NT * B * H <= 1 << 20\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "part of the product": "    assert B * H <= 65535\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "a lower bound": "    assert NT * B * H >= 1\n    kernel[(NT, B * H)](q, o, T, BT=BT)\n",
    "checked after the launch": "    kernel[(NT, B * H)](q, o, T, BT=BT)\n    assert NT * B * H <= 65535\n",
    "the other branch": "    if NT * B * H <= 65535:\n        pass\n    else:\n"
                        "        kernel[(NT, B * H)](q, o, T, BT=BT)\n",
}


def _grid_codes(body: str) -> list[str]:
    return [d.code for d in lint(HEAD + body, "ASC105", "ASC110", filename="ops/launch.py")]


@pytest.mark.parametrize("body", BOUNDED.values(), ids=BOUNDED.keys())
def test_a_bounded_product_leaves_the_launch_quiet(body):
    assert _grid_codes(body) == []


@pytest.mark.parametrize("body", UNBOUNDED.values(), ids=UNBOUNDED.keys())
def test_an_unbounded_product_is_still_reported(body):
    assert _grid_codes(body) == ["ASC105"]
