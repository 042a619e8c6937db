"""``--add-noqa`` fuzzed as ``--fix`` is: on damaged kernels (the fuzz corpus's mutations, with odd line breaks),
the commented text must parse whenever the original did, keep every line ending, and leave nothing to report but
what a comment cannot hide. CI-sized and derandomized."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from ascendlint.fixes.add_noqa import NOT_SUPPRESSIBLE, add_noqa_to_text
from ascendlint.fixes import parses
from tests.helpers import lint
from tests.robustness.harness import corpus
from tests.robustness.mutations import mutated, with_line_breaks

pytestmark = pytest.mark.slow

SOURCES = corpus()


def _check(text: str) -> None:
    found = lint(text)
    outcome = add_noqa_to_text(text, found)
    if outcome.text == text:
        return
    assert parses(outcome.text) or not parses(text)
    assert outcome.text.count("\r\n") >= text.count("\r\n")  # no line ending lost or joined
    assert outcome.text.count("\r") - outcome.text.count("\r\n") == text.count("\r") - text.count("\r\n")
    skipped_rows = {row for row, _ in outcome.skipped}
    again = [d for d in lint(outcome.text) if d.code not in NOT_SUPPRESSIBLE and d.noqa_row not in skipped_rows]
    assert again == [], [(d.code, d.location.row, d.message) for d in again]


def _ci(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@_ci(150)
@given(mutated(SOURCES))
def test_add_noqa_on_mutated_kernels(case):
    _check(case[1])


@_ci(60)
@given(with_line_breaks(SOURCES))
def test_add_noqa_on_kernels_with_odd_line_breaks(case):
    _check(case[1])
