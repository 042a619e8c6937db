"""Real-bug benchmark: does ascendlint catch the traps real teams fixed, at the lines they fixed, and not after?

    python bench/realbugs.py [--ascendlint PATH] [--root /work/realbugs] [--modes default,review,all,rule]
                             [--rules ASC105,ASC202] [--half tuning|measured|both] [--tolerance 2] [--json]

The pairs come from ``bench/realbugs_tree.py`` (``<root>/index.json``). ascendlint is run by subprocess with
``--format json --no-cache --exit-zero`` on every before and after file, in up to four modes:

- ``default``: the default rule set (no ``--select``);
- ``review``: the review suite (``--select review``; nothing is caught by a build without suites);
- ``all``: ``--select ALL``;
- ``rule``: each labelled rule selected alone (``--select <code>``), which shows whether the rule can see the
  trap at all, whatever other rules or tiers do.

A labelled fix is *caught* in a mode when a finding of its rule lies on a labelled before range widened by the
tolerance on both sides (a finding's rows ``[row, end_row]`` overlapping ``[start - tol, end + tol]``) and no
finding of its rule overlaps the widened after ranges. The tolerance absorbs the line a rule chooses to report on
(the grid assignment or the launch under it, a multi-line call); 2 lines by default. The report gives, per rule
and overall: labelled fixes, flagged before, caught (flagged before and not after), and flagged after.
Nothing is imported from the linted code or from ascendlint; only its command line is used.

``--by-trap`` counts a finding of the labelled rule's *sweep* as well (ASC110 for ASC105, ASC207 for ASC202: the
same check, split by how much of the trap the host code shows), and the ``rule`` mode then selects both. ``--by-family``
counts any rule that warns of the same failure from its own evidence (``FAMILIES``: the grid limit, ASC105 and
ASC110; int32 offsets, ASC201, ASC202, ASC203 and ASC207; Unified Buffer overflow, ASC304, ASC305 and the compiler's
verdict ASC307, which runs only where the ``compiler`` extra is installed). A suite
that holds the sweep and not the rule catches the trap for its user all the same; the strict figure, by the
labelled code alone, stays the default.

The benchmark has two halves (``half`` in ``index.json``): the *tuning* half, fixes committed before the manifest's
``tuning-cutoff``, which rules may be changed on; and the *measured* half, the later fixes and every fix added
after the split (``measured = true``), which are only scored, never read while changing a rule. Each half is
reported apart; ``--half`` keeps one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_ROOT = Path("/work/realbugs")
SWEEP_OF = {"ASC105": "ASC110", "ASC202": "ASC207"}  # a rule and the opt-in sweep of the same trap
# Rules that warn of the same failure, each from its own evidence: the grid limit, an int32 offset that wraps, a
# Unified Buffer overflow (the static tile rule, the static estimate, and the compiler's own verdict).
FAMILIES = (
    frozenset({"ASC105", "ASC110"}),
    frozenset({"ASC201", "ASC202", "ASC203", "ASC207"}),
    frozenset({"ASC304", "ASC305", "ASC307"}),
)


def trap_codes(rule: str, by_trap: bool, by_family: bool = False) -> frozenset[str]:
    """The codes whose findings count for a fix labelled ``rule``: the rule; with ``by_trap`` its sweep too; with
    ``by_family`` every rule of its family."""
    if by_family:
        return next((family for family in FAMILIES if rule in family), frozenset({rule}))
    return frozenset({rule, SWEEP_OF[rule]}) if by_trap and rule in SWEEP_OF else frozenset({rule})
MODES = ("default", "review", "all", "rule")
HALVES = ("tuning", "measured")
_MODE_SELECT = {"default": None, "review": "review", "all": "ALL"}
Range = tuple[int, int]


@dataclass
class Finding:
    code: str
    row: int
    end_row: int


@dataclass
class Outcome:
    id: str
    rule: str
    before_hit: bool
    after_hit: bool
    other_before: int = 0  # findings of the rule in the before file away from the labels

    @property
    def caught(self) -> bool:
        return self.before_hit and not self.after_hit


@dataclass
class Tally:
    labelled: int = 0
    flagged_before: int = 0
    caught: int = 0
    flagged_after: int = 0
    ids_missed: list[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.labelled += 1
        self.flagged_before += outcome.before_hit
        self.caught += outcome.caught
        self.flagged_after += outcome.after_hit
        if not outcome.caught:
            self.ids_missed.append(outcome.id)

    def as_dict(self) -> dict:
        return {"labelled": self.labelled, "flagged_before": self.flagged_before, "caught": self.caught,
                "flagged_after": self.flagged_after, "missed": self.ids_missed}


def overlaps(finding: Finding, ranges: list[Range], tolerance: int) -> bool:
    return any(finding.row <= end + tolerance and finding.end_row >= start - tolerance for start, end in ranges)


def score(entry: dict, before: list[Finding], after: list[Finding], tolerance: int,
          by_trap: bool = False, by_family: bool = False) -> Outcome:
    """Outcome of one labelled fix given the findings on its before and after files."""
    rule = entry["rule"]
    codes = trap_codes(rule, by_trap, by_family)
    before_ranges = [tuple(r) for r in entry["before_ranges"]]
    after_ranges = [tuple(r) for r in entry["after_ranges"]]
    mine_before = [f for f in before if f.code in codes]
    hits = [f for f in mine_before if overlaps(f, before_ranges, tolerance)]
    after_hit = any(overlaps(f, after_ranges, tolerance) for f in after if f.code in codes)
    return Outcome(entry["id"], rule, bool(hits), after_hit, len(mine_before) - len(hits))


def summarise(outcomes: list[Outcome]) -> dict:
    per_rule: dict[str, Tally] = {}
    overall = Tally()
    for outcome in outcomes:
        per_rule.setdefault(outcome.rule, Tally()).add(outcome)
        overall.add(outcome)
    return {"overall": overall.as_dict(), "per_rule": {k: v.as_dict() for k, v in sorted(per_rule.items())}}


def parse_findings(payload: str, root: Path) -> dict[str, list[Finding]]:
    """ascendlint's JSON report as findings per file (paths relative to ``root``)."""
    out: dict[str, list[Finding]] = {}
    for item in json.loads(payload or "[]"):
        name = os.path.normpath(item["filename"])
        if os.path.isabs(name):
            name = os.path.relpath(name, root)
        row = item["location"]["row"]
        end = (item.get("end_location") or {}).get("row") or row
        out.setdefault(name, []).append(Finding(item["code"], row, max(row, end)))
    return out


