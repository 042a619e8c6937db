"""The engine: suppressions, crash isolation, module facts under every import form."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.linter import engine
from ascendlint.diagnostics import Severity
from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.catalog.registry import all_rules
from ascendlint.rule import Rule
from ascendlint.analysis.walk import NodeIndex
from tests.helpers import lint, rules_named

LAUNCH = """
import triton

def run(k, x):
    k[(1,)](x, num_warps=4){comment}
"""


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("  # noqa", True),
        ("  # noqa: ASC101", True),
        ("  # noqa: ASC1", True),
        ("  # noqa:ASC101,ASC102", True),
        ("  # NOQA: asc101", True),
        ("  # noqa: ASC102", False),
        ("  # a comment", False),
    ],
)
def test_noqa_on_the_reported_line(comment, suppressed):
    found = lint(LAUNCH.format(comment=comment), "ASC101")
    assert (found == []) is suppressed


def test_skip_file_comment_disables_the_file():
    code = "# ascendlint: skip-file\n" + LAUNCH.format(comment="")
    assert lint(code, "ASC101") == []


class _Exploding(Rule):
    """Test-only rule that crashes on every call."""

    code = "ASC999"
    name = "exploding"
    message = "never"
    severity = Severity.ERROR
    why = "test"

    def visit_Call(self, node):
        raise RuntimeError("boom")


def test_a_crashing_rule_becomes_asc002_and_other_rules_still_report():
    rules = [*rules_named("ASC101", "ASC002"), _Exploding]
    found = engine.lint_text(textwrap.dedent(LAUNCH.format(comment="")), "k.py", rules)
    codes = [d.code for d in found]
    assert codes.count("ASC101") == 1
    crash = next(d for d in found if d.code == "ASC002")
    assert "ASC999" in crash.message and "RuntimeError: boom" in crash.message


def test_syntax_error_gives_asc001_with_cpython_position():
    found = lint("import triton\nx = (1,\n", "ASC001")
    assert [d.code for d in found] == ["ASC001"]
    assert found[0].location.row == 2


def test_findings_are_sorted_deterministically():
    code = "import triton\n" + "\n".join(f"def r{i}(k, x):\n    k[(1,)](x, num_stages=1, num_warps=4)\n" for i in range(3))
    found = lint(code, "ASC101")
    assert [(d.location.row, d.location.column) for d in found] == sorted((d.location.row, d.location.column) for d in found)
    assert found == lint(code, "ASC101")


@pytest.mark.parametrize(
    "imports, expression, expected",
    [
        ("import triton.language as tl", "tl.dot", "tl.dot"),
        ("import triton", "triton.language.dot", "tl.dot"),
        ("from triton import language as L", "L.dot", "tl.dot"),
        ("from triton.language import dot", "dot", "tl.dot"),
        ("import triton_dist.language as dl", "dl.wait", "dl.wait"),
        ("from triton_dist import language as dist", "dist.notify", "dl.notify"),
        ("from triton_dist.language.extra import libshmem_device", "libshmem_device.fence", "shmem.fence"),
        ("from triton_dist.language.extra import libshmem_device as shm", "shm.putmem", "shmem.putmem"),
        ("import triton as tt", "tt.jit", "triton.jit"),
        ("import numpy as np", "tl.dot", None),
    ],
)
def test_qualified_names_under_every_import_form(imports, expression, expected):
    module = cst.parse_module(f"{imports}\n{expression}\n")
    facts = ModuleFacts(module, NodeIndex(module))
    expr = module.body[1].body[0].value
    assert facts.qualname(expr) == expected


def test_kernels_constexprs_and_do_not_specialize_are_found():
    code = textwrap.dedent(
        """
        import triton
        import triton.language as tl

        @triton.autotune(configs=[], key=["n"])
        @triton.jit(do_not_specialize=["n", 2])
        def k(x_ptr, n, m, BLOCK: tl.constexpr):
            pass

        def host(x):
            k[(4,)](x, 1, 2, BLOCK=8)
        """
    )
    module = cst.parse_module(code)
    facts = ModuleFacts(module, NodeIndex(module))
    kernel = facts.kernels["k"]
    assert kernel.params == ["x_ptr", "n", "m", "BLOCK"]
    assert kernel.constexpr == {"BLOCK"}
    assert kernel.do_not_specialize == {"n", "m"}
    assert kernel.autotune is not None
    [launch] = facts.launches
    assert launch.kernel is kernel and set(launch.keywords) == {"BLOCK"}


def test_triton_dist_jit_kernels_are_kernels():
    module = cst.parse_module("import triton_dist\n\n@triton_dist.jit\ndef k(x_ptr):\n    pass\n")
    facts = ModuleFacts(module, NodeIndex(module))
    assert list(facts.kernels) == ["k"]


def test_local_alias_is_used_for_fixes():
    module = cst.parse_module("import triton\n")
    facts = ModuleFacts(module, NodeIndex(module))
    assert facts.local_alias("tl", "tl") == "triton.language"


def test_every_registered_rule_has_a_unique_stable_code():
    codes = [r.code for r in all_rules()]
    assert codes == sorted(codes)
    assert all(c.startswith("ASC") and len(c) == 6 for c in codes)
