"""Every protocol mistake of ``mutations.py``: the linter reports it, the emulator shows it, or the suite says
why one of them cannot.

The linter side lints the mutated module text. The emulator side imports the same text as a module and runs
its kernel on an emulated world with the full device model, hazards on and the emulator's default schedule
exploration, comparing with torch after every schedule: the mistake must hang (with a report naming the stuck
programs, their lines and the signal slots), give numbers that differ from torch, or fail with an error saying
why, at every world size the mutation lists. The unbroken kernels pass the same exploration. Mutations marked
``hidden_without`` pass once that device-model layer is off (rerunning the schedule that failed), or, for
``"exploration"``, under the fixed schedule alone. ``test_mutation_table_in_the_docs_is_current`` checks the
table of docs/emulator.md against the mutations and a run of ``ascendlint check`` on every mutant.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reference_kernels.mutations import MUTATIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 30.0
DOC = REPO_ROOT / "docs" / "emulator.md"
TABLE_START, TABLE_END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"


def _ids(mutations):
    return [m.id for m in mutations]


def kernel_path(module: str) -> Path:
    """The reference kernel module, or a kernel of the tests' own (``tests/reference_kernels``)."""
    path = REPO_ROOT / "reference_kernels" / f"{module}.py"
    return path if path.exists() else REPO_ROOT / "tests" / "reference_kernels" / f"{module}.py"


def _reference_text(module: str) -> str:
    return kernel_path(module).read_text()


def _line_of(text: str, fragment: str, occurrence: int) -> int:
    rows = [row for row, line in enumerate(text.splitlines(), start=1) if fragment in line]
    assert len(rows) > occurrence, f"{fragment!r} occurs {len(rows)} time(s) in the mutant"
    return rows[occurrence]


def _lint(text: str, name: str) -> list:
    from ascendlint.linter.engine import lint_text
    from ascendlint.catalog.registry import all_rules

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
    found = {d.code for d in _lint(text, mutation.id) if d.severity.value != "advisory"}
    assert found <= {mutation.rule_to_come} - {None}, found  # a planned rule may report it once it lands


# --- the emulator --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def emulate():
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
            loaded[mutation.id] = _load_module(name, path)
        return loaded[mutation.id]

    return load


def _run(emulate, mutation, module, world_size, model, schedules=None):
    """(outcome, details, failing schedule) of one kernel module on an emulated world.

    outcome: "ok" | "wrong" (a schedule's numbers differ from torch, or two schedules leave different memory) |
    "hang" | "error".
    """
    import torch

    from ascendlint.emulate.images import ScheduleDependentResult

    cases = importlib.import_module("tests.reference_kernels.fused_cases")
    torch.manual_seed(11)
    world = emulate.World(world_size)
    case = cases.build(mutation.module, module, world, mutation.cores, **mutation.shape)
    try:
        for _ in range(mutation.launches):
            for out in case.outputs:
                out.fill_(float("nan"))
            cases.launch(world, case, timeout=TIMEOUT_SECONDS, model=model, schedules=schedules, check=True)
    except emulate.EmulatorHang as hang:
        return "hang", hang.report, hang.schedule
    except (cases.WrongResult, ScheduleDependentResult) as wrong:
        return "wrong", str(wrong), wrong.schedule
    except Exception as error:  # noqa: BLE001 - any failure of the mutant is an outcome to check
        return "error", f"{type(error).__name__}: {error}", getattr(error, "schedule", None)
    return "ok", "", None


def _model(emulate, mutation, *without):
    return emulate.DeviceModel(**mutation.model).without(*without)


SEEN = [(m, w) for m in MUTATIONS if m.outcome for w in m.world_sizes]


@pytest.mark.kernels
@pytest.mark.parametrize(("mutation", "world_size"), SEEN, ids=[f"{m.id}-world{w}" for m, w in SEEN])
def test_emulator_shows_the_mistake(emulate, mutants, mutation, world_size):
    outcome, details, _ = _run(emulate, mutation, mutants(mutation), world_size, _model(emulate, mutation))
    assert outcome in mutation.outcome.split(" or "), f"{outcome}\n{details}"
    for fragment in mutation.report:
        assert fragment in details, details
    if outcome == "hang":
        stuck = [line for line in details.splitlines() if f"mutant_{re.sub(chr(92) + 'W', '_', mutation.id)}" in line]
        assert stuck or "never started" in details, details  # the report names the stuck kernel lines
        assert "signal buffers" in details or mutation.module == "allgather_gemm_two_phase", details
    assert "replay it with schedules=" in details or outcome != "hang", details


