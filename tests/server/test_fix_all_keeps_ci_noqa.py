"""Editor fix-all under editor settings that turn off a rule the project enables: a `# noqa` for that rule is what
the project's CI needs, so the editor neither reports it as stale nor removes it."""

from __future__ import annotations

import pytest

pytest.importorskip("lsprotocol")

from ascendlint import fixes  # noqa: E402
from ascendlint.workspace.config import Settings  # noqa: E402
from ascendlint.catalog.rule_index import rule_index  # noqa: E402
from ascendlint.server import ClientSettings, _editor_linter  # noqa: E402

TEXT = (
    "import triton\nimport triton.language as tl\n\n\n"
    "def run(k, x):\n"
    "    k[(1,)](x, num_warps=4)  # noqa: ASC101\n"
    "\n\n@triton.jit\ndef kernel(x_ptr, B: tl.constexpr):\n    tl.store(x_ptr, B.to(tl.int64))\n"
)


def _fix_all(chosen: ClientSettings) -> fixes.FixOutcome:
    linter = _editor_linter(rule_index(), Settings(), chosen, None)
    return fixes.fix_text(TEXT, lambda text: linter.lint_source(text, "k.py"), unsafe=False)


def test_fix_all_keeps_a_noqa_for_a_rule_only_the_editor_turns_off():
    outcome = _fix_all(ClientSettings(ignore=["ASC101"]))
    assert "# noqa: ASC101" in outcome.text  # CI still runs ASC101 and needs it
    assert "tl.cast(B, tl.int64)" in outcome.text  # the other fixes are applied
    assert all(d.code != "ASC003" for d in [*outcome.fixed, *outcome.remaining])


def test_a_noqa_for_a_rule_that_suppresses_nothing_is_still_stale():
    stale = TEXT.replace("# noqa: ASC101", "# noqa: ASC101, ASC301")
    linter = _editor_linter(rule_index(), Settings(), ClientSettings(ignore=["ASC101"]), None)
    (found,) = [d for d in linter.lint_source(stale, "k.py") if d.code == "ASC003"]
    assert "ASC301" in found.message and "ASC101" not in found.message


def test_without_editor_overrides_the_project_selection_decides_as_before():
    linter = _editor_linter(rule_index(), Settings(), ClientSettings(), None)
    assert linter.noqa_kept == ()
