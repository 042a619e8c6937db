"""Compile snippets the way the rules do: parse, build the module facts, ask ``ascendlint.compiler``."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ascendlint.analysis.module_facts import ModuleFacts
from ascendlint.analysis.walk import NodeIndex
from ascendlint.compiler import missing, outcomes


def facts_of(source: str) -> ModuleFacts:
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return ModuleFacts(module, NodeIndex(module))


def needs_compiler() -> None:
    reason = missing()
    if reason:
        pytest.skip(f"the NPU compiler is not installed: {reason}")


def compile_outcomes(source: str, target: str = "Ascend910B1", pointer_dtype: str = "fp16",
                     limit: int = 65536) -> list[outcomes.Outcome]:
    needs_compiler()
    return outcomes.outcomes(facts_of(source), (target,), pointer_dtype, limit)


def by_label(found: list[outcomes.Outcome]) -> dict[str, outcomes.Outcome]:
    return {o.request.label.split(" line")[0]: o for o in found}
