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

from ..analysis.project import (
    ModuleInProject,
    ProjectFacts,
    fingerprint,
    helper_uses,
    imported_modules,
    only_called,
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
    importers: tuple[int, ...] = ()  # positions of the linted modules that import from this one
    helpers_of_importers: frozenset[str] = frozenset()  # its names importers call and never launch


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
        helpers = ",".join(sorted(member.helpers_of_importers))
        return ModuleInProject(member.name, member.is_package, project, export=member.export,
                               seen=f"{'export:' if member.export else ''}{seen}|helpers:{helpers}",
                               helpers_of_importers=member.helpers_of_importers)


def cuda_only_through_importers(tree: TreePlan, files: Sequence[tuple[Path, bytes]], platform_of) -> dict:
    """Position -> the CUDA-only modules that import it, for each module of the tree that shows no evidence of its
    own (neither GPU-only nor NPU) and that only CUDA-only modules import (a GPU kernel's backward kept in its own
    module): it is CUDA-only too. ``platform_of(path, data, complete)`` classifies one file (None: CUDA-only
    modules are linted anyway). Followed through chains of such modules."""
    verdicts: dict = {}

    def verdict(position: int):
        if position not in verdicts:
            path, data = files[position]
            verdicts[position] = platform_of(path, data, True)
        return verdicts[position]

    found: dict[int, tuple[str, ...]] = {}
    changed = True
    while changed:
        changed = False
        for position, member in tree.members.items():
            if position in found or not member.export or not member.importers:
                continue
            own = verdict(position)
            if own is None or own.gpu or own.npu:
                continue
            if all(i in found or (verdict(i) is not None and verdict(i).cuda_only) for i in member.importers):
                found[position] = tuple(sorted(str(files[i][0]) for i in member.importers))
                changed = True
    return found


def linked_modules(kernels: Sequence[tuple[Path, bytes]], others: Sequence[tuple[Path, bytes]]) -> list[int]:
    """Positions in ``others`` (files that never mention triton) of the modules that import from one of
    ``kernels`` (the files that do): ``from .kernels import add_kernel`` then ``add_kernel[grid](...)`` launches a
    Triton kernel without spelling its name. Found by the same line scan as the lint order, and only in files
    that name one of those modules at all, so a tree of unrelated Python files costs one byte search each."""
    names = set()
    for path, _ in kernels:
        if is_notebook(str(path), path):
            continue
        try:
            name = module_name(path)
        except OSError:
            continue
        if name:
            names.add(name)
    if not names:
        return []
    import re

    # the last part of each name: ``from .kernels import``, ``from pkg.kernels import``, ``import pkg.kernels``
    # (``from . import kernels`` names the package: such a module is linked when the package's own module is one)
    words = sorted({name.rpartition(".")[2] for name in names}, key=len, reverse=True)
    mentions = re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in words) + rb")\b")
    found = []
    for position, (path, data) in enumerate(others):
        if b"import" not in data or not mentions.search(data) or is_notebook(str(path), path):
            continue
        try:
            name = module_name(path)
        except OSError:
            continue
        if not name:
            continue
        imports = imported_modules(data.decode("utf-8", errors="replace"), name, Path(path).name == "__init__.py")
        if (imports - {name}) & names:
            found.append(position)
    return found


def plan(files: Sequence[tuple[Path, bytes]]) -> TreePlan:
    """Waves over ``files`` (path and bytes of each file that may hold a kernel)."""
    names: dict[int, tuple[str, bool, set[str]]] = {}
    texts: dict[int, str] = {}
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
        text = texts[position] = data.decode("utf-8", errors="replace")
        names[position] = (name, is_package, imported_modules(text, name, is_package))
    counts = Counter(name for name, _, _ in names.values())
    unique = {name for name, count in counts.items() if count == 1}
    imported = {module for position, (name, _, imports) in names.items() for module in imports if module != name}
    providers = unique & imported
    if not providers:
        return TreePlan(waves=[list(range(len(files)))])

    position_of = {name: position for position, (name, _, _) in names.items() if name in providers}
    members: dict[int, Member] = {}
    importers: dict[str, list[int]] = {}
    uses: dict[str, list[dict[str, bool]]] = {}
    for position, (name, is_package, imports) in names.items():
        provided = (imports & providers) - {name}
        for module in provided:
            importers.setdefault(module, []).append(position)
        if provided:
            for module, used_names in helper_uses(texts[position], name, is_package, provided).items():
                uses.setdefault(module, []).append(used_names)
    for position, (name, is_package, imports) in names.items():
        used = tuple(sorted((imports & providers) - {name}))
        export = name in providers
        if used or export:
            members[position] = Member(name, is_package, used, export, tuple(importers.get(name, ())),
                                       only_called(uses.get(name, ())))
    order = lint_order({name: set(members[position_of[name]].providers) for name in providers})
    waves = [[position_of[name] for name in wave] for wave in order]
    waves.append([position for position in range(len(files)) if position not in set(position_of.values())])
    return TreePlan(waves=waves, members=members)
