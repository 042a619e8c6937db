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


def fix_applies(diagnostic: "Diagnostic", unsafe_fixes: bool) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when asked) would apply the finding's fix, as ruff marks `[*]`."""
    fix = diagnostic.fix
    if fix is None:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe_fixes and fix.applicability is Applicability.UNSAFE)


@dataclass(frozen=True, order=True)
class Location:
    """1-based row and column (columns count characters, as ruff does)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets into the decoded text) by ``content``.

    ``original`` is the text the rule saw under that range when it built the edit (filled in by the engine): an
    edit is applied only where the file still holds exactly that text.
    """

    start: int
    end: int
    content: str
    original: str | None = None


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
    cell: int | None = None  # in a notebook: the 1-based cell, and the positions are relative to that cell

    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location.row, self.location.column, self.code, self.message)

    def where(self) -> str:
        """``file:row:col``, or ruff's ``file:cell N:row:col`` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.filename}:{cell}{self.location.row}:{self.location.column}"


def diagnostic_to_record(diagnostic: Diagnostic) -> dict:
    """A plain-JSON form (for the cache: plain data, never pickles, so a cache folder cannot run code)."""
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "location": [diagnostic.location.row, diagnostic.location.column],
        "end_location": [diagnostic.end_location.row, diagnostic.end_location.column],
        "fix": None if fix is None else {
            "message": fix.message,
            "applicability": fix.applicability.value,
            "edits": [[e.start, e.end, e.content, e.original] for e in fix.edits],
        },
        "noqa_row": diagnostic.noqa_row,
        "url": diagnostic.url,
        "extra": diagnostic.extra,
        **({"cell": diagnostic.cell} if diagnostic.cell is not None else {}),
    }


def diagnostic_from_record(record: dict, filename: str) -> Diagnostic:
    fix = record["fix"]
    return Diagnostic(
        code=record["code"],
        name=record["name"],
        severity=Severity(record["severity"]),
        message=record["message"],
        filename=filename,
        location=Location(*record["location"]),
        end_location=Location(*record["end_location"]),
        fix=None if fix is None else Fix(
            message=fix["message"],
            applicability=Applicability(fix["applicability"]),
            edits=tuple(Edit(*edit) for edit in fix["edits"]),
        ),
        noqa_row=record["noqa_row"],
        url=record["url"],
        extra=record.get("extra") or {},
        cell=record.get("cell"),
    )
