"""What linting one file gives back, and the options that decide it: the records the runner and notebook support
share (both build results; neither needs the other to describe them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixed: list[Diagnostic] = field(default_factory=list)
    rejected_fixes: list[Diagnostic] = field(default_factory=list)
    diff: str = ""
    error: str | None = None  # the file could not be read or written: nothing about it is known
    text: str | None = None  # the (fixed) text, kept only when there are findings to show in context
    source_digest: str | None = None  # digest of the bytes the fixes were computed from (set when fixes change them)
    sources: dict[str, str] = field(default_factory=dict)  # a notebook's cell texts, by output.source_key
    summaries: dict | None = None  # JSON summaries of the module's jit helpers, for its importers (tree_order)
    unfixed_text: str | None = None  # the text as read, while fixed bytes wait to be written (--fix)


@dataclass
class Options:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    # files that were symbolic links when found (named on the command line): fixes are written to their targets.
    # Any other file that is a link when its fixes are written was swapped for one since: nothing is written.
    links_named: frozenset = frozenset()