class UnknownRule(RuntimeError):
    """The measured ascendlint does not have the selected rule (yet)."""


def lint(ascendlint: str, root: Path, paths: list[str], select: str | None) -> dict[str, list[Finding]]:
    cmd = [ascendlint, "check", "--format", "json", "--no-cache", "--exit-zero", "--config",
           str(root / "pyproject.toml")]
    if select:
        cmd += ["--select", select]
    proc = subprocess.run([*cmd, *paths], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0 and select and "Unknown rule selector" in proc.stderr:  # also a build without suites
        raise UnknownRule(select)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:8])} ... exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return parse_findings(proc.stdout, root)


def run_mode(mode: str, entries: list[dict], ascendlint: str, root: Path, tolerance: int,
             absent: set[str] | None = None, by_trap: bool = False, by_family: bool = False) -> list[Outcome]:
    """Outcomes of ``entries`` in one mode; rules the executable lacks are added to ``absent`` (none flagged)."""
    def paths_of(group: list[dict]) -> list[str]:
        return sorted({e["before_path"] for e in group} | {e["after_path"] for e in group})

    outcomes = []
    if mode == "rule":
        for rule in sorted({e["rule"] for e in entries}):
            group = [e for e in entries if e["rule"] == rule]
            try:
                found = lint(ascendlint, root, paths_of(group), ",".join(sorted(trap_codes(rule, by_trap, by_family))))
            except UnknownRule:
                if absent is not None:
                    absent.add(rule)
                found = {}
            outcomes += [score(e, found.get(os.path.normpath(e["before_path"]), []),
                               found.get(os.path.normpath(e["after_path"]), []), tolerance, by_trap, by_family)
                         for e in group]
    else:
        try:
            found = lint(ascendlint, root, paths_of(entries), _MODE_SELECT[mode])
        except UnknownRule:
            if absent is not None:
                absent.add(f"--select {_MODE_SELECT[mode]}")
            found = {}
        outcomes = [score(e, found.get(os.path.normpath(e["before_path"]), []),
                          found.get(os.path.normpath(e["after_path"]), []), tolerance, by_trap, by_family)
                    for e in entries]
    order = {e["id"]: i for i, e in enumerate(entries)}
    return sorted(outcomes, key=lambda o: order[o.id])


def half_of(entry: dict) -> str:
    """The entry's half; an index written before the split has none, and was all tuned on."""
    return entry.get("half", "tuning")


def default_ascendlint() -> str:
    here = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "ascendlint"
    return str(here) if here.exists() else (shutil.which("ascendlint") or "ascendlint")


