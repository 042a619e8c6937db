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


class NodeIndex:
    """Every syntactic node of a module in source (pre-)order, with parents and scope extents."""

    __slots__ = ("nodes", "_parent", "_end", "_by_type", "_position")

    def __init__(self, module: cst.Module) -> None:
        nodes: list[cst.CSTNode] = []
        parent: dict[int, cst.CSTNode] = {}
        end: dict[int, int] = {}
        stack: list = [module]
        append = nodes.append
        CSTNode = cst.CSTNode
        scope_types = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.For, cst.While, cst.If)
        while stack:
            node = stack.pop()
            if type(node) is int:  # end marker: the subtree that started at this index is complete
                end[id(nodes[node])] = len(nodes)
                continue
            index = len(nodes)
            append(node)
            if isinstance(node, scope_types):
                stack.append(index)
            children: list = []
            for name in _child_fields(type(node)):
                value = getattr(node, name)
                if isinstance(value, CSTNode):
                    children.append(value)
                elif type(value) in (tuple, list):
                    for item in value:
                        if isinstance(item, CSTNode):
                            children.append(item)
            for child in children:
                parent[id(child)] = node
            children.reverse()
            stack.extend(children)
        self.nodes = nodes
        self._parent = parent
        self._end = end
        self._by_type: dict[type, list] = {}
        self._position: dict[int, int] = {}

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
            found = [n for n in self.nodes if isinstance(n, types)]
            self._by_type[key] = found
        return found

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
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            items = value if type(value) in (tuple, list) else (value,)
            for item in items:
                if isinstance(item, cst.CSTNode):
                    yield item
                    yield from self.descendants(item)