# the unbroken kernels pass the same exploration, at the shapes and world sizes the mutants run at
REFERENCES = sorted({(m.module, w, m.cores, tuple(sorted(m.shape.items())), tuple(sorted(m.model.items())))
                     for m in MUTATIONS if m.worlds for w in m.world_sizes})


@pytest.mark.kernels
@pytest.mark.parametrize(("module", "world_size", "cores", "shape", "model"), REFERENCES,
                         ids=[f"{r[0]}-world{r[1]}-cores{r[2]}" for r in REFERENCES])
def test_unbroken_kernel_passes_the_default_exploration(emulate, module, world_size, cores, shape, model):
    from tests.reference_kernels.mutations import Mutation

    reference = Mutation(f"{module}-reference", module, (), rule=None, cores=cores, shape=dict(shape),
                         model=dict(model))
    package = "reference_kernels" if kernel_path(module).parent.name == "reference_kernels" and \
        kernel_path(module).parent.parent == REPO_ROOT else "tests.reference_kernels"
    kernel = importlib.import_module(f"{package}.{module}")
    outcome, details, _ = _run(emulate, reference, kernel, world_size, _model(emulate, reference))
    assert outcome == "ok", details


BLIND_EMULATOR = [m for m in MUTATIONS if m.outcome is None]


@pytest.mark.kernels
@pytest.mark.parametrize("mutation", BLIND_EMULATOR, ids=_ids(BLIND_EMULATOR))
def test_mistakes_the_emulator_cannot_see_are_explained_and_pass(emulate, mutants, mutation):
    assert mutation.why and mutation.rule, "a mistake the emulator misses must be one a rule reports"
    outcome, details, _ = _run(emulate, mutation, mutants(mutation), mutation.world, _model(emulate, mutation))
    assert outcome == "ok", details


LAYERED = [(m, w) for m in MUTATIONS if m.hidden_without for w in m.world_sizes]


@pytest.mark.kernels
@pytest.mark.parametrize(("mutation", "world_size"), LAYERED, ids=[f"{m.id}-world{w}" for m, w in LAYERED])
def test_without_its_device_model_layer_the_mistake_passes_unseen(emulate, mutants, mutation, world_size):
    module = mutants(mutation)
    if mutation.hidden_without == "exploration":
        outcome, details, _ = _run(emulate, mutation, module, world_size, _model(emulate, mutation),
                                   schedules=emulate.FIXED_ONLY)
        assert outcome == "ok", f"the fixed schedule alone already shows it: {outcome}\n{details}"
        return
    outcome, details, failing = _run(emulate, mutation, module, world_size, _model(emulate, mutation))
    assert outcome != "ok" and failing is not None, details
    outcome, details, _ = _run(emulate, mutation, module, world_size,
                               _model(emulate, mutation, mutation.hidden_without), schedules=failing)
    assert outcome == "ok", f"{outcome} under {failing.token} without {mutation.hidden_without}\n{details}"


@pytest.mark.kernels
@pytest.mark.parametrize("world_size", (2, 4))
def test_fresh_ring_race_fails_the_default_exploration_and_replays_from_its_seed(emulate, mutants, monkeypatch,
                                                                                 world_size):
    """A ring all-gather of the tests' own whose slot index leaves out the block, so a program's wait can be
    satisfied by another program's notify: the fixed order passes it, the exploration does not, and the schedule
    it names fails the same way again, passed to the API or through ASCENDLINT_EMULATE_SCHEDULE."""
    monkeypatch.delenv(emulate.REPLAY_VARIABLE, raising=False)
    mutation = next(m for m in MUTATIONS if m.id == "ring_allgather-slot-leaves-out-the-block")
    module, model = mutants(mutation), _model(emulate, mutation)
    assert _run(emulate, mutation, module, world_size, model, schedules=emulate.FIXED_ONLY)[0] == "ok"
    outcome, details, failing = _run(emulate, mutation, module, world_size, model)
    assert outcome in ("hang", "wrong") and failing.strategy != "fixed", details
    assert f"replay it with schedules={failing.token!r}" in details

    def without_note(text):
        return text.split("\nunder emulated schedule")[0]

    replayed = _run(emulate, mutation, module, world_size, model, schedules=failing.token)
    assert (replayed[0], replayed[2]) == (outcome, failing)
    assert without_note(replayed[1]) == without_note(details)
    monkeypatch.setenv(emulate.REPLAY_VARIABLE, failing.token)
    from_environment = _run(emulate, mutation, module, world_size, model)
    assert (from_environment[0], from_environment[2]) == (outcome, failing)
    assert without_note(from_environment[1]) == without_note(details)
    reference = importlib.import_module("tests.reference_kernels.ring_allgather")
    assert _run(emulate, mutation, reference, world_size, model)[0] == "ok"  # the unbroken ring, same schedule


