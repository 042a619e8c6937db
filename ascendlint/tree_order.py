"""The order to lint a tree in, so that a module's ``triton.jit`` helpers are summarised before their importers.

Only a module that another linted module imports from (a *provider*) exports summaries. Providers are linted
first, in waves (a provider that imports another provider waits for it); every other file is linted in the last
wave, all together. Imports are found by a line scan of the bytes already read, so nothing is parsed twice. A
tree in which no linted module imports another is a single wave and is linted exactly as files linted alone.

A module name that two linted files share (two scripts called ``utils.py`` in folders that are not packages) is
ambiguous: it provides nothing, so no file is linted with another file's helpers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .analysis.project import (
    ModuleInProject,
    ProjectFacts,
    fingerprint,
    imported_modules,
    lint_order,
    module_name,
)
from .notebook_lint import is_notebook


@dataclass(frozen=True)
class Member:
    """A linted Python module as part of the tree."""

    name: str
    is_package: bool
    providers: tuple[str, ...]  # the linted modules it imports from that export summaries
    export: bool  # another linted module imports from this one


@dataclass
class TreePlan:
    waves: list[list[int]]  # positions into the planned files, wave by wave
    members: dict[int, Member] = field(default_factory=dict)  # files linted as part of the tree, by position

    def unit(self, position: int, project: ProjectFacts) -> ModuleInProject | None:
        """What the engine needs to lint this file as part of the tree, or None to lint it alone."""
        member = self.members.get(position)
        if member is None:
            return None
        seen = fingerprint(
            (f"{provider}.{name}", summary)
            for provider in member.providers
            for name, summary in project.modules.get(provider, {}).items()
        )
        return ModuleInProject(member.name, member.is_package, project, export=member.export,
                               seen=f"{'export:' if member.export else ''}{seen}")


def plan(files: Sequence[tuple[Path, bytes]]) -> TreePlan:
    """Waves over ``files`` (path and bytes of each file that may hold a kernel)."""
    names: dict[int, tuple[str, bool, set[str]]] = {}
    for position, (path, data) in enumerate(files):
        if is_notebook(str(path), path):
            continue
        try:
            name = module_name(path)
        except OSError:
            continue
        if not name:
            continue
        is_package = Path(path).name == "__init__.py"
        text = data.decode("utf-8", errors="replace")
        names[position] = (name, is_package, imported_modules(text, name, is_package))
    counts = Counter(name for name, _, _ in names.values())
    unique = {name for name, count in counts.items() if count == 1}
    imported = {module for position, (name, _, imports) in names.items() for module in imports if module != name}
    providers = unique & imported
    if not providers:
        return TreePlan(waves=[list(range(len(files)))])

    position_of = {name: position for position, (name, _, _) in names.items() if name in providers}
    members: dict[int, Member] = {}
    for position, (name, is_package, imports) in names.items():
        used = tuple(sorted((imports & providers) - {name}))
        export = name in providers
        if used or export:
            members[position] = Member(name, is_package, used, export)
    order = lint_order({name: set(members[position_of[name]].providers) for name in providers})
    waves = [[position_of[name] for name in wave] for wave in order]
    waves.append([position for position in range(len(files)) if position not in set(position_of.values())])
    return TreePlan(waves=waves, members=members)
