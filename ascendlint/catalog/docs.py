"""A rule's documentation page, rendered from its own metadata and examples.

ruff's four short sections come first (what it does, why is this bad, example, use instead), for the reader who
just got a finding; then fix safety, options, and the fine print ("How it decides": the cases and exceptions). The
same text is printed by ``ascendlint rule CODE`` and stored as ``docs/rules/CODE.md``; a test keeps them equal.
"""

from __future__ import annotations

import textwrap

from ..rule import Rule
from .suites import measured, suites_of

_SAFETY_TEXT = {
    "safe": "This rule's fix is safe: `--fix` applies it.",
    "unsafe": "This rule's fix is unsafe (it may change behaviour): it is applied only with `--fix --unsafe-fixes`.",
    "none": "This rule has no automatic fix; the message says what to change.",
}


SHORT_HEADINGS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")
OPT_IN_HEADING = "## Why opt-in"
DECIDES_HEADING = "## How it decides"


def _example(rule: type[Rule], kind: str) -> str | None:
    examples = rule.INVALID if kind == "invalid" else rule.VALID
    chosen = next((e for e in examples if e.doc), examples[0] if examples else None)
    return chosen.code if chosen is not None else None


def render_rule(rule: type[Rule]) -> str:
    parts = [
        f"# {rule.code} {rule.name}",
        "",
        f"Severity: **{rule.severity.value}**. Fix: **{rule.fix_safety.value}**. {_tier_text(rule)}",
        "",
        "## What it does",
        rule.summary(),
        "",
        "## Why is this bad?",
        textwrap.dedent(rule.why).strip(),
    ]
    bad = _example(rule, "invalid")
    if bad is not None:
        parts += ["", "## Example", "```python", bad.rstrip("\n"), "```"]
    good = _example(rule, "valid")
    if good is not None:
        parts += ["", "## Use instead", "```python", good.rstrip("\n"), "```"]
    parts += ["", "## Fix safety", _SAFETY_TEXT[rule.fix_safety.value]]
    if rule.fix_notes:
        parts += [textwrap.dedent(rule.fix_notes).strip()]
    if rule.options:
        parts += ["", "## Options", f"Set under `[tool.ascendlint.{rule.name}]`:"]
        parts += [f"- `{key}` (default `{value!r}`)" for key, value in rule.options.items()]
        if rule.options_notes:
            parts += ["", textwrap.dedent(rule.options_notes).strip()]
    if not rule.default and rule.opt_in_reason:  # the measured figures behind the tier: fine print, not the header
        parts += ["", OPT_IN_HEADING, _sentence(rule.opt_in_reason)]
    if rule.decides:
        parts += ["", DECIDES_HEADING, textwrap.dedent(rule.decides).strip()]
    return "\n".join(parts) + "\n"


def _sentence(text: str) -> str:
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def _tier_text(rule: type[Rule]) -> str:
    suites = f"Suites: {', '.join(f'`{name}`' for name in suites_of(rule))}; precision: **{measured(rule).precision}**."
    if rule.default:
        return f"Enabled by default. {suites}"
    reason = f' (see "{OPT_IN_HEADING[3:]}" below)' if rule.opt_in_reason else ""
    return f"Opt-in{reason}: enable it with `extend-select = [\"{rule.code}\"]`. {suites}"


def render_index(rules) -> str:
    lines = [
        "# Rules",
        "",
        "Default rules hold 90% precision on real kernels and run unless ignored. Opt-in rules (performance",
        "advisories, and rules or cases that cannot hold that precision) run only when selected by their code or a",
        "prefix more specific than `ASC`, e.g. `extend-select = [\"ASC5\"]`, or by `ALL`.",
        "",
        "Suites, selected by name (`select = [\"review\"]`, `--select review`): `default` (the default rules),",
        "`review` (the default rules and the opt-in rules that catch real upstream fixes at 70% precision or more on",
        "code no rule was tuned on: the grid-size and int32-overflow rules) and `all`. Precision is CodeQL's scale",
        "(very-high: 90% or more, high: 70%, medium: 50%, low: less, or too few findings to say), from the figures of",
        "docs/precision.md.",
        "",
        "| Code | Name | Severity | Fix | Default | Suites | Precision | Summary |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for rule in rules:
        first = rule.summary().split("\n\n")[0].replace("\n", " ")
        tier = "yes" if rule.default else "opt-in"
        suites = ", ".join(suites_of(rule))
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity.value} | {rule.fix_safety.value} "
            f"| {tier} | {suites} | {measured(rule).precision} | {first} |"
        )
    return "\n".join(lines) + "\n"


def write_docs(folder) -> list:
    """Regenerate ``docs/rules/``: one page per rule and the index. Returns the paths written."""
    from pathlib import Path

    from .registry import all_rules

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    rules = all_rules()
    for rule in rules:
        path = folder / f"{rule.code}.md"
        path.write_text(render_rule(rule), encoding="utf-8")
        written.append(path)
    index = folder / "index.md"
    index.write_text(render_index(rules), encoding="utf-8")
    written.append(index)
    return written


if __name__ == "__main__":  # python -m ascendlint.catalog.docs [folder]
    import sys

    for written_path in write_docs(sys.argv[1] if len(sys.argv) > 1 else "docs/rules"):
        print(written_path)