# --- the table of docs/emulator.md ---------------------------------------------------------------------------


def lint_new_findings(folder: Path) -> dict[str, list[str]]:
    """Mutation id -> the rule codes ``ascendlint check --select ALL`` reports on the mutant and not on the
    unbroken kernel (one run of the command over every mutant and reference)."""
    folder.mkdir(parents=True, exist_ok=True)
    names = {}
    for mutation in MUTATIONS:
        name = "mutant_" + re.sub(r"\W", "_", mutation.id)
        (folder / f"{name}.py").write_text(mutation.apply(_reference_text(mutation.module)))
        names[f"{name}.py"] = mutation.id
    for module in {m.module for m in MUTATIONS}:
        (folder / f"reference_{module}.py").write_text(_reference_text(module))
    result = subprocess.run([sys.executable, "-m", "ascendlint", "check", "--select", "ALL", "--output-format", "json",
                             "--no-cache", "--exit-zero", str(folder)], capture_output=True, text=True, check=True,
                            cwd=folder)
    codes: dict[str, list[str]] = {}
    for finding in json.loads(result.stdout):
        codes.setdefault(Path(finding["filename"]).name, []).append(finding["code"])
    table = {}
    for mutation in MUTATIONS:
        name = "mutant_" + re.sub(r"\W", "_", mutation.id) + ".py"
        base = list(codes.get(f"reference_{mutation.module}.py", []))
        new = []
        for code in codes.get(name, []):
            if code in base:
                base.remove(code)
            else:
                new.append(code)
        table[mutation.id] = sorted(set(new))
    return table


def mutation_table(lint: dict[str, list[str]]) -> str:
    """The Markdown table of every mutant: what lint reports and what the emulator shows."""
    rows = [("| Mutant | Worlds | Lint (`ascendlint check --select ALL`, new findings) | Emulator (default "
             "exploration) | Shown by |"), "| --- | --- | --- | --- | --- |"]
    for mutation in MUTATIONS:
        worlds = ", ".join(str(w) for w in mutation.world_sizes)
        codes = ", ".join(lint[mutation.id]) or "—"
        outcome = mutation.outcome or "passes (only lint sees it)"
        layer = mutation.hidden_without
        shown = "schedule exploration" if layer == "exploration" else (f"`{layer}`" if layer else "")
        rows.append(f"| `{mutation.id}` | {worlds} | {codes} | {outcome} | {shown} |")
    return "\n".join(rows)


def test_mutation_table_in_the_docs_is_current(tmp_path):
    """Regenerate with ``python -m tests.reference_kernels.test_mutations --write``."""
    lint = lint_new_findings(tmp_path / "lint")
    for mutation in MUTATIONS:  # the lint column agrees with the rule each mutation declares
        if mutation.rule:
            assert mutation.rule in lint[mutation.id], (mutation.id, lint[mutation.id])
        assert mutation.rule or mutation.outcome, mutation.id  # every mutant is caught by one side or both
    text = DOC.read_text()
    assert TABLE_START in text and TABLE_END in text, "docs/emulator.md lost its table markers"
    current = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert current == mutation_table(lint), "docs/emulator.md's mutant table is stale: run " \
                                            "`python -m tests.reference_kernels.test_mutations --write`"


def _write_table() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        table = mutation_table(lint_new_findings(Path(folder)))
    text = DOC.read_text()
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    DOC.write_text(f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        _write_table()
    else:
        print(mutation_table(lint_new_findings(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/ascendlint-lint"))))
