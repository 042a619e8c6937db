"""The configurations a kernel is estimated at: each launch's constexpr values and multi-buffering choice, or each
``triton.Config`` of its autotune list merged with what the launch passes, or the kernel's literal defaults.

Knows how to fold a host expression to the integer it always has (``fold``) and on which line a node starts.
Serves the estimate (``ub.estimate``), ASC304's extents, and the compile requests of ``ascendlint.compiler``,
which compile the same configurations the estimate is made at.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..host_resolver import host_resolver
from ..launch_arguments import launch_argument, launches_of
from ..literals import integer_value
from ..module_facts import Kernel, Launch, ModuleFacts, dotted_name

_MAX_DEPTH = 8


@dataclass
class Config:
    """The constexpr values of one launch or autotune config."""

    label: str  # "launch line 40", "config 2 line 12"
    anchor: cst.CSTNode  # where a finding about this config goes
    values: dict[str, int]
    multibuffer: bool = True  # triton-ascend's default launch option
    launch: Launch | None = None
    anchors: dict[str, cst.CSTNode] = field(default_factory=dict)  # per constexpr: the argument that sets it


def configs(facts: ModuleFacts, kernel: Kernel) -> list[Config]:
    resolver = host_resolver(facts)
    defaults = {name: integer_value(d) for name, d in kernel.defaults.items()
                if name in kernel.constexpr and type(d) is cst.Integer}
    launches = launches_of(facts, kernel)
    launch_configs = []
    for launch in launches:
        values = dict(defaults)
        anchors: dict[str, cst.CSTNode] = {}
        for name in (p for p in kernel.params if p in kernel.constexpr):  # in signature order: ties break alike
            argument = launch_argument(launch, name)
            if argument is None:
                continue
            value = fold(resolver, argument, launch.call)
            if value is not None:
                values[name] = value
                arg = launch.keywords.get(name)
                anchors[name] = arg if arg is not None else argument
        # triton-ascend multi-buffers unless the launch says otherwise
        multibuffer = _is_true(launch.keywords["multibuffer"].value) if "multibuffer" in launch.keywords else True
        launch_configs.append(Config(f"launch line {_line(facts, launch.call)}", launch.call, values, multibuffer,
                                     launch, anchors))
    tuned = _autotune_configs(facts, kernel, resolver)
    if not tuned:
        if launch_configs:
            return launch_configs
        return [Config(f"defaults line {_line(facts, kernel.node)}", kernel.node.name, defaults)] if defaults else []
    found = []
    base = launch_configs[0] if launch_configs else None
    for label, call, values, multibuffer in tuned:
        merged = {**defaults, **(base.values if base else {}), **values}
        if multibuffer is None:  # the config does not say: the launch's choice, else triton-ascend's default
            multibuffer = base.multibuffer if base is not None else True
        found.append(Config(label, call, merged, multibuffer, base.launch if base else None,
                            {name: call for name in values}))
    return found


def _autotune_configs(facts, kernel, resolver) -> list[tuple[str, cst.Call, dict[str, int], bool | None]]:
    autotune = kernel.autotune
    if autotune is None:
        return []
    configs_expr = next((a.value for a in autotune.args if a.keyword is not None and a.keyword.value == "configs"),
                        None)
    if configs_expr is None and autotune.args and autotune.args[0].keyword is None:
        configs_expr = autotune.args[0].value
    if type(configs_expr) is cst.Name:
        status, value = resolver.lookup(configs_expr.value, autotune)
        configs_expr = value if status == "value" else None
    if type(configs_expr) not in (cst.List, cst.Tuple):
        return []
    found = []
    for number, element in enumerate(configs_expr.elements, 1):
        call = element.value
        if type(call) is not cst.Call:
            continue
        values: dict[str, int] = {}
        multibuffer = None
        if call.args and call.args[0].keyword is None and type(call.args[0].value) is cst.Dict:
            for item in call.args[0].value.elements:
                if type(item) is not cst.DictElement or type(item.key) is not cst.SimpleString:
                    continue
                key = item.key.evaluated_value
                if key == "multibuffer":
                    multibuffer = _is_true(item.value)
                    continue
                value = fold(resolver, item.value, call)
                if value is not None:
                    values[key] = value
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "multibuffer":
                multibuffer = _is_true(arg.value)
        found.append((f"config {number} line {_line(facts, call)}", call, values, multibuffer))
    return found


def _is_true(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "True"


def _line(facts: ModuleFacts, node: cst.CSTNode) -> int:
    position = facts.index.position(node) if hasattr(facts.index, "position") else None
    if position is not None:
        return position.start.line
    return _lines(facts).get(id(node), 0)


def _lines(facts: ModuleFacts) -> dict[int, int]:
    return facts.memo("ub_lines", lambda: _first_lines(facts))


def _first_lines(facts: ModuleFacts) -> dict[int, int]:
    """The first line of every node, from one printing of the module that records character offsets (libcst's
    position metadata gives the same lines at several times the cost, which dominated a corpus run)."""
    from bisect import bisect_right

    from ...text.locator import printed_offsets

    printed, ranges = printed_offsets(facts.module)
    starts = [0, *(i + 1 for i, char in enumerate(printed) if char == "\n")]
    return {key: bisect_right(starts, start) for key, (start, _) in ranges.items()}


def line_of(facts: ModuleFacts, node: cst.CSTNode) -> int:
    return _line(facts, node)


def fold(resolver, expr: cst.BaseExpression, site: cst.CSTNode, depth: int = 0) -> int | None:
    """An integer the host expression always has (literals, names bound to them, arithmetic of those)."""
    if depth > _MAX_DEPTH:
        return None
    if type(expr) is cst.Integer:
        return integer_value(expr)
    if type(expr) is cst.Name:
        status, value = resolver.lookup(expr.value, site)
        if status == "value" and isinstance(value, cst.BaseExpression) and value is not expr:
            return fold(resolver, value, site, depth + 1)
        return None
    if type(expr) is cst.BinaryOperation:
        left = fold(resolver, expr.left, site, depth + 1)
        right = fold(resolver, expr.right, site, depth + 1)
        return _arith(expr.operator, left, right)
    if type(expr) is cst.Call and (dotted_name(expr.func) or "").split(".")[-1] in ("constexpr", "int"):
        if len(expr.args) == 1:
            return fold(resolver, expr.args[0].value, site, depth + 1)
    return None


def _arith(operator, left: int | None, right: int | None) -> int | None:
    if left is None or right is None:
        return None
    kind = type(operator)
    if kind is cst.Add:
        return left + right
    if kind is cst.Subtract:
        return left - right
    if kind is cst.Multiply:
        return left * right
    if kind is cst.FloorDivide and right:
        return left // right
    if kind is cst.LeftShift and 0 <= right < 40:
        return left << right
    if kind is cst.Power and 0 <= right < 40:
        return left ** right
    return None
