"""A plain ``check`` of one file imports what that run needs and nothing else (start-up is most of a hook's time).

Each probe is a fresh interpreter that runs the command and reports ``sys.modules``. The rule index is stored by a
first run (as on any machine after the first use), so the probe's run must not scan the installed distributions,
import a rule it did not select, an output format it does not print, notebook support, the emulator or a pool.
Which rule modules may load is derived from the registry's own listing of ``checks/``, never from a list here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascendlint.catalog import rule_index as rule_index_module
from ascendlint.catalog.registry import all_rules, builtin_modules

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from ascendlint.cli import main
try:
    main(["check", *sys.argv[2:]])
except SystemExit:
    pass
rule = sys.modules.get("ascendlint.rule")
examples = rule.example_text.cache_info().currsize if rule is not None else 0
with open(sys.argv[1], "w") as handle:
    json.dump({"modules": sorted(sys.modules), "examples read": examples}, handle)
"""

# Never needed by a lint-only run of one named Python file printed in a text or JSON format.
FORBIDDEN = (
    "ascendlint.emulate", "ascendlint.linter.notebook", "ascendlint.server", "ascendlint.catalog.docs",
    "ascendlint.fixes.add_noqa",
    "importlib.metadata",  # the entry-point scan and the metadata lookup: the stored index answers both
    "traceback", "difflib",  # only for a crashed rule and for --diff
    "pathspec", "multiprocessing", "concurrent.futures", "nbformat", "triton", "torch", "numpy", "pygls",
)

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


def add(x, y):
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024, num_warps=4)
"""


@pytest.fixture
def project(tmp_path) -> tuple[Path, dict]:
    (tmp_path / "pyproject.toml").write_text("[tool.ascendlint]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), rule_index_module.CACHE_ENV: str(tmp_path / "user-cache")}
    first = tmp_path / "first.py"
    first.write_text(KERNEL)
    # stores the rule index, as the first run anywhere does (the same command: the import path is part of its key)
    subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "first.json"), str(first)], cwd=tmp_path, env=env,
                   capture_output=True, timeout=300)
    assert list((tmp_path / "user-cache").glob("rules-*.json"))
    return tmp_path, env


def _loaded(project, *args: str) -> tuple[set[str], str]:
    folder, env = project
    target = folder / "edited.py"
    target.write_text(KERNEL + "# edited\n")  # never linted before: a cache miss, parsed and linted
    listing = folder / "modules.json"
    run = subprocess.run([sys.executable, "-c", PROBE, str(listing), str(target), *args], cwd=folder, env=env,
                         capture_output=True, text=True, timeout=300)
    found = json.loads(listing.read_text())
    assert found["examples read"] == 0  # the rules' examples are for the tests and the docs, never a lint run
    return set(found["modules"]), run.stdout + run.stderr


def _unneeded(modules: set[str], allowed_rules: set[str], allowed_formats: set[str]) -> list[str]:
    found = [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    found += [m for m in modules if m.startswith("ascendlint.checks.") and m not in allowed_rules]
    found += [m for m in modules if m.startswith("ascendlint.output.") and m not in allowed_formats]
    return sorted(found)


def test_a_plain_check_imports_only_the_default_rules_and_its_format(project):
    modules, output = _loaded(project, "--format", "json")
    assert "\"code\": \"ASC101\"" in output, output  # it did lint: ASC101 flags the launch's num_warps
    default = {builtin_modules()[r.code] for r in all_rules() if r.default and r.code in builtin_modules()}
    assert "libcst" in modules and default <= modules
    assert _unneeded(modules, default, {"ascendlint.output.json_format"}) == []


def test_a_selected_rule_is_the_only_rule_imported(project):
    modules, output = _loaded(project, "--select", "ASC301", "--format", "concise")
    assert "libcst" in modules, output
    assert _unneeded(modules, {builtin_modules()["ASC301"]}, {"ascendlint.output.text"}) == []


def test_the_probe_sees_a_module_that_is_not_needed(project):
    """The check can fail: naming an opt-in rule's module as forbidden catches its import."""
    opt_in = next(r for r in all_rules() if not r.default and r.code in builtin_modules())
    modules, _ = _loaded(project, "--select", opt_in.code)
    assert _unneeded(modules, set(), set()) != []


def test_the_stored_index_answers_the_repository_url_without_a_metadata_lookup(tmp_path, monkeypatch):
    from ascendlint import docs_links

    monkeypatch.setenv(rule_index_module.CACHE_ENV, str(tmp_path / "user-cache"))
    monkeypatch.setattr(docs_links, "_known_repository", [])
    declared = docs_links.declared_repository_url()
    rule_index_module.rule_index()  # builds and stores the index, with the URL the metadata declares
    (stored,) = (tmp_path / "user-cache").glob("rules-*.json")
    document = json.loads(stored.read_text())
    assert document["repository"] == declared
    document["repository"] = "https://example.invalid/kept"  # outside the records' digest: read back as stored
    stored.write_text(json.dumps(document))

    def refuse():
        raise AssertionError("the metadata was looked up although the stored index holds the URL")

    monkeypatch.setattr(docs_links, "declared_repository_url", refuse)
    assert rule_index_module.rule_index()
    assert docs_links.repository_url() == "https://example.invalid/kept"
