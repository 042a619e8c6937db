"""Long fuzz run: the checks of tests/robustness/test_fuzz.py, with fresh randomness, for as long as you like.

    .venv/bin/python scripts/fuzz.py --minutes 30          # all sources of programs
    .venv/bin/python scripts/fuzz.py --minutes 5 --source mutated --seed 7

Every program goes through every registered rule and every fix (unsafe included). Failures (FAIL) and fixes
refused because their result would not parse or their range held other text than the rule saw (REFUSED: the
file stays safe, the rule's edit or the positions are wrong) are printed
with the program's path and saved under --out (default: fuzz-failures/) so they can become regression examples.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import hypothesmith
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ascendlint import fixes
from tests.robustness.harness import corpus, examine, examine_notebook
from tests.robustness.mutations import malformed_notebook, mutated, with_form_feeds, with_line_breaks, with_long_chain

BATCH = 50  # examples per hypothesis run; the time limit is checked between runs
HEADER = "import triton\nimport triton.language as tl\n"
NOTEBOOK = "\x00notebook\x00"  # marks a program that is a notebook's JSON (no Python text holds a NUL)


def strategies() -> dict[str, st.SearchStrategy[str]]:
    sources = corpus()
    return {
        "mutated": mutated(sources, max_edits=6).map(lambda case: case[1]),
        "libcst-nodes": hypothesmith.from_node().map(lambda program: HEADER + program),
        "grammar": hypothesmith.from_grammar().map(lambda program: HEADER + program),
        "text": st.text(max_size=300).map(lambda noise: HEADER + noise),
        "form-feeds": with_form_feeds(sources).map(lambda case: case[1]),
        "long-chains": with_long_chain(sources).map(lambda case: case[1]),
        "line-breaks": with_line_breaks(sources).map(lambda case: case[1]),
        "notebooks": malformed_notebook().map(lambda document: NOTEBOOK + document),
    }


def run_batch(strategy: st.SearchStrategy[str], batch_seed: int, size: int, visit) -> None:
    """Feed ``size`` fresh examples of ``strategy`` to ``visit`` (generation only: nothing is shrunk or replayed)."""

    @seed(batch_seed)
    @settings(max_examples=size, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def batch(program: str) -> None:
        visit(program)

    batch()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--source", default="all",
                        choices=["all", "mutated", "libcst-nodes", "grammar", "text", "form-feeds", "long-chains",
                                 "line-breaks", "notebooks"])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # hypothesmith compiles odd but valid programs

    master_seed = args.seed if args.seed is not None else random.randrange(2**32)
    rng = random.Random(master_seed)
    available = strategies()
    names = list(available) if args.source == "all" else [args.source]
    tried, parsed, failures, refusals = Counter(), Counter(), Counter(), Counter()
    deadline = time.monotonic() + args.minutes * 60
    print(f"seed {master_seed}; sources: {', '.join(names)}; {args.minutes:g} minutes", flush=True)
    def visit(name: str, program: str) -> None:
        tried[name] += 1
        if program.startswith(NOTEBOOK):
            program = program[len(NOTEBOOK):]
            verdict = examine_notebook(program.encode("utf-8"))
        else:
            parsed[name] += fixes.parses(program)
            verdict = examine(program)
        refused = verdict.refused + verdict.stale
        if verdict.problems or refused:
            kind = "FAIL" if verdict.problems else "REFUSED"
            (failures if verdict.problems else refusals)[name] += 1
            args.out.mkdir(parents=True, exist_ok=True)
            saved = args.out / f"{name}-{tried.total():06d}.{'ipynb' if name == 'notebooks' else 'py'}"
            saved.write_text(program, encoding="utf-8", newline="")
            print(f"{kind} [{name}] {saved}: {'; '.join(verdict.problems + refused)}", flush=True)

    batches = 0
    while time.monotonic() < deadline:
        name = names[batches % len(names)]
        run_batch(available[name], rng.getrandbits(64), BATCH, lambda program, name=name: visit(name, program))
        batches += 1
        print(f"... {tried.total()} programs, {failures.total()} failures, {refusals.total()} refused fixes", flush=True)
    print(f"seed {master_seed}")
    for name in names:
        print(f"{name:>13}: {tried[name]:>6} programs ({parsed[name]} parse), {failures[name]} failures, "
              f"{refusals[name]} refused fixes")
    print(f"{'total':>13}: {tried.total():>6} programs, {failures.total()} failures, {refusals.total()} refused fixes")
    return 1 if failures or refusals else 0


if __name__ == "__main__":
    sys.exit(main())
