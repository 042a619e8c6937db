"""Fuzzing every registered rule and fix: generated programs and damaged kernels must never crash the linter.

CI-sized and derandomized (the same examples every run, so a failure is reproducible and never flaky);
``scripts/fuzz.py`` runs the same checks for as long as you like with fresh randomness. Fixes refused as not
parsing are safe for the file and tracked by the strict expected failures of ``test_fix_safety.py``; the unmodified
corpus must not have any.
"""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.robustness.harness import corpus, examine, examine_notebook
from tests.robustness.mutations import malformed_notebook, mutated, with_form_feeds, with_line_breaks, with_long_chain

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::SyntaxWarning")]  # from hypothesmith



def ci(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


SOURCES = corpus()
KERNEL_HEADER = "import triton\nimport triton.language as tl\n"


def test_corpus_covers_rule_examples_and_kernels():
    names = [name for name, _ in SOURCES]
    assert any(name.startswith("ASC1") for name in names)
    assert any(name.startswith("reference_kernels/") for name in names) or any(name.startswith("examples/") for name in names)


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_unmodified_corpus_survives_every_rule_and_fix(name, text):
    verdict = examine(text)
    assert verdict, verdict.problems
    assert verdict.refused == []


@pytest.mark.parametrize("name, text", SOURCES, ids=[name for name, _ in SOURCES])
def test_corpus_with_crlf_line_endings_survives_and_stays_crlf(name, text):
    verdict = examine(text.replace("\r\n", "\n").replace("\n", "\r\n"))
    assert verdict, verdict.problems


@ci(1500)
@given(mutated(SOURCES))
def test_mutated_kernels_survive_every_rule_and_fix(case):
    name, text = case
    verdict = examine(text)
    assert verdict, (name, verdict.problems, text)


@ci(60)
@given(hypothesmith.from_node())
def test_generated_programs_survive_every_rule_and_fix(program):
    verdict = examine(KERNEL_HEADER + program)
    assert verdict, (verdict.problems, program)


@ci(150)
@given(hypothesmith.from_grammar())
def test_grammar_generated_programs_survive_every_rule_and_fix(program):
    verdict = examine(KERNEL_HEADER + program)
    assert verdict, (verdict.problems, program)


@ci(60)
@given(st.text(max_size=200))
def test_arbitrary_text_after_a_triton_import_survives(noise):
    verdict = examine(KERNEL_HEADER + noise)
    assert verdict, (verdict.problems, noise)


@ci(150)
@given(with_form_feeds(SOURCES))
def test_form_feeds_never_move_a_fix(case):
    """libcst leaves out or repeats form feeds when printing; positions must still be exact, so no fix is refused
    for holding other text than the rule saw (and none is ever applied over such text)."""
    name, text = case
    verdict = examine(text)
    assert verdict, (name, verdict.problems, text)
    assert verdict.stale == [], (name, verdict.stale, text)


@ci(25)
@given(with_long_chain(SOURCES))
def test_long_chains_keep_every_rule_running(case):
    name, text = case
    verdict = examine(text)
    assert verdict, (name, verdict.problems)
    assert verdict.stale == [], (name, verdict.stale)


@ci(150)
@given(with_line_breaks(SOURCES))
def test_lone_crs_form_feeds_and_u2028_never_move_a_fix(case):
    """Python and LSP end lines at \\n, \\r\\n and \\r only; every fix (and every server edit) must land in place."""
    name, text = case
    verdict = examine(text)
    assert verdict, (name, verdict.problems, text)
    assert verdict.stale == [], (name, verdict.stale, text)


@ci(60)
@given(malformed_notebook())
def test_malformed_notebooks_are_one_files_finding(document):
    verdict = examine_notebook(document.encode("utf-8"))
    assert verdict, (verdict.problems, document[:300])
