"""The linted tree as one program: what each module's ``triton.jit`` helpers return and take, for its importers.

A helper defined in one module and called from a kernel in another (``from .utils import program_id64``) is
resolved through a *summary* the defining module exports when it is linted: the helper's parameters, which of
them are pointers and constexprs, and what it returns (integer width and magnitude, pointer or block pointer). The
runner lints defining modules first, so no file is parsed twice and nothing is imported or executed. A module
linted alone, or a helper from outside the linted tree, is simply unknown, as before.

Summaries are plain JSON values, so they travel between worker processes and into the result cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .module_names import resolve_relative
from ..text.lazy_regex import lazy

if TYPE_CHECKING:
    from .module_facts import ModuleFacts

_KEPT = None  # bits of a returned value an importer may rely on (set on first use, see _kept_bits)


@dataclass(frozen=True)
class HelperSummary:
    params: tuple[str, ...]
    returned: tuple[int, int] | None  # (traits, magnitude) of the returned value; None when it returns nothing
    pointer_params: frozenset[str]
    constexpr_params: frozenset[str]
    waits: bool = False  # it waits on other programs (a signal, a barrier, a spin loop): ASC408 at its launches
    blocks: dict | None = None  # the block pointer it returns on every path (block_pointers.returned_blocks)
    source: str = ""  # digest of the defining module's text and of what it imports: a rule reading the helper's
    # text (the compiler rules rebuild kernels with it) must not reuse an importer's cached findings once it changes

    def to_json(self) -> dict:
        return {
            "params": list(self.params),
            "returned": list(self.returned) if self.returned is not None else None,
            "pointers": sorted(self.pointer_params),
            "constexprs": sorted(self.constexpr_params),
            "waits": self.waits,
            "blocks": self.blocks,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict) -> "HelperSummary":
        returned = data.get("returned")
        return cls(
            params=tuple(str(p) for p in data["params"]),
            returned=(int(returned[0]), int(returned[1])) if returned is not None else None,
            pointer_params=frozenset(str(p) for p in data["pointers"]),
            constexpr_params=frozenset(str(p) for p in data["constexprs"]),
            waits=bool(data.get("waits", False)),
            blocks=data["blocks"] if isinstance(data.get("blocks"), dict) else None,
            source=str(data.get("source", "")),
        )


class ProjectFacts:
    """Helper summaries of the modules linted so far, by dotted module name."""

    def __init__(self, modules: dict[str, dict[str, HelperSummary]] | None = None) -> None:
        self.modules: dict[str, dict[str, HelperSummary]] = dict(modules or {})

    def add(self, module: str, summaries: dict[str, HelperSummary]) -> None:
        if summaries:
            self.modules[module] = summaries

    def helper(self, qualified: str) -> HelperSummary | None:
        """The summary of ``pkg.mod.helper``, or None when that module was not linted or has no such helper."""
        module, _, name = qualified.rpartition(".")
        return self.modules.get(module, {}).get(name)

    def for_imports(self, facts: "ModuleFacts") -> dict[str, HelperSummary]:
        """The summaries a module can see: its local names bound to helpers of other linted modules."""
        found = {}
        for local, qualified in facts.imported_symbols.items():
            summary = self.helper(qualified)
            if summary is not None:
                found[local] = summary
        return found


@dataclass
class ModuleInProject:
    """What the engine needs to lint one module as part of the tree: its dotted name, the summaries of the modules
    linted before it, and whether to export its own summaries (``exported`` is filled then)."""

    name: str | None
    is_package: bool
    project: ProjectFacts
    export: bool = False
    exported: dict[str, HelperSummary] | None = None
    seen: str = ""  # a stable text of the summaries this module can see (and whether it exports): for the cache
    cuda_only_importers: tuple[str, ...] = ()  # set when only CUDA-only modules import it (tree_order)
    # its jit functions that importers call and never launch: helpers, compiled within the importers' kernels
    helpers_of_importers: frozenset[str] = frozenset()


def summarise(facts: "ModuleFacts", waiting: frozenset[str] | set[str] = frozenset(),
              blocks: dict | None = None, text: str = "") -> dict[str, HelperSummary]:
    """Summaries of every jit function of a module (kernels can be called as helpers too); ``waiting``: the names
    of those that wait on other programs (``distributed.waiting_kernels``); ``blocks``: the block pointers some
    return (``block_pointers.returned_blocks``); ``text``: the module's source, digested with the sources of the
    helpers it imports."""
    from .values import KernelAnalysis

    source = source_digest(text, facts.imported_helpers.values())
    found = {}
    for name, kernel in facts.kernels.items():
        analysis = KernelAnalysis.of(kernel, facts, facts.index)
        returned = analysis.returned if _returns_value(analysis) else None
        found[name] = HelperSummary(
            params=tuple(kernel.params),
            returned=(returned[0] & _kept_bits(), returned[1]) if returned is not None else None,
            pointer_params=frozenset(analysis.pointer_params),
            constexpr_params=frozenset(n for n in kernel.params if kernel.is_constexpr_param(n)),
            waits=name in waiting,
            blocks=(blocks or {}).get(name),
            source=source,
        )
    return found


def source_digest(text: str, imported: Iterable[HelperSummary]) -> str:
    """A module's text and, through their own digests, the texts of the linted modules it imports helpers from."""
    import hashlib

    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12)
    for upstream in sorted({summary.source for summary in imported}):
        digest.update(b"\0" + upstream.encode())
    return digest.hexdigest()


