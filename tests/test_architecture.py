"""The packages mirror the pipeline, and docs/architecture.md draws them as they are.

Read from the import statements (``tests/test_import_graph.py``), nothing imported: the command line alone speaks
click, the linter takes settings from discovery and never reads configuration or walks folders itself, and the
graph between the packages has no circle and is the one the architecture page's diagram draws: every arrow is an
import, and every import is an arrow or follows arrows (a diagram of all 60-odd imports would not be read; the ones
left out are implied, so what depends on what can be read off the page exactly).
"""

from __future__ import annotations

import ast
import re

from tests.test_import_graph import ROOT, circles, import_graph, project_modules

ARCHITECTURE = ROOT / "docs" / "architecture.md"
ENTRY_POINTS = ("ascendlint", "ascendlint.__main__")  # the package itself (its version) and `python -m`


def node_of(module: str) -> str | None:
    """The diagram's box for a module: its package below ``ascendlint`` (``linter``, ``checks``), or for the rule API
    that stays at the top (``rule``, ``diagnostics``, ...) the module itself."""
    if module in ENTRY_POINTS:
        return None
    return module.split(".")[1]


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = node_of(module)
        if source is None:
            continue
        graph.setdefault(source, set())
        for target in targets:
            drawn = node_of(target)
            if drawn is not None and drawn != source:
                graph[source].add(drawn)
    return graph


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def transitive_reduction(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Each edge a -> b that no longer path a -> c -> ... -> b makes redundant (unique for a graph without circles)."""
    kept = set()
    for source, targets in graph.items():
        for target in targets:
            if not any(target in reachable(graph, other) for other in targets - {target}):
                kept.add((source, target))
    return kept


def diagram_edges(text: str) -> set[tuple[str, str]]:
    blocks = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the architecture page has one mermaid diagram"
    return {(a, b) for a, b in re.findall(r"^\s*(\w+)\s*-->\s*(\w+)\s*$", blocks[0], re.M)}


def _imports_of(path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append(node.module)
    return found


def test_only_the_command_line_imports_click():
    speaking = sorted(name for name, path in project_modules().items()
                      if any(imported.split(".")[0] == "click" for imported in _imports_of(path)))
    assert speaking and all(name == "ascendlint.cli" or name.startswith("ascendlint.cli.") for name in speaking), \
        speaking


def test_the_linter_never_reaches_configuration_or_discovery():
    graph = import_graph()
    forbidden = {"ascendlint.workspace.config", "ascendlint.workspace.discovery"}
    linter = [name for name in graph if name.startswith("ascendlint.linter.")]
    assert "ascendlint.linter.runner" in linter and "ascendlint.linter.per_file" in linter
    for name in linter:
        assert not graph[name] & forbidden, (name, graph[name] & forbidden)  # not directly
        assert not reachable(graph, name) & forbidden, name  # nor through anything it imports


def test_the_package_graph_has_no_circle():
    graph = package_graph()
    assert {"cli", "workspace", "linter", "files", "text", "fixes", "catalog", "output", "server"} <= set(graph)
    assert circles(graph) == []


def test_the_architecture_diagram_draws_the_package_imports():
    drawn = diagram_edges(ARCHITECTURE.read_text(encoding="utf-8"))
    graph = package_graph()
    actual = {(source, target) for source, targets in graph.items() for target in targets}
    assert not drawn - actual, f"arrows with no import behind them: {sorted(drawn - actual)}"
    needed = transitive_reduction(graph)  # what no other path implies: the diagram cannot leave these out
    assert not needed - drawn, f"imports the diagram neither draws nor implies: {sorted(needed - drawn)}"
    as_drawn: dict[str, set[str]] = {}
    for source, target in drawn:
        as_drawn.setdefault(source, set()).add(target)
    for source, targets in graph.items():
        assert targets <= reachable(as_drawn, source), (source, targets - reachable(as_drawn, source))


def test_the_reduction_keeps_only_what_no_other_path_implies():
    assert transitive_reduction({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == {("a", "b"), ("b", "c")}
    assert diagram_edges("```mermaid\nflowchart TD\n  a --> b\n  subgraph s [S]\n    b --> c\n  end\n"
                         "  c -.-> d\n```\n") == {("a", "b"), ("b", "c")}  # a dotted arrow is not an import
