"""Every protocol mistake of ``mutations.py``: the linter reports it, the emulator shows it, or the suite says
why one of them cannot.

The linter side lints the mutated module text. The emulator side imports the same text as a module and runs
its kernel on an emulated world with the full device model and hazards on: the mistake must hang (with a
report naming the stuck programs, their lines and the signal slots), give numbers that differ from torch,
or fail with an error saying why. Mutations marked ``hidden_without`` also run with that device-model layer
off, where they pass: that layer is what makes the mistake visible.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from tests.reference_kernels.mutations import MUTATIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 30.0


def _ids(mutations):
    return [m.id for m in mutations]


def _reference_text(module: str) -> str:
    return (REPO_ROOT / "reference_kernels" / f"{module}.py").read_text()


def _line_of(text: str, fragment: str, occurrence: int) -> int:
    rows = [row for row, line in enumerate(text.splitlines(), start=1) if fragment in line]
    assert len(rows) > occurrence, f"{fragment!r} occurs {len(rows)} time(s) in the mutant"
    return rows[occurrence]


def _lint(text: str, name: str) -> list:
    from ascendlint.engine import lint_text
    from ascendlint.registry import all_rules

    return lint_text(text, f"{name}.py", list(all_rules()))


# --- the linter ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mutation", [m for m in MUTATIONS if m.rule], ids=_ids([m for m in MUTATIONS if m.rule]))
def test_linter_reports_the_mistake_where_it_is(mutation):
    text = mutation.apply(_reference_text(mutation.module))
    found = {(d.code, d.location.row) for d in _lint(text, mutation.id)}
    expected = (mutation.rule, _line_of(text, mutation.anchor, mutation.anchor_occurrence))
    assert expected in found, sorted(found)


BLIND_LINTER = [m for m in MUTATIONS if m.rule is None]


@pytest.mark.parametrize("mutation", BLIND_LINTER, ids=_ids(BLIND_LINTER))
def test_mistakes_no_rule_can_see_are_explained_and_unreported(mutation):
    assert mutation.why and mutation.outcome, "a mistake the linter misses must be one the emulator shows"
    text = mutation.apply(_reference_text(mutation.module))
    assert [d.code for d in _lint(text, mutation.id) if d.severity.value != "advisory"] == []


# --- the emulator --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emulate():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture(scope="module")
def mutants(emulate, tmp_path_factory):
    """Mutant modules by id, imported from their own files (the interpreter reads a kernel's source)."""
    folder = tmp_path_factory.mktemp("mutants")
    loaded = {}

    def load(mutation):
        if mutation.id not in loaded:
            name = "mutant_" + re.sub(r"\W", "_", mutation.id)
            path = folder / f"{name}.py"
            path.write_text(mutation.apply(_reference_text(mutation.module)))
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            loaded[mutation.id] = module
        return loaded[mutation.id]

    return load


def _run(emulate, mutation, module, model) -> tuple[str, str]:
    """("ok" | "wrong" | "hang" | "error", details) of the mutant on an emulated world."""
    import torch

    cases = importlib.import_module("tests.reference_kernels.fused_cases")
    torch.manual_seed(11)
    world = emulate.World(mutation.world)
    case = cases.build(mutation.module, module, world, mutation.cores, **mutation.shape)
    try:
        for _ in range(mutation.launches):
            for out in case.outputs:
                out.fill_(float("nan"))
            cases.launch(world, case, timeout=TIMEOUT_SECONDS, model=model)
    except emulate.EmulatorHang as hang:
        return "hang", hang.report
    except Exception as error:  # noqa: BLE001 - any failure of the mutant is an outcome to check
        return "error", f"{type(error).__name__}: {error}"
    wrong = cases.mismatches(case)
    return ("wrong", "\n".join(wrong)) if wrong else ("ok", "")


def _model(emulate, mutation, *without):
    return emulate.DeviceModel(**mutation.model).without(*without)


SEEN = [m for m in MUTATIONS if m.outcome]


@pytest.mark.kernels
@pytest.mark.parametrize("mutation", SEEN, ids=_ids(SEEN))
def test_emulator_shows_the_mistake(emulate, mutants, mutation):
    outcome, details = _run(emulate, mutation, mutants(mutation), _model(emulate, mutation))
    assert outcome in mutation.outcome.split(" or "), f"{outcome}\n{details}"
    for fragment in mutation.report:
        assert fragment in details, details
    if outcome == "hang":
        stuck = [line for line in details.splitlines() if f"mutant_{re.sub(chr(92) + 'W', '_', mutation.id)}" in line]
        assert stuck or "never started" in details, details  # the report names the stuck kernel lines
        assert "signal buffers" in details or mutation.module == "allgather_gemm_two_phase", details


BLIND_EMULATOR = [m for m in MUTATIONS if m.outcome is None]


@pytest.mark.kernels
@pytest.mark.parametrize("mutation", BLIND_EMULATOR, ids=_ids(BLIND_EMULATOR))
def test_mistakes_the_emulator_cannot_see_are_explained_and_pass(emulate, mutants, mutation):
    assert mutation.why and mutation.rule, "a mistake the emulator misses must be one a rule reports"
    outcome, details = _run(emulate, mutation, mutants(mutation), _model(emulate, mutation))
    assert outcome == "ok", details


LAYERED = [m for m in MUTATIONS if m.hidden_without]


@pytest.mark.kernels
@pytest.mark.parametrize("mutation", LAYERED, ids=_ids(LAYERED))
def test_without_its_device_model_layer_the_mistake_passes_unseen(emulate, mutants, mutation):
    outcome, details = _run(emulate, mutation, mutants(mutation), _model(emulate, mutation, mutation.hidden_without))
    assert outcome == "ok", f"{outcome}\n{details}"