def _returns_value(analysis) -> bool:
    import libcst as cst

    return any(type(node) is cst.Return and node.value is not None for node in analysis.nodes)


def _kept_bits() -> int:
    global _KEPT
    if _KEPT is None:
        from .value_lattice import Trait as T

        _KEPT = (T.WIDE | T.NARROW | T.POINTER | T.BLOCK | T.FLOAT | T.INT | T.DYNAMIC | T.TENSOR | T.INDEX
                 | T.PROGRAM | T.LOADED | T.TOKENS | T.TILE)
    return _KEPT


# -- module names and import order --------------------------------------------------------------------------------
def module_name(path: Path) -> str:
    """The dotted name a file is imported as: its stem, under every enclosing folder that is a package."""
    path = Path(path).resolve()
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    return ".".join(parts)


_FROM_IMPORT = lazy(r"^\s*from\s+(\.*)([\w.]*)\s+import\b", re.MULTILINE)
_PLAIN_IMPORT = lazy(r"^\s*import\s+([\w.]+)", re.MULTILINE)


_FROM_IMPORT_NAMES = lazy(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.MULTILINE)


def helper_uses(text: str, module: str, is_package: bool, sources: set[str]) -> dict[str, dict[str, bool]]:
    """Per module of ``sources`` imported from, the names this text imports and calls (``name(``), each with whether
    it also launches it (``name[``): a name only called is a jit function used as a helper inside this module's
    kernels. A line scan, like ``imported_modules``; names imported from other modules are not looked for."""
    found: dict[str, dict[str, bool]] = {}
    for dots, target, names in _FROM_IMPORT_NAMES.findall(text):
        source = resolve_relative(module, len(dots), target, is_package) if dots else target
        if source not in sources:
            continue
        for item in names.strip("()").split(","):
            parts = item.split()
            local = parts[2] if len(parts) == 3 and parts[1] == "as" else (parts[0] if parts else "")
            if not local.isidentifier():
                continue
            spelled = re.escape(local)
            launched = re.search(rf"(?<![\w.]){spelled}\s*\[", text) is not None
            if launched or re.search(rf"(?<![\w.]){spelled}\s*\(", text):
                found.setdefault(source, {})[parts[0]] = launched
    return found


def only_called(uses: "Iterable[dict[str, bool]]") -> frozenset[str]:
    """The names some importer calls and none launches, over the importers' ``helper_uses`` of one module."""
    called, launched = set(), set()
    for names in uses:
        for name, is_launched in names.items():
            (launched if is_launched else called).add(name)
    return frozenset(called - launched)


def imported_modules(text: str, module: str, is_package: bool) -> set[str]:
    """The modules a source text imports from, found by a line scan (no parse): enough to order the lint."""
    found = set()
    for dots, target in _FROM_IMPORT.findall(text):
        if dots:
            found.add(resolve_relative(module, len(dots), target, is_package))
        elif target:
            found.add(target)
    found.update(_PLAIN_IMPORT.findall(text))
    return found


def lint_order(modules: dict[str, set[str]]) -> list[list[str]]:
    """Waves of module names such that every module comes after the linted modules it imports from (a cycle is
    broken arbitrarily): each wave can be linted in parallel once the earlier waves are done."""
    remaining = {name: {d for d in deps if d in modules and d != name} for name, deps in modules.items()}
    waves: list[list[str]] = []
    while remaining:
        ready = sorted(name for name, deps in remaining.items() if not deps)
        if not ready:  # an import cycle: take the module that waits on the fewest others
            ready = [min(remaining, key=lambda name: (len(remaining[name]), name))]
        waves.append(ready)
        for name in ready:
            del remaining[name]
        for deps in remaining.values():
            deps.difference_update(ready)
    return waves


def summaries_from_json(data: dict) -> dict[str, HelperSummary]:
    return {name: HelperSummary.from_json(value) for name, value in data.items()}


def summaries_to_json(summaries: dict[str, HelperSummary]) -> dict:
    return {name: summary.to_json() for name, summary in sorted(summaries.items())}


def fingerprint(summaries: Iterable[tuple[str, HelperSummary]]) -> str:
    """A stable text of the summaries a module saw, for the result cache's key."""
    import json

    return json.dumps([[name, s.to_json()] for name, s in sorted(summaries)], sort_keys=True)
