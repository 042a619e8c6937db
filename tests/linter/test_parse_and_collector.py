"""The two shortcuts around a parse: libcst's node checks skipped only while its parser builds an ASCII tree,
and the collector paused for one file, whose tree reference counting frees (no cycles hold it)."""

from __future__ import annotations

import gc
from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTNode

from ascendlint.linter import collector, engine
from ascendlint.files import source
from ascendlint.catalog.registry import all_rules

KERNEL = Path(__file__).resolve().parents[2] / "reference_kernels" / "matmul_epilogue.py"


def test_a_parsed_ascii_tree_equals_libcsts_own_and_prints_back():
    text = KERNEL.read_text(encoding="utf-8")
    ours = source.parse_module(text)
    assert ours.deep_equals(cst.parse_module(text)) and ours.code == text


@pytest.mark.parametrize("text", ["x = 1\n", "def f(:\n"])
def test_node_checks_are_back_after_a_parse_that_succeeds_or_fails(text):
    checks = CSTNode.__dict__["__post_init__"]
    try:
        source.parse_module(text)
    except cst.ParserSyntaxError:
        pass
    assert CSTNode.__dict__["__post_init__"] is checks
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1 not a name")


def test_node_checks_run_for_non_ascii_text_only(monkeypatch):
    checked = []
    original = cst.Name._validate
    monkeypatch.setattr(cst.Name, "_validate", lambda self: checked.append(self.value) or original(self))
    source.parse_module("plain = 1\n")
    assert checked == []
    source.parse_module("café = 1\n")
    assert "café" in checked


def test_the_collector_is_paused_inside_and_restored_after():
    assert gc.isenabled()
    with collector.paused_for_one_file():
        assert not gc.isenabled()
        with collector.paused_for_one_file():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner use leaves it to the outer one
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused_for_one_file():
            pass
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def test_no_reference_cycle_keeps_a_linted_tree_alive():
    rules = [rule for rule in all_rules() if not rule.tool_rule]
    text = KERNEL.read_text(encoding="utf-8")
    engine.lint_text(text, "k.py", rules)  # warm: first-use caches of the rules are not the file's garbage
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        engine.lint_text(text, "k.py", rules)
        gc.collect()
        held = [type(o).__name__ for o in gc.garbage if isinstance(o, CSTNode)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert held == []
