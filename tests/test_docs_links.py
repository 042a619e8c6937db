"""Every documentation link ascendlint prints points at a page that exists in docs/, under the default docs-url
(the repository's docs/rules/CODE.md) and under a site built with mkdocs.yml (rules/CODE/)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlparse

import yaml

from ascendlint import docs_links
from ascendlint.registry import all_rules

ROOT = Path(__file__).resolve().parents[1]


def _repository_page(url: str) -> Path:
    """The file a default (repository blob) link names: everything after /blob/<branch>/."""
    path = urlparse(url).path
    assert "/blob/" in path, url
    return ROOT / path.split("/blob/", 1)[1].split("/", 1)[1]


def test_default_links_name_existing_rule_pages():
    for rule in all_rules():
        url = rule.url()
        assert url == docs_links.rule_url(rule.code)
        page = _repository_page(url)
        assert page.is_file(), f"{rule.code} links to {url}, but {page} does not exist"
        assert page.read_text(encoding="utf-8").startswith(f"# {rule.code} ")
    assert _repository_page(docs_links.home_url()) == ROOT / "docs" / "rules" / "index.md"


def test_the_default_template_comes_from_the_package_metadata():
    declared = docs_links.repository_url()
    assert docs_links.default_template() == f"{declared}/blob/main/docs/rules/{{code}}.md"
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'Repository = "{declared}"' in text


def test_mkdocs_site_has_a_page_for_every_rule_link():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs_dir = ROOT / config["docs_dir"]
    assert config.get("use_directory_urls", True), "docs-url examples assume rules/CODE/ addresses"
    for entry in config["nav"]:
        (target,) = entry.values()
        assert (docs_dir / target).is_file(), f"mkdocs.yml lists missing page {target}"
    site = "https://lint-docs.example.org/rules/{code}/"
    for rule in all_rules():
        relative = urlparse(docs_links.rule_url(rule.code, site)).path.strip("/").split("/", 1)[1]
        assert (docs_dir / "rules" / f"{relative}.md").is_file()


def test_links_in_a_real_run_resolve(cli):
    result = cli("check", str(ROOT / "examples"), "--format", "json", "--no-cache")
    urls = {item["url"] for item in json.loads(result.stdout)}
    assert urls, result.stderr
    for url in urls:
        assert _repository_page(url).is_file(), url