def table(results: dict[str, dict], modes: list[str]) -> str:
    rules = sorted({r for m in modes for r in results[m]["per_rule"]})
    head = "| rule | fixes | " + " | ".join(f"{m}: caught (flagged before / after)" for m in modes) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(modes)]

    def cell(t: dict) -> str:
        return f"{t['caught']} ({t['flagged_before']} / {t['flagged_after']})"

    for rule in rules:
        first = next(results[m]["per_rule"][rule] for m in modes if rule in results[m]["per_rule"])
        lines.append(f"| {rule} | {first['labelled']} | "
                     + " | ".join(cell(results[m]["per_rule"][rule]) for m in modes) + " |")
    overall = results[modes[0]]["overall"]
    lines.append(f"| **all** | {overall['labelled']} | " + " | ".join(cell(results[m]["overall"]) for m in modes)
                 + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ascendlint", default=default_ascendlint(), help="the ascendlint executable to measure",
                        type=lambda value: os.path.abspath(value) if os.sep in value else value)  # runs in --root
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the materialised benchmark")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: default, review, all, rule")
    parser.add_argument("--half", choices=(*HALVES, "both"), default="both",
                        help="score only the tuning half, only the measured half, or both (reported apart)")
    parser.add_argument("--rules", default="", help="only the labelled fixes of these rules (comma-separated)")
    parser.add_argument("--tolerance", type=int, default=2, help="lines of slack around each labelled range")
    parser.add_argument("--by-trap", action="store_true",
                        help="count a finding of the labelled rule's sweep too (ASC110 for ASC105, ASC207 for ASC202)")
    parser.add_argument("--by-family", action="store_true",
                        help="count a finding of any rule of the labelled rule's family (grid limit, int32 offsets, "
                             "Unified Buffer overflow)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--verbose", action="store_true", help="list every fix and its outcome per mode")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown mode(s): {', '.join(sorted(unknown))}")
    index = json.loads((args.root / "index.json").read_text(encoding="utf-8"))
    entries = index["entries"]
    if args.rules:
        wanted = {r.strip().upper() for r in args.rules.split(",")}
        entries = [e for e in entries if e["rule"] in wanted]
    if args.half != "both":
        entries = [e for e in entries if half_of(e) == args.half]
    if not entries:
        print("no labelled fixes selected", file=sys.stderr)
        return 1
    results, details, absent = {}, {}, set()
    halves: dict[str, dict] = {h: {} for h in HALVES if any(half_of(e) == h for e in entries)}
    for mode in modes:
        outcomes = run_mode(mode, entries, args.ascendlint, args.root, args.tolerance, absent, args.by_trap,
                            args.by_family)
        results[mode] = summarise(outcomes)
        for half in halves:
            ids = {e["id"] for e in entries if half_of(e) == half}
            halves[half][mode] = summarise([o for o in outcomes if o.id in ids])
        details[mode] = [{"id": o.id, "rule": o.rule, "before_hit": o.before_hit, "after_hit": o.after_hit,
                          "caught": o.caught, "other_findings_before": o.other_before} for o in outcomes]
    if args.json:
        json.dump({"ascendlint": args.ascendlint, "root": str(args.root), "tolerance": args.tolerance,
                   "by_trap": args.by_trap, "by_family": args.by_family,
                   "tuning_cutoff": index.get("tuning_cutoff", ""), "modes": modes, "rules_absent": sorted(absent),
                   "results": results, "halves": halves, "fixes": details}, sys.stdout, indent=1)
        print()
        return 0
    print(f"ascendlint: {args.ascendlint}\nbenchmark: {args.root} ({len(entries)} labelled fixes), "
          f"tolerance {args.tolerance} lines, tuning cut-off {index.get('tuning_cutoff') or 'none'}"
          f"{', by trap (a rule or its sweep)' if args.by_trap and not args.by_family else ''}"
          f"{', by family (any rule warning of the same failure)' if args.by_family else ''}\n")
    for half, by_mode in halves.items():
        count = sum(half_of(e) == half for e in entries)
        print(f"{half} half ({count} fixes):\n\n{table(by_mode, modes)}\n")
    if len(halves) > 1:
        print(f"both halves:\n\n{table(results, modes)}")
    if absent:
        print(f"\nrules this ascendlint does not have (counted as not flagged): {', '.join(sorted(absent))}")
    for mode in modes:
        missed = results[mode]["overall"]["missed"]
        print(f"\n{mode}: caught {results[mode]['overall']['caught']}/{len(entries)}")
        if args.verbose:
            for d in details[mode]:
                state = "caught" if d["caught"] else ("flagged after too" if d["before_hit"] else "not flagged")
                print(f"  {d['id']}: {state}")
        elif missed:
            print("  missed: " + ", ".join(missed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
