"""The compile requests of a module are read from the linted tree without libcst's own walks.

libcst's visitor and its ``children`` property rebuild every node they pass, and its position metadata prints the
module through that machinery: on the corpus those walks cost more than parsing. Counted in calls, never timed.
"""

import libcst as cst
from libcst.metadata import MetadataWrapper

from ascendlint.analysis import ub
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex, child_nodes
from ascendlint.compiler import configs
from tests.scaling import count_calls, kernel_module

AUTOTUNED = """
import triton
import triton.language as tl

SCALE = 2


@triton.jit
def twice(v):
    return v * SCALE


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 4096})], key=["n"])
@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, twice(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


def run(x, out):
    scale[(4,)](x, out, x.numel())
"""


def _facts(text: str) -> ModuleFacts:
    module = cst.parse_module(text)
    return ModuleFacts(module, NodeIndex(module))


def test_requests_and_estimates_use_no_libcst_walk():
    facts = _facts(kernel_module(400))
    with count_calls(cst.CSTNode, "visit") as visits, count_calls(MetadataWrapper, "resolve") as resolves:
        found = configs.requests(facts, "Ascend910B1", "fp16")
        ub.estimates(facts)
    assert found, "the generated module holds kernels with stated configs"
    assert (visits.calls, resolves.calls) == (0, 0)


def test_labels_and_rebuilt_text_are_what_the_slow_walks_gave():
    facts = _facts(AUTOTUNED)
    found = configs.requests(facts, "Ascend910B1", "fp16")
    assert [r.label for r in found] == ["config 1 line 13", "config 2 line 13"]
    text = found[0].job.source
    assert "SCALE = 2" in text and "def twice(v):" in text and "autotune" not in text


_COUNTED = (cst.BaseExpression, cst.BaseStatement, cst.BaseSmallStatement, cst.Arg, cst.Param, cst.Decorator)


def _reached(node, children) -> list[str]:
    """Expressions, statements, arguments and parameters under ``node`` (names spelled out)."""
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, _COUNTED):
            found.append(type(current).__name__ + (f":{current.value}" if type(current) is cst.Name else ""))
        stack.extend(children(current))
    return sorted(found)


def test_child_nodes_reach_every_expression_and_statement_the_children_property_reaches():
    module = cst.parse_module(AUTOTUNED)
    assert _reached(module, child_nodes) == _reached(module, lambda node: node.children)
