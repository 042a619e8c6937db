"""No import circle among the project's modules: each layer imports only the layers below it.

The graph is read from the import statements themselves (``ast``), nothing is imported. Every import statement
counts, wherever it stands:

- at module level, and under ``if TYPE_CHECKING:`` (a type a module names is a dependency on the module that
  defines it, even if it is never loaded at run time);
- inside a function. Such imports defer loading (libcst, the rules, notebook support load only when needed), and
  deferring is no reason for two modules to depend on each other: counting them keeps a deferred import from
  hiding a circle. Where two layers must share a record, the record moves below both.

Two things are not edges. A dotted import's parent packages (``import a.b`` runs ``a/__init__.py``) are how
Python loads a submodule, not a dependency of the importer; ``from . import name`` is an edge to the package only
when ``name`` is not one of its modules. And imports by name at run time (``importlib.import_module`` of what
``registry`` lists in ``checks/`` or what ``output.BUILTIN_FORMATS`` names) are not import statements: that is
how plugins and formats are found, and they never import anything below them in return.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"ascendlint": ROOT / "ascendlint", "ascendlint.checks": ROOT / "checks"}  # as pyproject installs them


def project_modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if package == "ascendlint" and name.startswith("ascendlint.checks"):
                continue  # an installed copy of checks/ would be the same modules
            found[name] = path
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix for alias in node.names]
    found = set()
    for name in names:
        while name and name not in known:  # ``from ascendlint.rule import Rule``: the module is ascendlint.rule
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges: set[str] = set()
        for node in ast.walk(tree):  # every statement, in functions and under TYPE_CHECKING too
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(name, path.name == "__init__.py", node, known)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (or one that imports itself), as one cycle through
    it, found with Tarjan's algorithm (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in graph.get(node, ()):
                    found.append(_cycle_through(graph, set(members)))
    return found


def _cycle_through(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """One cycle inside a strongly connected set, for the message (breadth-first back to the first member)."""
    first = min(members)
    paths = {first: [first]}
    queue = [first]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == first:
                return [*paths[node], first]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return sorted(members)


def test_no_import_circle_among_the_project_modules():
    graph = import_graph()
    assert "ascendlint.cli" in graph and "ascendlint.checks.asc101_launch_num_warps" in graph
    found = circles(graph)
    assert found == [], "import circles: " + "; ".join(" -> ".join(cycle) for cycle in found)


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "ascendlint.reports" in graph["ascendlint.analysis.context"]  # under TYPE_CHECKING
    assert "ascendlint.linter.engine" in graph["ascendlint.linter.runner"]  # inside a function
    assert "ascendlint.analysis.module_names" in graph["ascendlint.analysis.module_facts"]  # relative, module level
    assert "ascendlint.rule" in graph["ascendlint.checks.asc101_launch_num_warps"]  # absolute, from checks/


def test_circles_are_found_whatever_their_length():
    assert circles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b", "a"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c", "a"]]
    assert circles({"a": {"a"}}) == [["a", "a"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
