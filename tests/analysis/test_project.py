"""The linted tree as one program: a jit helper imported from another module is known by its summary."""

from __future__ import annotations

import textwrap

from ascendlint.linter import engine
from ascendlint.analysis.project import (
    HelperSummary,
    ModuleInProject,
    ProjectFacts,
    helper_uses,
    imported_modules,
    lint_order,
    module_name,
    only_called,
    summaries_from_json,
    summaries_to_json,
)
from ascendlint.catalog.registry import all_rules

UTILS = """
import triton
import triton.language as tl

@triton.jit
def program_id64(axis):
    return tl.program_id(axis).to(tl.int64)

@triton.jit
def program_id32(axis):
    return tl.program_id(axis)
"""

KERNEL = """
import triton
import triton.language as tl
from .utils import {helper}

@triton.jit
def kernel(q, o, cu_seqlens, T, H, K, BK: tl.constexpr):
    i_n = {helper}(0)
    i_h = tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n)
    o_k = tl.arange(0, BK)
    tl.store(o + o_k, tl.load(q + (bos * H + i_h) * K + o_k))
    tl.store(o + o_k, tl.sum(tl.load(q + (i_n * T + o_k[:, None]) * K + o_k[None, :]), 1))
"""

RULES = [rule for rule in all_rules() if rule.code == "ASC202"]


def _lint(text: str, name: str, project: ProjectFacts, export: bool = False):
    module = ModuleInProject(name, False, project, export=export)
    found = engine.lint_text(textwrap.dedent(text), f"{name.replace('.', '/')}.py", RULES, project=module)
    return found, module.exported


def _exported_utils() -> ProjectFacts:
    project = ProjectFacts()
    _, exported = _lint(UTILS, "pkg.utils", project, export=True)
    project.add("pkg.utils", exported)
    return project


def test_a_helper_that_widens_the_program_id_is_seen_through_the_import():
    project = _exported_utils()
    widened, _ = _lint(KERNEL.format(helper="program_id64"), "pkg.kernel", project)
    narrow, _ = _lint(KERNEL.format(helper="program_id32"), "pkg.kernel", project)
    assert [d.location.row for d in widened] == [12]  # the loaded offset still wraps; the widened id does not
    assert [d.location.row for d in narrow] == [12, 13]


def test_a_module_linted_alone_knows_nothing_of_its_imports():
    alone, _ = _lint(KERNEL.format(helper="program_id64"), "pkg.kernel", ProjectFacts())
    assert [d.location.row for d in alone] == [12]  # an unknown call is not a program id


def test_summaries_survive_json():
    exported = _exported_utils().modules["pkg.utils"]
    assert summaries_from_json(summaries_to_json(exported)) == exported
    assert isinstance(exported["program_id64"], HelperSummary)
    assert exported["program_id64"].params == ("axis",)


def test_module_names_follow_packages(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for init in (tmp_path / "pkg" / "__init__.py", tmp_path / "pkg" / "sub" / "__init__.py"):
        init.write_text("")
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("")
    assert module_name(tmp_path / "pkg" / "sub" / "mod.py") == "pkg.sub.mod"
    assert module_name(tmp_path / "pkg" / "__init__.py") == "pkg"
    assert module_name(tmp_path / "lonely.py") == "lonely"


def test_import_scan_resolves_relative_imports_and_orders_definers_first():
    text = "from .utils import pid\nfrom ..common import x\nimport torch\nfrom triton import jit\n"
    assert imported_modules(text, "pkg.sub.kernel", False) == {"pkg.sub.utils", "pkg.common", "torch", "triton"}
    waves = lint_order({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "outside"}})
    assert waves == [["c"], ["b"], ["a"], ["d"]]
    assert lint_order({"x": {"y"}, "y": {"x"}}) == [["x"], ["y"]]  # a cycle is broken, nothing is lost


def test_helper_uses_reads_calls_and_launches_of_imported_names_by_line_scan():
    text = (
        "from .tiles import (\n    doubled,\n    halved as half,\n)\n"
        "from pkg.grids import scale_kernel, unused\n"
        "@triton.jit\ndef k(x):\n    doubled(x)\n    half (x)\n"
        "def run(x):\n    scale_kernel[(1,)](x)\n    scale_kernel(x)\n"
    )
    uses = helper_uses(text, "pkg.kernel", False, {"pkg.tiles", "pkg.grids"})
    assert uses == {"pkg.tiles": {"doubled": False, "halved": False}, "pkg.grids": {"scale_kernel": True}}
    assert helper_uses(text, "pkg.kernel", False, {"pkg.grids"}) == {"pkg.grids": {"scale_kernel": True}}
    # a name one importer calls and another launches is a kernel of its own module after all
    assert only_called([uses["pkg.tiles"], {"doubled": True}]) == frozenset({"halved"})
