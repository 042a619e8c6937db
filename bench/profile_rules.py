"""Where one process spends its time on kernel files: parsing, the shared walk and facts, positions, each rule.

Every rule's ``visit_*`` methods and ``finish`` are wrapped with a CPU-time counter for one lint of the files with
every rule on; shared work a rule triggers (a kernel analysis, built once per kernel for all rules) is counted
under its own name and not under the rule that happened to ask first. CPU time of this process, best of a few
passes, so a busy machine disturbs the numbers less than wall time would.
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import libcst as cst

from ascendlint.linter import engine
from ascendlint.analysis.context import FileContext
from ascendlint.text.locator import Locator
from ascendlint.catalog.registry import all_rules

ROUNDS = 3


class _Attribution:
    """CPU seconds per label; time spent in a nested wrapped call counts for the inner label only."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self._accounted = 0.0

    def wrap(self, function, label: str):
        def timed(*args, **kwargs):
            start, accounted_before = time.process_time(), self._accounted
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.process_time() - start
                self.spent[label] += elapsed - (self._accounted - accounted_before)
                self._accounted = accounted_before + elapsed

        return timed


def _patch(stack: ExitStack, owner, attribute: str, replacement) -> None:
    original = owner.__dict__[attribute] if attribute in vars(owner) else None
    setattr(owner, attribute, replacement)
    stack.callback(lambda: setattr(owner, attribute, original) if original is not None else delattr(owner, attribute))


def _one_pass(texts: list[str], rules) -> tuple[float, dict[str, float]]:
    counter = _Attribution()
    with ExitStack() as stack:
        _patch(stack, engine, "NodeIndex", counter.wrap(engine.NodeIndex, "walk (NodeIndex)"))
        _patch(stack, engine, "ModuleFacts", counter.wrap(engine.ModuleFacts, "module facts"))
        _patch(stack, engine, "parse_module", counter.wrap(engine.parse_module, "parse as the engine runs it"))
        _patch(stack, Locator, "_offset_ranges", counter.wrap(Locator._offset_ranges, "positions (files that report)"))
        _patch(stack, FileContext, "analysis", counter.wrap(FileContext.analysis, "kernel analyses (shared)"))
        for rule in rules:
            for name in dir(rule):
                if name.startswith("visit_") or name == "finish":
                    _patch(stack, rule, name, counter.wrap(getattr(rule, name), rule.code))
        start = time.process_time()
        for text in texts:
            engine.lint_text(text, "bench.py", rules)
        total = time.process_time() - start
    return total, counter.spent


def _plain_parse_seconds(texts: list[str]) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        for text in texts:
            cst.parse_module(text)
        best = min(best, time.process_time() - start)
    return best


def _parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except Exception:  # noqa: BLE001 - the syntax-error examples are deliberately broken
        return False


def report(files: list[Path]) -> tuple[list[str], float]:
    """The tables, and the CPU ratio of a whole lint to a libcst parse of the same files."""
    first_copy = [p for p in files if p.parent.name == "copy000"] or files
    texts = [text for text in (p.read_text(encoding="utf-8") for p in first_copy) if _parses(text)]
    lines = sum(t.count("\n") for t in texts)
    rules = [r for r in all_rules() if not r.tool_rule]
    parse = _plain_parse_seconds(texts)
    passes = [_one_pass(texts, rules) for _ in range(ROUNDS)]
    total = min(t for t, _ in passes)
    labels = {label for _, spent in passes for label in spent}
    best = {label: min(spent.get(label, 0.0) for _, spent in passes) for label in labels}
    codes = {r.code for r in rules}
    phases = {k: v for k, v in best.items() if k not in codes}
    per_rule = {k: v for k, v in best.items() if k in codes}
    rules_total = sum(per_rule.values())
    engine_rest = max(0.0, total - sum(phases.values()) - rules_total)
    out = [
        f"One copy of the kernel sources that parse: {len(texts)} files, {lines} lines, {len(rules)} rules; "
        f"CPU seconds, best of {ROUNDS} passes.",
        "",
        "| part | CPU seconds | x parse |",
        "|---|---:|---:|",
        f"| whole lint | {total:.3f} | {total / parse:.2f} |",
        f"| plain `libcst.parse_module` on this thread (the baseline) | {parse:.3f} | 1.00 |",
        *(f"| {label} | {seconds:.3f} | {seconds / parse:.2f} |" for label, seconds in sorted(phases.items())),
        f"| all rules' own code | {rules_total:.3f} | {rules_total / parse:.2f} |",
        f"| engine (dispatch, reports, noqa, sorting) | {engine_rest:.3f} | {engine_rest / parse:.2f} |",
        "",
        "| rule | CPU seconds | share of the rules' time | x parse |",
        "|---|---:|---:|---:|",
    ]
    for code, seconds in sorted(per_rule.items(), key=lambda item: -item[1]):
        out.append(f"| {code} | {seconds:.3f} | {seconds / max(rules_total, 1e-9):.0%} | {seconds / parse:.2f} |")
    return out, total / parse
