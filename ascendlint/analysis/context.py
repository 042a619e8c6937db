"""Everything a rule may look at for one file, built once and shared by all rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from .module_facts import Kernel, ModuleFacts
from ..text.locator import Locator
from .walk import NodeIndex

if TYPE_CHECKING:
    from .values import KernelAnalysis
    from ..reports import Report


@dataclass
class FileContext:
    filename: str
    text: str
    module: cst.Module
    index: NodeIndex
    facts: ModuleFacts
    locator: Locator
    reports: list["Report"] = field(default_factory=list)
    _analyses: dict[int, "KernelAnalysis"] = field(default_factory=dict)
    _memo: dict = field(default_factory=dict)

    def release(self) -> None:
        """Drop the per-file objects that point back at the context (fix builders, memoised analyses).

        They form reference cycles through the context (and the analyses' caches through the facts); left alone,
        every file's tree would wait for the cyclic garbage collector, whose passes over those trees cost a tenth
        of a run.
        """
        self.reports.clear()
        self._memo.clear()
        self._analyses.clear()
        self.facts.release()

    def memo(self, key, build):
        """A per-file memo for shared analyses: ``build()`` runs once per key, whichever rule asks first."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = build()
            return value

    def analysis(self, kernel: Kernel) -> "KernelAnalysis":
        """The shared intra-kernel analysis of ``kernel`` (computed once per file, whichever rule asks first)."""
        from .values import KernelAnalysis

        found = self._analyses.get(id(kernel.node))
        if found is None:
            found = KernelAnalysis.of(kernel, self.facts, self.index)
            self._analyses[id(kernel.node)] = found
        return found
