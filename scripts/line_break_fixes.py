"""Fixes in kernel files given lone carriage returns and line-start form feeds: applied and refused, per rule.

    .venv/bin/python scripts/line_break_fixes.py /path/to/kernels ... [--variants 2] [--files 60] [--seed 1]

Each file that has a fix is mutated a few times: some of its line endings (one, five or all) become a lone ``\\r``,
or a line holding only a lone ``\\r`` is put at some line start, and a form feed is put at the start of some lines
(one, two, five, or half of the indented ones). Python reads
such text as the same program, so every fix the unmutated file gets must apply to the mutated one too, land in
the same place (the fixed texts are equal once form feeds are removed and line endings made ``\\n``), parse,
and change nothing when applied again. A refused fix is counted against the same mutation without the lone
CRs (form feeds only), which tells the two causes apart. Reads the files, never writes them.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ascendlint import engine, fixes  # noqa: E402
from ascendlint.catalog.registry import all_rules  # noqa: E402

RULES = list(all_rules())


def lint(text: str):
    return engine.lint_text(text, "k.py", RULES)


def plain(text: str) -> str:
    """The text without form feeds, every line ending ``\\n``: what Python sees either way."""
    return text.replace("\f", "").replace("\r\n", "\n").replace("\r", "\n")


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    lines = text.split("\n")
    count = len(lines) - 1
    kind = rng.choice(["one-cr", "five-cr", "all-cr", "cr-line"])
    crs = {"one-cr": 1, "five-cr": 5, "all-cr": count, "cr-line": 0}[kind]
    lone = set(rng.sample(range(count), min(count, crs)))
    if rng.random() < 0.25:
        feeds = {i for i, line in enumerate(lines) if line.startswith((" ", "\t")) and rng.random() < 0.5}
    else:
        feeds = set(rng.sample(range(len(lines)), min(len(lines), rng.choice([1, 2, 5]))))
    for i in sorted(lone):  # a lone CR before an empty line ending in LF would make one CRLF of the two
        while i + 1 < count and lines[i + 1] == "" and i + 1 not in feeds:
            i += 1
            lone.add(i)
    parts = []
    for i, line in enumerate(lines):
        parts.append(("\f" if i in feeds else "") + line)
        if i < count:
            parts.append("\r" if i in lone else "\n")
    mutated = "".join(parts)
    if kind == "cr-line":  # a line of its own ended by a lone CR, put at some line start
        starts = [i + 1 for i, c in enumerate(mutated) if c == "\n"]
        at = rng.choice(starts)
        mutated = mutated[:at] + "\r" + mutated[at:]
    return kind, mutated


def refusals(outcome) -> Counter:
    found = Counter()
    for diagnostic in outcome.rejected:
        note = diagnostic.extra.get(fixes.REFUSED_NOTE, "")
        found[(diagnostic.code, "does not parse" if note == fixes.DOES_NOT_PARSE else "unreliable positions")] += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--variants", type=int, default=2)
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", type=Path, help="save each mutated text that shows a problem here")
    args = parser.parse_args()
    candidates = []
    for root in args.roots:
        for path in sorted(root.rglob("*.py")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "@triton" in text and "\r" not in text and "\f" not in text:
                candidates.append((path, text))
    rng = random.Random(args.seed)
    rng.shuffle(candidates)
    totals: dict[bool, dict[str, Counter]] = {False: defaultdict(Counter), True: defaultdict(Counter)}
    problems: list[str] = []
    files = variants = 0
    started = time.monotonic()
    for path, text in candidates:
        if files >= args.files:
            break
        baseline = {unsafe: fixes.fix_text(text, lint, unsafe=unsafe) for unsafe in (False, True)}
        if not baseline[True].fixed:
            continue
        files += 1
        for _ in range(args.variants):
            kind, mutated = mutate(text, rng)
            variants += 1
            unmutated = baseline
            if plain(mutated) != text:  # a line was added: compare with that text's own fixes
                unmutated = {u: fixes.fix_text(plain(mutated), lint, unsafe=u) for u in (False, True)}
            for unsafe in (False, True):
                base = unmutated[unsafe]
                outcome = fixes.fix_text(mutated, lint, unsafe=unsafe)
                counts = totals[unsafe]
                for code, n in Counter(d.code for d in base.fixed).items():
                    counts[code]["applied unmutated"] += n
                for code, n in Counter(d.code for d in outcome.fixed).items():
                    counts[code]["applied"] += n
                refused = refusals(outcome) - refusals(base)
                if refused:
                    control = fixes.fix_text(mutated.replace("\r", "\n"), lint, unsafe=unsafe)
                    alone = refusals(control) - refusals(base)
                    for (code, why), n in refused.items():
                        cause = "form feeds alone" if alone[(code, why)] else "lone CRs with form feeds"
                        counts[code][f"refused ({why}; {cause})"] += n
                wrong = []
                if plain(outcome.text) != plain(base.text) and not refused:
                    wrong.append("lands elsewhere than in the unmutated file")
                if outcome.text != mutated and not fixes.parses(outcome.text):
                    wrong.append("does not parse")
                if outcome.text != mutated and fixes.fix_text(outcome.text, lint, unsafe=unsafe).text != outcome.text:
                    wrong.append("not idempotent")
                for problem in wrong:
                    counts["(all)"][problem] += 1
                if wrong or refused:
                    problems.append(f"{path} {kind} unsafe={unsafe}: {wrong} {dict(refused)}")
                    if args.save:
                        args.save.mkdir(parents=True, exist_ok=True)
                        (args.save / f"{variants}-{int(unsafe)}-{path.stem}.py").write_bytes(mutated.encode())
    print(f"files {files}, variants {variants}, {time.monotonic() - started:.0f} s")
    for unsafe in (False, True):
        print("--fix --unsafe-fixes" if unsafe else "--fix")
        for code in sorted(totals[unsafe]):
            print(f"  {code}: {dict(sorted(totals[unsafe][code].items()))}")
    for problem in problems:
        print(problem)


if __name__ == "__main__":
    main()
