"""Where a rule's documentation lives: the ``docs-url`` setting, a URL template with ``{code}``.

The default points at the rule pages in the repository (``docs/rules/ASC101.md``), which exist in every checkout
and are what ``python -m ascendlint.catalog.docs`` generates; the repository's address is the ``Repository`` entry
of the package's ``[project.urls]``. While the package names no repository there is no default link at all (a link
to a guessed address is worse than none): findings carry no URL and ``ascendlint rule CODE`` prints the page. A project
that publishes the documentation site (``mkdocs build`` with the repository's ``mkdocs.yml``) sets
``docs-url = "https://its.site/rules/{code}/"``.
"""

from __future__ import annotations

from functools import lru_cache

RULE_PAGE = "docs/rules/{code}.md"

_template: str | None = None
_known_repository: list = []  # [the URL] as the rule index stored it (a metadata lookup costs a distribution scan)


def remember_repository(url) -> None:
    """Use ``url`` as the declared repository (the rule index read it from the metadata when it was built; it
    stores whatever ``declared_repository_url`` gave, so a package that declares none is remembered too)."""
    _known_repository[:] = [url]


def repository_url() -> str | None:
    """The ``Repository`` URL the installed package declares (pyproject.toml ``[project.urls]``), if any."""
    return _known_repository[0] if _known_repository else declared_repository_url()


@lru_cache(maxsize=1)
def declared_repository_url() -> str | None:
    """``repository_url`` read from the installed package's metadata (None when it declares no repository)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata("ascendlint").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository" and url.strip():
            return url.strip().rstrip("/")
    return None


def default_template() -> str | None:
    repository = repository_url()
    return f"{repository}/blob/main/{RULE_PAGE}" if repository else None


def use_template(template: str | None) -> None:
    """Set the run's template (from the ``docs-url`` setting); None restores the default."""
    global _template
    _template = template


def rule_url(code: str, template: str | None = None) -> str | None:
    """The rule's page under the given, the run's or the default template; None when there is none."""
    chosen = template or _template or default_template()
    return chosen.replace("{code}", code) if chosen else None


def home_url() -> str | None:
    """The documentation's front page under the current template (the rule index)."""
    return rule_url("index")
