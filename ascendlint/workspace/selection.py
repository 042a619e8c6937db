"""Which rules run: ruff's select / extend-select / ignore by code or prefix, the most specific selector winning.

A suite name (``default``, ``review``, ``all``: ``suites.py``) selects the suite's members, as ``ALL`` selects every
rule, and is as little specific as ``ALL``: any code or prefix decides over it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Sequence

from ..catalog.suites import SUITES, member

if TYPE_CHECKING:
    from ..rule import Rule


class SelectionError(ValueError):
    pass


def _matches(selector: str, rule) -> bool:
    if selector in SUITES:
        return member(selector, rule)
    return rule.code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector in SUITES else len(selector)


def validate(selectors: Iterable[str], rules: Sequence[type[Rule]], origin: str) -> list[str]:
    """Upper-case the selectors and refuse any that names no rule."""
    normalised = []
    for raw in selectors:
        selector = raw.strip().upper()
        if not selector:
            continue
        if raw.strip() != selector and _CODE_SHAPED.fullmatch(selector) and any(r.code.startswith(selector)
                                                                                 for r in rules):
            raise SelectionError(f"Invalid rule selector `{raw.strip()}` in {origin}: rule codes are upper case "
                                 f"(`{selector}`), as in ruff")
        if not any(_matches(selector, rule) for rule in rules):
            raise SelectionError(f"Unknown rule selector `{raw.strip()}` in {origin}")
        normalised.append(selector)
    return normalised


_CODE_SHAPED = re.compile(r"[A-Z]+[0-9]*")
DEFAULT_PREFIX = "ASC"  # the default selection: every default rule, no opt-in rule


def resolve(
    rules: Sequence[type[Rule]],
    select: Sequence[str],
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[type[Rule]]:
    """The rules a selection enables: the most specific matching selector wins, as in ruff. An opt-in rule
    (``Rule.default`` false) is enabled only by ``ALL``, a suite it belongs to, or a selector more specific than the bare
    ``ASC``."""
    enabled = []
    enabling = [*select, *extend_select]
    for rule in rules:
        matching = [s for s in enabling if _matches(s, rule)]
        if not rule.default:
            matching = [s for s in matching if s != DEFAULT_PREFIX]
        best_on = max((_specificity(s) for s in matching), default=-1)
        best_off = max((_specificity(s) for s in ignore if _matches(s, rule)), default=-1)
        if best_on >= 0 and best_on > best_off:
            enabled.append(rule)
    return enabled


def override(
    rules: Sequence[type[Rule]],
    enabled: Sequence[type[Rule]],
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[type[Rule]]:
    """A later layer of selectors (the command line's, without ``--select``) over the rules an earlier layer
    (the configuration) enabled, as ruff layers them: a rule that no selector of this layer matches keeps its
    state; otherwise the layer's most specific selector decides, an ignore winning a tie (``--ignore ALL``
    turns everything off, ``--extend-select ASC2 --ignore ALL`` keeps only ASC2)."""
    on = set(r.code for r in enabled)
    for rule in rules:
        matching = [s for s in extend_select if _matches(s, rule)]
        if not rule.default:
            matching = [s for s in matching if s == "ALL" or s != DEFAULT_PREFIX]
        best_on = max((_specificity(s) for s in matching), default=-1)
        best_off = max((_specificity(s) for s in ignore if _matches(s, rule)), default=-1)
        if best_on < 0 and best_off < 0:
            continue
        if best_on > best_off:
            on.add(rule.code)
        else:
            on.discard(rule.code)
    return [rule for rule in rules if rule.code in on]


def unfixable(rules: Sequence[type[Rule]], fixable: Sequence[str], extend_fixable: Sequence[str] = (),
              unfixable: Sequence[str] = ()) -> list[str]:
    """The codes whose fixes are not applied: ruff's ``fixable`` (default ``ALL``), ``extend-fixable`` and
    ``unfixable``, the most specific selector winning and ``unfixable`` winning a tie."""
    found = []
    for rule in rules:
        best_on = max((_specificity(s) for s in [*fixable, *extend_fixable] if _matches(s, rule)),
                      default=-1)
        best_off = max((_specificity(s) for s in unfixable if _matches(s, rule)), default=-1)
        if not (best_on >= 0 and best_on > best_off):
            found.append(rule.code)
    return found


def without(rules: Sequence[type[Rule]], ignored: Sequence[str]) -> list[type[Rule]]:
    return [rule for rule in rules if not any(_matches(s, rule) for s in ignored)]
