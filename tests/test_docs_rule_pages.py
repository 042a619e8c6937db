"""Rule pages read as ruff's do: four short sections for the reader of a finding (what it does, why is this bad,
example, use instead), then fix safety, options and the fine print ("How it decides"), on the page and in
`ascendlint rule CODE` alike."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from ascendlint.cli import main
from ascendlint.catalog.docs import DECIDES_HEADING, OPT_IN_HEADING, SHORT_HEADINGS, render_rule
from ascendlint.catalog.registry import all_rules, rule_by_code_or_name

MOST_LINES_OF_WHAT_IT_DOES = 5
# what comes before the first example: the title, the severity line, what it does and why it is bad
MOST_LINES_BEFORE_THE_EXAMPLE = 25


def _sections(page: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in page.splitlines():
        if line.startswith("## "):
            current = line
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def _headings(page: str) -> list[str]:
    return [line for line in page.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_what_it_does_is_one_short_paragraph(rule):
    body = [line for line in _sections(render_rule(rule))["## What it does"] if line.strip()]
    assert 1 <= len(body) <= MOST_LINES_OF_WHAT_IT_DOES, f"{rule.code}: {len(body)} lines; move cases to `decides`"
    assert "\n\n" not in rule.summary(), f"{rule.code}: the docstring holds one paragraph; the rest is `decides`"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_sections_come_in_order_short_part_first(rule):
    expected = ["## What it does", "## Why is this bad?"]
    if rule.INVALID:
        expected.append("## Example")
    if rule.VALID:
        expected.append("## Use instead")
    expected.append("## Fix safety")
    if rule.options:
        expected.append("## Options")
    if not rule.default and rule.opt_in_reason:
        expected.append(OPT_IN_HEADING)
    if rule.decides:
        expected.append(DECIDES_HEADING)
    assert _headings(render_rule(rule)) == expected


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_the_example_comes_early(rule):
    if not rule.INVALID:
        pytest.skip("no example")
    lines = render_rule(rule).splitlines()
    assert lines.index("## Example") <= MOST_LINES_BEFORE_THE_EXAMPLE, rule.code


def test_how_it_decides_holds_the_fine_print():
    rule = rule_by_code_or_name("ASC105")
    sections = _sections(render_rule(rule))
    decides = "\n".join(sections[DECIDES_HEADING])
    assert decides.strip() == textwrap.dedent(rule.decides).strip()
    for case in ("`min(..., cap)`", "TRITON_ALL_BLOCKS_PARALLEL", "65535 // n", "decoding"):
        assert case in decides and case not in "\n".join(sections["## What it does"])


def test_the_severity_line_stays_short_and_the_opt_in_reason_follows_the_short_part():
    for rule in all_rules():
        lines = render_rule(rule).splitlines()
        assert len(lines[2]) <= 200, f"{rule.code}: the severity line runs {len(lines[2])} characters"
        if not rule.default and rule.opt_in_reason:
            page = "\n".join(lines)
            assert page.index(OPT_IN_HEADING) > page.index("## Fix safety")
            assert rule.opt_in_reason[1:] in page


def test_a_rule_without_fine_print_has_no_how_it_decides_section():
    rule = rule_by_code_or_name("ASC001")
    assert not rule.decides
    assert DECIDES_HEADING not in render_rule(rule)


def test_fine_print_moved_from_why_stays_on_the_page_of_the_sweep_too():
    for code in ("ASC202", "ASC207"):
        page = render_rule(rule_by_code_or_name(code))
        why = "\n".join(_sections(page)["## Why is this bad?"])
        decides = "\n".join(_sections(page)[DECIDES_HEADING])
        assert "Magnitudes:" in decides and "Host facts:" in decides and "Magnitudes:" not in why


@pytest.mark.parametrize("code", ["ASC105", "ASC202", "ASC403", "ASC108"])
def test_rule_command_prints_the_short_part_first(code):
    result = CliRunner().invoke(main, ["rule", code])
    assert result.exit_code == 0
    out = result.output
    rule = rule_by_code_or_name(code)
    assert out.splitlines()[0] == f"# {rule.code} {rule.name}"
    assert _headings(out)[:4] == list(SHORT_HEADINGS)  # the short part first
    assert set(_headings(out)[4:]) >= {"## Fix safety", DECIDES_HEADING}  # the fine print after
    assert out == render_rule(rule)
