"""One fast pre-order walk over a libcst tree.

libcst's own visitor rebuilds every node while it walks; here we read the dataclass fields directly and skip
whitespace and punctuation, so a whole-module walk costs a fraction of the parse. The walk yields a flat node list
(source order), a parent map and the end of every function's subtree, which rules and analyses share.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

_SKIPPED_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "colon", "dot", "equal", "semicolon", "lbrace", "lbracket", "rbrace",
        "rbracket", "first_colon", "second_colon", "leading_lines", "lines_after_decorators", "header",
        "footer", "trailing_whitespace", "newline", "operator", "asynchronous", "star", "separator",
        "posonly_ind", "trailing_comma", "comment", "empty_lines", "whitespace", "leading_whitespace",
    }
)
# Fields listed in source order where the dataclass order differs from it.
_FIELD_ORDER_OVERRIDES = {
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
}
_FIELD_CACHE: dict[type, tuple[str, ...]] = {}


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes below any node, in source order (recursive; for small subtrees such as one host expression)."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        items = value if type(value) in (tuple, list) else (value,)
        for item in items:
            if isinstance(item, cst.CSTNode):
                yield item
                yield from descendants(item)


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _FIELD_CACHE.get(cls)
    if names is None:
        if cls in _FIELD_ORDER_OVERRIDES:
            names = _FIELD_ORDER_OVERRIDES[cls]
        else:
            names = tuple(
                f.name
                for f in dataclasses.fields(cls)
                if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
            )
        _FIELD_CACHE[cls] = names
    return names


_SCOPE_TYPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.If})
_IS_NODE: dict[type, bool] = {}  # type -> is a CSTNode subclass (isinstance on the CSTNode ABC is slow)


def _is_node_type(cls: type) -> bool:
    found = _IS_NODE.get(cls)
    if found is None:
        found = _IS_NODE[cls] = issubclass(cls, cst.CSTNode)
    return found


def iter_nodes(node: cst.CSTNode):
    """``node`` and every node below it, from the fields (no libcst visitor, which rebuilds what it walks)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child_nodes(current))


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntactic children of a node, read from its fields: what ``node.children`` gives less whitespace and
    punctuation, without libcst rebuilding the node to list them (that property dominated walks of large kernels)."""
    found = []
    for name in _FIELD_CACHE.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            found.extend(item for item in value if _is_node_type(type(item)))
        elif value is not None and _is_node_type(type(value)):
            found.append(value)
    return found


class NodeIndex:
    """Every syntactic node of a module in source (pre-)order, with parents and scope extents."""

    __slots__ = ("nodes", "_parent", "_end", "_by_type", "_position", "_by_exact_type", "_names")

    def __init__(self, module: cst.Module) -> None:
        nodes: list[cst.CSTNode] = []
        parent: dict[int, cst.CSTNode] = {}
        end: dict[int, int] = {}
        stack: list = [module]
        append, pop, push = nodes.append, stack.pop, stack.append
        fields_of, is_node, is_node_cache = _FIELD_CACHE.get, _is_node_type, _IS_NODE.get
        scope_types = _SCOPE_TYPES
        while stack:
            node = pop()
            node_type = type(node)
            if node_type is int:  # end marker: the subtree that started at this index is complete
                end[id(nodes[node])] = len(nodes)
                continue
            if node_type in scope_types:
                push(len(nodes))
            append(node)
            fields = fields_of(node_type) or _child_fields(node_type)
            # Children are pushed last-first so that they pop in source order.
            for name in reversed(fields):
                value = getattr(node, name)
                value_type = type(value)
                if value_type is tuple or value_type is list:
                    for item in reversed(value):
                        item_type = type(item)
                        if is_node_cache(item_type) or is_node(item_type):
                            parent[id(item)] = node
                            push(item)
                elif value is not None and (is_node_cache(value_type) or is_node(value_type)):
                    parent[id(value)] = node
                    push(value)
        self.nodes = nodes
        self._parent = parent
        self._end = end
        self._by_type: dict[type, list] = {}
        self._position: dict[int, int] = {}
        self._by_exact_type: dict[type, list] | None = None  # nodes by exact class, built on first use
        self._names: dict[str, list[cst.Name]] | None = None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parent.get(id(node))
        while current is not None:
            yield current
            current = self._parent.get(id(current))

    def of_type(self, *types: type) -> list:
        """All nodes of exactly these classes (or their subclasses), in source order."""
        key = types if len(types) > 1 else types[0]
        found = self._by_type.get(key)
        if found is None:
            grouped = self._grouped()
            matching = [cls for cls in grouped if issubclass(cls, types)]
            if len(matching) == 1:
                found = grouped[matching[0]]
            else:
                found = [n for n in self.nodes if type(n) in set(matching)] if matching else []
            self._by_type[key] = found
        return found

    def _grouped(self) -> dict[type, list]:
        """Nodes by their exact class, each list in source order: one pass, however many classes are asked for."""
        if self._by_exact_type is None:
            grouped: dict[type, list] = {}
            for node in self.nodes:
                kind = type(node)
                members = grouped.get(kind)
                if members is None:
                    grouped[kind] = [node]
                else:
                    members.append(node)
            self._by_exact_type = grouped
        return self._by_exact_type

    def names(self, value: str) -> list[cst.Name]:
        """Every ``Name`` node spelling ``value``, in source order (grouped once per module, so that a question
        asked per kernel does not scan the whole module per kernel)."""
        if self._names is None:
            grouped: dict[str, list[cst.Name]] = {}
            for node in self.of_type(cst.Name):
                grouped.setdefault(node.value, []).append(node)
            self._names = grouped
        return self._names.get(value, [])

    def order(self, node: cst.CSTNode) -> int:
        """Position of ``node`` in the walk (smaller is earlier in the source)."""
        if not self._position:
            self._position = {id(n): i for i, n in enumerate(self.nodes)}
        return self._position[id(node)]

    def subtree(self, node: cst.CSTNode) -> list:
        """The nodes of a function, class, lambda, loop or ``if`` subtree, the node itself first."""
        start = self.order(node)
        return self.nodes[start : self._end[id(node)]]

    def descendants(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Nodes below any node, in source order (recursive; for small subtrees)."""
        return descendants(node)
