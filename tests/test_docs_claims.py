"""Claims of the guides that drifted from the truth: a link to a folder (which a built site serves as a 404),
the offline install recipe naming every dependency, the SARIF Multitool claim naming the warning the tests
expect, and the `ub` command documented where users look first."""

from __future__ import annotations

import re
import sys

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOCS = REPO / "docs"
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_no_guide_links_to_a_folder():
    for page in [REPO / "README.md", *DOCS.glob("*.md")]:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            resolved = (page.parent / target).resolve()
            assert not resolved.is_dir(), f"{page.name} links to the folder {target}: a 404 on the built site"


def test_the_offline_install_recipe_names_every_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=;!\[ ]", dependency, maxsplit=1)[0] for dependency in project["dependencies"]}
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    recipe = text[text.index("Without any index"):text.index("**Trying the hooks from a checkout.**")]
    assert {name for name in names if name not in recipe} == set()
    assert "pip download" in recipe  # the dependencies' own dependencies, collected rather than listed


def test_the_sarif_multitool_claim_names_the_expected_warning():
    from tests.output.test_sarif import NO_ADDRESS_YET

    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    claim = text[text.index("Microsoft's SARIF Multitool (`validate"):]
    claim = claim[: claim.index("\n\n")]
    assert "no error or warning" not in claim
    assert all(rule in claim for rule in NO_ADDRESS_YET)


def test_the_ub_command_is_in_the_readme_and_getting_started():
    for page in (REPO / "README.md", DOCS / "getting-started.md"):
        assert "ascendlint ub " in page.read_text(encoding="utf-8"), page.name
