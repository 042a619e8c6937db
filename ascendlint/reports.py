"""What a rule hands the engine for one finding, before positions are resolved (the record ``rule`` and
``context`` share: a rule appends reports to its file's context, the engine turns them into diagnostics)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from .diagnostics import Applicability, Edit, Location, Severity

if TYPE_CHECKING:
    import libcst as cst

    from .text.locator import Locator

EditBuilder = Callable[["Locator"], Iterable[Edit]]


@dataclass
class Report:
    """A finding before positions are resolved (positions are computed only for files that report)."""

    rule: type  # the ``rule.Rule`` subclass that reported it
    node: cst.CSTNode | None
    message: str
    severity: Severity
    span: tuple[Location, Location] | None = None
    fix_message: str | None = None
    edits: EditBuilder | None = None
    applicability: Applicability | None = None
