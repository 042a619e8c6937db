"""The rule pages in docs/rules/ are exactly what the rules' metadata renders (regenerate:
python -m ascendlint.catalog.docs), and the guides and CI recipes agree with the code: links, rule codes, configuration keys, command lines, hooks."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from ascendlint import output
from ascendlint.workspace import selection
from ascendlint.cli import check
from ascendlint.workspace.config import LIST_KEYS, BOOL_KEYS, settings_from_table
from ascendlint.catalog.docs import render_index, render_rule
from ascendlint.catalog.registry import all_rules

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_page_matches_rule_metadata(rule):
    page = DOCS / f"{rule.code}.md"
    assert page.exists(), f"missing {page}; run python -m ascendlint.catalog.docs"
    assert page.read_text(encoding="utf-8") == render_rule(rule)


def test_rule_index_lists_exactly_the_registered_rules():
    assert (DOCS / "index.md").read_text(encoding="utf-8") == render_index(all_rules())
    pages = {p.stem for p in DOCS.glob("ASC*.md")}
    assert pages == {r.code for r in all_rules()}


# -- the guides (docs/*.md) and the CI recipes (docs/ci/) -----------------------------------------------------

ROOT = DOCS.parents[1]
GUIDES = [ROOT / "docs" / name for name in ("index.md", "getting-started.md", "configuration.md", "ci.md")]
RECIPES = sorted((ROOT / "docs" / "ci").glob("*.y*ml"))
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"\bASC[0-9]{0,3}\b")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@pytest.mark.parametrize("page", GUIDES, ids=lambda p: p.name)
def test_guide_links_point_at_existing_files_and_headings(page):
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path) if path else page
        assert resolved.exists(), f"{page.name}: broken link {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", resolved.read_text(encoding="utf-8"), re.MULTILINE)
            assert anchor in {_slug(h) for h in headings}, f"{page.name}: no heading for #{anchor}"


def test_index_links_the_rule_index():
    assert "](rules/index.md)" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", [*GUIDES, *RECIPES], ids=lambda p: p.name)
def test_every_rule_code_a_page_mentions_exists(page):
    codes = {rule.code for rule in all_rules()}
    for mentioned in set(_CODE.findall(page.read_text(encoding="utf-8"))):
        assert any(code.startswith(mentioned) for code in codes), f"{page.name} mentions unknown {mentioned}"


def test_configuration_page_documents_every_key_and_rule_option():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for key in (*LIST_KEYS, *BOOL_KEYS, "per-file-ignores", "extend-per-file-ignores", "respect-gitignore", "extend",
                "docs-url", "output-format", "cache-dir"):
        assert f"### `{key}`" in text, f"configuration.md does not document `{key}`"
    for rule in all_rules():
        for option in rule.options:
            row = f"[{rule.code}](rules/{rule.code}.md) {rule.name} | `{option}` | `{rule.options[option]!r}` |"
            assert row in text, f"configuration.md does not document option `{option}` of {rule.code}"


def test_configuration_examples_are_accepted(tmp_path):
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
    assert len(blocks) >= 8
    for block in blocks:
        table = tomllib.loads(block)
        if "tool" in table:
            settings_from_table(table["tool"]["ascendlint"], tmp_path / "pyproject.toml", all_rules())
        else:
            settings_from_table(table, tmp_path / "ascendlint.toml", all_rules())


def _documented_commands() -> list[tuple[str, str]]:
    found = []
    for page in [*GUIDES, *RECIPES]:
        text = page.read_text(encoding="utf-8").replace("\\\n", " ")
        for match in re.finditer(r"ascendlint check[^\n`|]*", text):
            command = re.split(r"\s#", match.group(0))[0]
            found.append((page.name, command.strip()))
    return found


@pytest.mark.parametrize("page, command", _documented_commands())
def test_documented_check_commands_are_valid(page, command):
    args = shlex.split(command)[2:]
    context = check.make_context("check", args)
    params = context.params
    assert params["output_format"] in (None, *output.names())  # None: the configuration's, else `full`
    for key in ("select", "extend_select", "ignore"):
        values = [v.strip() for value in params[key] for v in value.split(",") if v.strip()]
        selection.validate(values, all_rules(), key)


def test_recipes_are_valid_yaml_and_use_the_published_hooks():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook_ids = {hook["id"] for hook in hooks}
    assert hook_ids == {"ascendlint", "ascendlint-fix"}
    for hook in hooks:
        assert hook["language"] == "python" and hook["types_or"] == ["python", "jupyter"]
        assert "--force-exclude" in hook["entry"].split()
        check.make_context("check", shlex.split(hook["entry"])[2:])
    for recipe in RECIPES:
        document = yaml.safe_load(recipe.read_text(encoding="utf-8"))
        assert document, recipe.name
    user_config = yaml.safe_load((ROOT / "docs" / "ci" / "pre-commit-config.yaml").read_text(encoding="utf-8"))
    used = {hook["id"] for repo in user_config["repos"] for hook in repo["hooks"]}
    assert used <= hook_ids
    for repo in user_config["repos"]:  # the documented form needs no address: ascendlint from the environment
        assert repo["repo"] == "local"
        for hook in repo["hooks"]:
            assert hook["language"] == "system" and hook["types_or"] == ["python", "jupyter"]
            assert "--force-exclude" in hook["entry"].split()
            check.make_context("check", shlex.split(hook["entry"])[2:])


def test_no_placeholder_address_in_the_docs():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs" / "ci").iterdir())]
    assert [page.name for page in pages if "OWNER" in page.read_text(encoding="utf-8")] == []
