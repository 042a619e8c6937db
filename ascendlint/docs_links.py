"""Where a rule's documentation lives: the ``docs-url`` setting, a URL template with ``{code}``.

The default points at the rule pages in the repository (``docs/rules/ASC101.md``), which exist in every checkout
and are what ``python -m ascendlint.docs`` generates; the repository's address is the ``Repository`` entry of the
package's ``[project.urls]``. A project that publishes the documentation site (``mkdocs build`` with the
repository's ``mkdocs.yml``) sets ``docs-url = "https://its.site/rules/{code}/"``.
"""

from __future__ import annotations

from functools import lru_cache

RULE_PAGE = "docs/rules/{code}.md"
FALLBACK_REPOSITORY = "https://github.com/OWNER/ascendlint"

_template: str | None = None
_known_repository: list = []  # [the URL] as the rule index stored it (a metadata lookup costs a distribution scan)


def remember_repository(url) -> None:
    """Use ``url`` as the declared repository (the rule index read it from the metadata when it was built; it
    stores whatever ``declared_repository_url`` gave, so a package that declares none is remembered too)."""
    _known_repository[:] = [url]


def repository_url() -> str:
    """The ``Repository`` URL the installed package declares (pyproject.toml ``[project.urls]``)."""
    return _known_repository[0] if _known_repository else declared_repository_url()


@lru_cache(maxsize=1)
def declared_repository_url() -> str:
    """``repository_url`` read from the installed package's metadata."""
    try:
        from importlib.metadata import PackageNotFoundError, metadata
    except ImportError:  # pragma: no cover
        return FALLBACK_REPOSITORY
    try:
        entries = metadata("ascendlint").get_all("Project-URL") or []
    except PackageNotFoundError:
        return FALLBACK_REPOSITORY
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "repository" and url.strip():
            return url.strip().rstrip("/")
    return FALLBACK_REPOSITORY


def default_template() -> str:
    return f"{repository_url()}/blob/main/{RULE_PAGE}"


def use_template(template: str | None) -> None:
    """Set the run's template (from the ``docs-url`` setting); None restores the default."""
    global _template
    _template = template


def rule_url(code: str, template: str | None = None) -> str:
    return (template or _template or default_template()).replace("{code}", code)


def home_url() -> str:
    """The documentation's front page under the current template (the rule index)."""
    return rule_url("index")
