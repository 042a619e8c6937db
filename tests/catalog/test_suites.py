"""Rule suites (`default`, `review`, `all`): selectable by name, listed, described in SARIF, used by the recipes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascendlint.catalog import rule_index, suites
from ascendlint.workspace import selection
from ascendlint.output.sarif import sarif_log
from ascendlint.catalog.registry import all_rules
from tests.output.conftest import lint_files

ROOT = Path(__file__).resolve().parents[2]
RULES = all_rules()
DEFAULT = {rule.code for rule in RULES if rule.default}
# the size rules that catch real upstream fixes at 70% or more on untuned code
REVIEW_OPT_IN = {"ASC105"}
BELOW_THE_REVIEW_BAR = {"ASC110", "ASC107", "ASC202", "ASC203", "ASC207", "ASC304", "ASC201", "ASC306"}  # measured under 70% untuned

GRID_AND_OFFSET = """\
import triton
import triton.language as tl

@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def run(x):
    n = x.numel()
    scale[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024, num_warps=4)

@triton.jit
def row_sums(x, o, cu_seqlens, H, K: tl.constexpr, BT: tl.constexpr):
    i_n, i_h = tl.program_id(0), tl.program_id(1)
    bos = tl.load(cu_seqlens + i_n).to(tl.int32)
    eos = tl.load(cu_seqlens + i_n + 1).to(tl.int32)
    o_t = tl.arange(0, BT)
    b_x = tl.load(x + (bos + o_t[:, None]) * H * K + i_h * K, mask=o_t[:, None] < eos - bos)
    tl.store(o + i_n * BT + o_t, tl.sum(b_x, 1))

@triton.jit
def halve(x, y, num_tokens: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < num_tokens) * 0.5, mask=offs < num_tokens)

def run_halve(x, y):
    halve[(64,)](x, y, x.shape[0], BLOCK=1024)
"""


def codes(select, extend=(), ignore=()):
    chosen = [selection.validate(list(group), RULES, "test") for group in (select, extend, ignore)]
    return {rule.code for rule in selection.resolve(RULES, *chosen)}


def test_the_default_suite_is_the_default_selection():
    assert codes(["default"]) == codes(["ASC"]) == DEFAULT


def test_the_review_suite_holds_the_default_rules_and_the_size_rules_that_catch_real_fixes():
    review = codes(["review"])
    assert DEFAULT < review
    assert REVIEW_OPT_IN <= review
    assert not BELOW_THE_REVIEW_BAR & review
    for code in review - DEFAULT:
        assert suites.MEASURED[code].precision in ("very-high", "high")


def test_all_is_every_rule_and_suite_names_are_case_insensitive():
    assert codes(["all"]) == {rule.code for rule in RULES}
    assert selection.validate(["Review", " default "], RULES, "test") == ["REVIEW", "DEFAULT"]


def test_a_code_or_prefix_decides_over_a_suite():
    assert "ASC105" not in codes(["review"], ignore=["ASC105"])
    assert "ASC101" in codes(["review"], ignore=["ASC105"])
    assert codes(["ASC"], extend=["review"]) == codes(["review"])
    assert "ASC105" in codes(["ASC105"], ignore=["review"])  # a code is more specific than a suite
    assert codes(["all"], ignore=["review"]) == {rule.code for rule in RULES} - codes(["review"])
    assert "ASC207" in codes(["review"], extend=["ASC207"])


def test_the_rule_index_keeps_review_membership(tmp_path, monkeypatch):
    monkeypatch.setenv(rule_index.CACHE_ENV, str(tmp_path))
    infos = rule_index.rule_index(use_stored=True)
    stored = rule_index.rule_index(use_stored=True)  # read back from the stored index
    assert {i.code for i in stored if i.review} == codes(["review"])
    assert {i.code for i in selection.resolve(stored, ["REVIEW"])} == codes(["review"])
    assert infos == stored


def test_every_rule_has_a_precision_on_codeqls_scale():
    for rule in RULES:
        assert suites.measured(rule).precision in suites.PRECISIONS, rule.code
    assert suites.precision_band(9, 10) == "very-high" and suites.precision_band(18, 25) == "high"
    assert suites.precision_band(25, 45) == "medium" and suites.precision_band(0, 0) == "low"


def test_the_review_suite_admits_no_opt_in_rule_measured_below_70_percent():
    for rule in RULES:
        if not rule.default and suites.in_review(rule):
            assert suites.measured(rule).precision in ("very-high", "high"), rule.code
    assert "ASC107" not in codes(["review"])  # 20 of 30 on the untuned sets read after its last change


@pytest.mark.parametrize("where", ["select", "extend-select"])
def test_suite_names_work_in_the_configuration(cli, tmp_path, where):
    (tmp_path / "k.py").write_text(GRID_AND_OFFSET, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(f'[tool.ascendlint]\n{where} = ["review"]\n', encoding="utf-8")
    found = json.loads(cli("check", str(tmp_path), "--format", "json", "--no-cache").stdout)
    assert {"ASC101", "ASC105"} <= {f["code"] for f in found}


def test_suite_names_work_on_the_command_line(cli, tmp_path):
    (tmp_path / "k.py").write_text(GRID_AND_OFFSET, encoding="utf-8")
    default = json.loads(cli("check", str(tmp_path), "--format", "json", "--no-cache").stdout)
    review = json.loads(cli("check", str(tmp_path), "--format", "json", "--no-cache", "--select", "review").stdout)
    assert {f["code"] for f in default} == {"ASC101"}
    assert {f["code"] for f in review} == {"ASC101", "ASC105"}
    every = json.loads(cli("check", str(tmp_path), "--format", "json", "--no-cache", "--select", "all").stdout)
    assert {"ASC101", "ASC105", "ASC203"} <= {f["code"] for f in every}
    unknown = cli("check", str(tmp_path), "--select", "reviews")
    assert unknown.returncode == 2 and "Unknown rule selector" in unknown.stderr


def test_rule_listing_shows_suites_and_precision(cli):
    listing = cli("rule", "--all").stdout
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC105]"))
    assert "| review, all | high |" in row
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC107]"))
    assert "| all | medium |" in row
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC101]"))
    assert "| default, review, all | very-high |" in row
    row = next(line for line in listing.splitlines() if line.startswith("| [ASC207]"))
    assert "| all | low |" in row


def test_sarif_descriptors_carry_precision_and_suite_tags():
    rules = sarif_log(lint_files({}))["runs"][0]["tool"]["driver"]["rules"]
    by_id = {r["id"]: r for r in rules}
    for descriptor in rules:
        assert descriptor["properties"]["precision"] in suites.PRECISIONS
        assert {"ascend", "triton", "suite:all"} <= set(descriptor["properties"]["tags"])
    assert "suite:review" in by_id["ASC105"]["properties"]["tags"]
    assert "suite:default" not in by_id["ASC105"]["properties"]["tags"]
    assert "suite:review" not in by_id["ASC203"]["properties"]["tags"]
    assert "suite:review" not in by_id["ASC202"]["properties"]["tags"]
    assert "suite:default" in by_id["ASC101"]["properties"]["tags"]
    assert "performance" in by_id["ASC503"]["properties"]["tags"]


def test_the_pre_commit_hooks_keep_the_default_suite_and_the_review_recipes_use_review():
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "--select" not in hooks and "review" not in hooks
    for recipe in ("github-reviewdog.yml", "github-code-scanning.yml"):
        text = (ROOT / "docs" / "ci" / recipe).read_text(encoding="utf-8")
        assert "--select review" in text, recipe
    guide = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert guide.count("--select review") >= 2
