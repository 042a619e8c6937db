"""The record every part of ascendlint meets at: a finding, its location and its optional fix."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """How bad a finding is: errors break compile/results/progress, warnings very likely do, advisories cost speed."""

    ERROR = "error"
    WARNING = "warning"
    ADVISORY = "advisory"


class Applicability(str, enum.Enum):
    """Ruff's fix-safety model: safe fixes run under --fix, unsafe ones need --unsafe-fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


class FixSafety(str, enum.Enum):
    """What a rule promises about its fixes (documentation metadata)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


@dataclass(frozen=True, order=True)
class Location:
    """1-based row and column (columns count characters, as ruff does)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets into the decoded text) by ``content``."""

    start: int
    end: int
    content: str


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]


@dataclass
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Fix | None = None
    noqa_row: int | None = None
    url: str | None = None
    extra: dict = field(default_factory=dict)

    def sort_key(self) -> tuple:
        return (self.filename, self.location.row, self.location.column, self.code, self.message)
