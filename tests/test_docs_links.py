"""Documentation links: none while the package declares no repository (never a placeholder address), the
repository's docs/rules/CODE.md once it does, and a site built with mkdocs.yml (rules/CODE/) under `docs-url`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

from ascendlint import docs_links, output
from ascendlint.catalog.registry import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SITE = "https://lint-docs.example.org/rules/{code}/"


def _repository_page(url: str) -> Path:
    """The file a default (repository blob) link names: everything after /blob/<branch>/."""
    path = urlparse(url).path
    assert "/blob/" in path, url
    return ROOT / path.split("/blob/", 1)[1].split("/", 1)[1]


@pytest.fixture
def declared_repository(monkeypatch):
    """The links as they are once `[project.urls]` names a repository."""
    monkeypatch.setattr(docs_links, "repository_url", lambda: "https://code.example.org/team/ascendlint")


def test_the_default_template_follows_the_package_metadata():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("urls", {})
    if "Repository" in declared:
        assert docs_links.default_template() == f"{declared['Repository']}/blob/main/docs/rules/{{code}}.md"
    else:
        assert docs_links.repository_url() is None
        assert docs_links.default_template() is None
        assert all(rule.url() is None for rule in all_rules()) and docs_links.home_url() is None


def test_declared_repository_links_name_existing_rule_pages(declared_repository):
    for rule in all_rules():
        url = rule.url()
        assert url == docs_links.rule_url(rule.code)
        page = _repository_page(url)
        assert page.is_file(), f"{rule.code} links to {url}, but {page} does not exist"
        assert page.read_text(encoding="utf-8").startswith(f"# {rule.code} ")
    assert _repository_page(docs_links.home_url()) == ROOT / "docs" / "rules" / "index.md"


class _MkdocsLoader(yaml.SafeLoader):
    """mkdocs.yml names Python objects (``!!python/name:...``, superfences' mermaid fence): read them as names."""


_MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)


def test_mkdocs_site_has_a_page_for_every_rule_link():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_MkdocsLoader)
    docs_dir = ROOT / config["docs_dir"]
    assert config.get("use_directory_urls", True), "docs-url examples assume rules/CODE/ addresses"
    for entry in config["nav"]:
        (target,) = entry.values()
        assert (docs_dir / target).is_file(), f"mkdocs.yml lists missing page {target}"
    for rule in all_rules():
        relative = urlparse(docs_links.rule_url(rule.code, SITE)).path.strip("/").split("/", 1)[1]
        assert (docs_dir / "rules" / f"{relative}.md").is_file()


def test_links_in_a_real_run_follow_docs_url(cli, tmp_path):
    (tmp_path / "ascendlint.toml").write_text(f'docs-url = "{SITE}"\n', encoding="utf-8")
    (tmp_path / "k.py").write_text((ROOT / "examples" / "vector_add_traps.py").read_text(encoding="utf-8"))
    result = cli("check", "k.py", "--format", "json", "--no-cache", cwd=tmp_path)
    urls = {item["url"] for item in json.loads(result.stdout)}
    assert urls and all(url.startswith("https://lint-docs.example.org/rules/ASC") for url in urls), result.stderr


@pytest.mark.parametrize("name", output.names())
def test_no_output_format_carries_a_placeholder_address(cli, name):
    result = cli("check", str(ROOT / "examples"), "--format", name, "--no-cache")
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip(), name
    assert "OWNER" not in result.stdout and "OWNER" not in result.stderr
    if docs_links.repository_url() is None:
        assert "/blob/main/docs/rules/" not in result.stdout


def test_text_output_points_at_the_rule_command_when_there_is_no_link(cli):
    result = cli("check", str(ROOT / "examples" / "vector_add_traps.py"), "--no-cache")
    if docs_links.repository_url() is None:
        assert "= info: ascendlint rule ASC" in result.stdout
