"""Distributed protocols of shapes the reference kernels lack, each correct and broken in several ways.

Every correct kernel passes the emulator (defaults: full device model, default exploration) at world
sizes 2 and 4 and draws no finding from the default rules; every variant is caught by the rule it names,
by the emulator, or by both, as it says. Variants that only a run-ahead rank or an in-flight transfer
exposes also pass once that part of the model is taken away, which shows what catches them.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from tests.protocols.variants import VARIANTS

HERE = Path(__file__).parent
MODULES = ["stream_pair", "one_shot_all_reduce", "barrier_all_gather", "nbi_ring_shift", "pull_all_gather_gemm",
           "ring_reduce_scatter", "expert_all_to_all"]


def _source(module: str) -> str:
    return (HERE / f"{module}.py").read_text()


def _default_findings(text: str, module: str) -> list:
    from ascendlint.linter.engine import lint_text
    from ascendlint.catalog.registry import all_rules

    return [(d.code, d.message) for d in lint_text(text, f"{module}.py", [r for r in all_rules() if r.default])]


# --- the linter --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", MODULES)
def test_correct_kernel_draws_no_default_finding(module):
    assert _default_findings(_source(module), module) == []


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.rule], ids=lambda v: v.id)
def test_rule_reports_the_variant(variant):
    found = {code for code, _ in _default_findings(variant.apply(_source(variant.module)), variant.module)}
    assert variant.rule in found


@pytest.mark.parametrize("variant", [v for v in VARIANTS if v.opt_in_rule], ids=lambda v: v.id)
def test_opt_in_rule_reports_the_variant_and_not_the_correct_kernel(variant):
    from ascendlint.linter.engine import lint_text
    from ascendlint.catalog.registry import all_rules

    rule = [r for r in all_rules() if r.code == variant.opt_in_rule]
    correct = lint_text(_source(variant.module), f"{variant.module}.py", rule)
    broken = lint_text(variant.apply(_source(variant.module)), f"{variant.module}.py", rule)
    assert correct == [] and len(broken) == 1


def render_table() -> str:
    """The protocol rows of the mutation table in docs/emulator.md."""
    rows = ["| Variant | Worlds | Lint (default rules) | Lint (`--select ALL`) | Emulator (default exploration) | "
            "Hidden without |", "| --- | --- | --- | --- | --- | --- |"]
    for v in VARIANTS:
        hidden = {"run-ahead": "ranks running ahead (host barrier between launches)"}.get(
            v.hidden_without, f"`{v.hidden_without}`" if v.hidden_without else "")
        lint_all = ", ".join(c for c in (v.rule, v.opt_in_rule) if c) or "—"
        rows.append(f"| `{v.id}` | {', '.join(map(str, v.worlds))} | {v.rule or '—'} | {lint_all} | "
                    f"{v.outcome if v.emulator else 'passes'} | {hidden} |")
    return "\n".join(rows) + "\n"


def test_emulator_docs_list_every_variant():
    text = (HERE.parent.parent / "docs" / "emulator.md").read_text()
    start, end = "<!-- protocol-table:start -->\n", "<!-- protocol-table:end -->"
    assert text[text.index(start) + len(start):text.index(end)] == render_table()


def test_every_variant_is_caught_by_lint_or_emulator():
    assert all(v.rule or v.emulator for v in VARIANTS)
    assert {v.module for v in VARIANTS} == set(MODULES)


# --- the emulator ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emulate():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture(scope="module")
def cases(emulate):
    return importlib.import_module("tests.protocols.cases")


@pytest.fixture(scope="module")
def load(emulate, tmp_path_factory):
    """Variant modules imported from their own files (the interpreter reads a kernel's source)."""
    folder = tmp_path_factory.mktemp("protocol_variants")
    loaded = {}

    def load(variant):
        if variant.id not in loaded:
            name = "variant_" + re.sub(r"\W", "_", variant.id)
            path = folder / f"{name}.py"
            path.write_text(variant.apply(_source(variant.module)))
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[variant.id] = module
        return loaded[variant.id]

    return load


@pytest.mark.parametrize("world_size", [2, 4])
@pytest.mark.parametrize("module", MODULES)
def test_correct_kernel_passes_the_emulator(emulate, cases, module, world_size):
    cases.CASES[module](emulate, importlib.import_module(f"tests.protocols.{module}"), world_size)


_EMULATED = [(v, w) for v in VARIANTS if v.emulator for w in v.worlds]


@pytest.mark.parametrize(("variant", "world_size"), _EMULATED, ids=[f"{v.id}-w{w}" for v, w in _EMULATED])
def test_emulator_fails_the_variant(emulate, cases, load, variant, world_size):
    expected = {"hang": emulate.EmulatorHang, "wrong": AssertionError, "error": Exception}[variant.outcome]
    with pytest.raises(expected):
        cases.CASES[variant.module](emulate, load(variant), world_size, timeout=20)


_RUN_AHEAD = [v for v in VARIANTS if v.hidden_without == "run-ahead"]


@pytest.mark.parametrize("variant", _RUN_AHEAD, ids=lambda v: v.id)
def test_run_ahead_variants_pass_when_ranks_move_in_lockstep(emulate, cases, load, variant):
    """A host barrier between every two launches hides these mistakes: only a rank that runs ahead shows them."""
    cases.CASES[variant.module](emulate, load(variant), max(variant.worlds), lockstep=True, timeout=20)


_LAYERED = [v for v in VARIANTS if v.hidden_without not in (None, "run-ahead")]


@pytest.mark.parametrize("variant", _LAYERED, ids=lambda v: v.id)
def test_layer_variants_pass_without_their_layer(emulate, cases, load, variant):
    model = emulate.DeviceModel().without(variant.hidden_without)
    cases.CASES[variant.module](emulate, load(variant), max(variant.worlds), model=model, timeout=20)


def test_arrival_order_all_to_all_differs_between_schedules_unless_compared_canonically(emulate, cases):
    """Its receive buffer legitimately depends on the arrival order: the default comparison of all memory
    calls that a race, and it names both schedules and how to replay them as a pair."""
    from ascendlint.emulate.images import ScheduleDependentResult

    module = importlib.import_module("tests.protocols.expert_all_to_all")
    with pytest.raises(ScheduleDependentResult) as caught:
        cases.expert_all_to_all(emulate, module, 4, compare_schedules=True)
    first, later = caught.value.schedules
    assert caught.value.replay == f"{first.token},{later.token}"
    assert f"replay it with schedules='{first.token},{later.token}'" in "\n".join(caught.value.__notes__)
    with pytest.raises(ScheduleDependentResult):
        cases.expert_all_to_all(emulate, module, 4, compare_schedules=True, schedules=caught.value.replay)
    # alone, the later schedule has nothing to compare with
    cases.expert_all_to_all(emulate, module, 4, schedules=later.token, compare_schedules=True)


def test_barrier_hang_counts_each_programs_barriers_and_names_the_programs_that_ended(emulate, cases, load):
    variant = next(v for v in VARIANTS if v.id == "barrier_all_gather-barrier-in-task-loop")
    with pytest.raises(emulate.EmulatorHang) as caught:
        cases.barrier_all_gather(emulate, load(variant), 2, schedules=emulate.FIXED_ONLY, timeout=10)
    report = caught.value.report
    assert "libshmem_device.barrier_all #2: waiting for all 4 programs of the launch" in report
    assert "  1: rank 0 program (1, 0, 0), rank 1 program (1, 0, 0)\n" in report
    assert "  2: rank 0 program (0, 0, 0), rank 1 program (0, 0, 0)\n" in report
    assert "ended without reaching the barrier the others wait in: rank 0 program (1, 0, 0), rank 1 program (1, 0, 0)" \
        in report
