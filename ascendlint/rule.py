"""The base class every rule derives from, in the spirit of fixit's self-contained rule classes.

A rule carries its own metadata (code, name, severity, fix safety, rationale) and its own examples; the examples
drive its tests and its documentation page. A rule inspects nodes and reports; it never formats output, reads
configuration files or applies edits.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from .diagnostics import Applicability, FixSafety, Location, Severity
from .reports import EditBuilder, Report

if TYPE_CHECKING:
    from .analysis.context import FileContext

__all__ = ["EditBuilder", "Invalid", "Report", "Rule", "Valid"]  # Report and EditBuilder live in ``reports``


@dataclass(frozen=True, init=False)
class Valid:
    """Code the rule must accept. ``doc=True`` marks the "use instead" example of the docs page."""

    written: str  # as written in the rule, indented; ``code`` is the example's text
    doc: bool = False

    def __init__(self, code: str, doc: bool = False) -> None:
        object.__setattr__(self, "written", code)
        object.__setattr__(self, "doc", doc)

    @property
    def code(self) -> str:
        return example_text(self.written)


@dataclass(frozen=True, init=False)
class Invalid:
    """Code the rule must flag ``count`` times; ``fixed`` is the source after applying the rule's fixes."""

    written: str  # as written in the rule, indented; ``code`` is the example's text
    count: int = 1
    written_fixed: str | None = None
    doc: bool = False

    def __init__(self, code: str, count: int = 1, fixed: str | None = None, doc: bool = False) -> None:
        object.__setattr__(self, "written", code)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "written_fixed", fixed)
        object.__setattr__(self, "doc", doc)

    @property
    def code(self) -> str:
        return example_text(self.written)

    @property
    def fixed(self) -> str | None:
        return None if self.written_fixed is None else example_text(self.written_fixed)


@functools.lru_cache(maxsize=None)
def example_text(written: str) -> str:
    """An example as the tests and the docs read it: dedented, without its first empty line. Worked out when first
    read, not when the rule is defined: a lint run imports every enabled rule, examples and all, and reads none."""
    return textwrap.dedent(written).lstrip("\n")


class Rule:
    """Base class. Subclasses define ``visit_<NodeClass>(self, node)`` methods and/or ``finish(self)``."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    severity: ClassVar[Severity]
    fix_safety: ClassVar[FixSafety] = FixSafety.NONE
    why: ClassVar[str]
    # "How it decides": the cases and exceptions that make the rule precise. The docstring says in a sentence or two
    # what the rule flags; this fine print goes on the page after the example, fix safety and options.
    decides: ClassVar[str] = ""
    fix_notes: ClassVar[str] = ""
    options_notes: ClassVar[str] = ""  # what each option does, for the docs page
    options: ClassVar[dict[str, object]] = {}
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []
    tool_rule: ClassVar[bool] = False  # emitted by the engine itself (ASC0xx), not by visiting nodes
    # Default rules hold 90% precision on real kernels; opt-in rules (advisories, and rules that cannot) run only
    # when a selector names them more precisely than the bare `ASC` prefix (`extend-select = ["ASC5"]`) or `ALL`.
    default: ClassVar[bool] = True
    opt_in_reason: ClassVar[str] = ""
    # CodeQL's precision word (very-high / high / medium / low) and membership of the `review` suite; None takes
    # what docs/precision.md measured (``ascendlint.catalog.suites.MEASURED``), or what the tier implies for a plugin
    precision: ClassVar[str | None] = None
    review: ClassVar[bool | None] = None
    # an optional extra the rule needs ("compiler"); without it the rule reports nothing and the CLI says so
    requires: ClassVar[str | None] = None

    def __init__(self, context: "FileContext", options: dict | None = None) -> None:
        self.context = context
        self.facts = context.facts
        self.settings = {**self.options, **(options or {})}

    # -- reporting ---------------------------------------------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        *,
        severity: Severity | None = None,
        fix_message: str | None = None,
        edits: EditBuilder | None = None,
        applicability: Applicability | None = None,
        span: tuple[Location, Location] | None = None,
    ) -> None:
        """Report a finding on ``node`` (or, with ``span``, on that range of the file: its first line is the line
        users see and where ``# noqa`` goes)."""
        if self._in_a_kernel_never_run(node):
            return
        self.context.reports.append(
            Report(
                rule=type(self),
                node=node,
                message=message or self.message,
                severity=severity or self.severity,
                fix_message=fix_message,
                edits=edits,
                applicability=applicability or _default_applicability(self.fix_safety),
                span=span,
            )
        )

    def _in_a_kernel_never_run(self, node: cst.CSTNode) -> bool:
        """Inside a kernel whose every launch in the module sits below an unconditional ``return`` or ``raise``:
        what it would do is never done."""
        never_run = self.facts.kernels_never_run if self.facts is not None else ()
        if not never_run:
            return False
        return id(node) in never_run or any(id(a) in never_run for a in self.facts.index.ancestors(node))

    def finish(self) -> None:
        """Called once after the walk, for rules that decide on the whole module."""

    @classmethod
    def environment(cls) -> str:
        """What besides the file and the options decides the findings (an installed tool's version): part of the
        result cache's key."""
        return ""

    # -- metadata ----------------------------------------------------------------------------------------------
    @classmethod
    def summary(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def url(cls) -> str | None:
        from .docs_links import rule_url

        return rule_url(cls.code)


def _default_applicability(safety: FixSafety) -> Applicability:
    if safety is FixSafety.SAFE:
        return Applicability.SAFE
    if safety is FixSafety.UNSAFE:
        return Applicability.UNSAFE
    return Applicability.DISPLAY_ONLY
