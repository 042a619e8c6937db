"""``type(node) is cst.X`` stands for ``isinstance(node, cst.X)`` in the analysis and the rules (it skips libcst's
slow ABC check): that is only the same test while ``cst.X`` is a concrete node class without subclasses."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import libcst as cst
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.joinpath("ascendlint", "analysis").glob("*.py"), *ROOT.joinpath("checks").glob("*.py")])
_IS = re.compile(r"type\([^()]*(?:\[[^\]]*\])?[^()]*\) is (?:not )?cst\.(\w+)")
_IN = re.compile(r"type\([^()]*(?:\[[^\]]*\])?[^()]*\) (?:not )?in \(((?:cst\.\w+,?\s*)+)\)")


def _classes_tested_by_type(text: str) -> set[str]:
    found = set(_IS.findall(text))
    for group in _IN.findall(text):
        found.update(name.strip()[len("cst."):] for name in group.split(",") if name.strip())
    return found


def test_the_sources_do_test_node_types_this_way():
    names = set().union(*(_classes_tested_by_type(p.read_text(encoding="utf-8")) for p in SOURCES))
    assert {"Name", "Call", "Attribute"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_each_class_tested_by_type_is_a_concrete_node_without_subclasses(path):
    for name in sorted(_classes_tested_by_type(path.read_text(encoding="utf-8"))):
        cls = getattr(cst, name, None)
        assert inspect.isclass(cls) and issubclass(cls, cst.CSTNode), f"{path.name}: cst.{name} is not a node class"
        assert not inspect.isabstract(cls) and not name.startswith("Base"), f"{path.name}: cst.{name} is abstract"
        assert not cls.__subclasses__(), f"{path.name}: cst.{name} has subclasses, so type() is not isinstance()"


def test_the_pattern_catches_an_abstract_class():
    assert _classes_tested_by_type("if type(node.func) is cst.BaseExpression:") == {"BaseExpression"}
    assert _classes_tested_by_type("x = type(a[0]) not in (cst.Name, cst.Attribute)") == {"Name", "Attribute"}
