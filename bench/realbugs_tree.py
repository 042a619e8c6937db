"""Materialise the real-bug benchmark (bench/realbugs/MANIFEST.toml) from bare git clones.

    python bench/realbugs_tree.py [--manifest bench/realbugs/MANIFEST.toml] [--mirror /work/.mirror] \\
        [--out /work/realbugs]

For every ``[[fix]]`` entry the labelled file is written at the fix's first parent and at the fix:

    <out>/pairs/<owner>__<name>/<sha8>/before/<file>     git show <parent>:<file>
    <out>/pairs/<owner>__<name>/<sha8>/after/<file>      git show <sha>:<file>
    <out>/pairs/<owner>__<name>/<sha8>/fix.diff          git show <sha> -- <the entry files of that commit>
    <out>/pairs/<owner>__<name>/<sha8>/COMMIT.txt        sha, parent, author, date and the full message

and ``<out>/index.json`` lists each entry with its labelled line ranges in the before file and the matching ranges
in the after file (see ``derive_labels``), which ``bench/realbugs.py`` scores. ``<out>/README.md`` says how to run
the runner. Nothing is imported or executed; git is only read. The manifest's ``parent`` must be the fix's first
parent; a mismatch or a label that matches nothing is an error (exit status 1).
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

Range = tuple[int, int]  # 1-based, inclusive


@dataclass
class Entry:
    repo: str
    sha: str
    parent: str
    file: str
    rule: str
    subject: str = ""
    note: str = ""
    lines: list[list[int]] = field(default_factory=list)
    match: str = ""
    after: list[list[int]] = field(default_factory=list)
    # added after the benchmark was split: measured, never read while changing a rule, whatever its date
    measured: bool = False

    @property
    def pair_dir(self) -> str:
        return f"pairs/{self.repo.replace('/', '__')}/{self.sha[:8]}"

    @property
    def ident(self) -> str:
        stem = Path(self.file).stem
        return f"{self.repo.split('/')[1]}-{self.sha[:8]}-{stem}-{self.rule}"


def load_manifest(path: Path) -> list[Entry]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Entry(**item) for item in data.get("fix", [])]


def tuning_cutoff(path: Path) -> str:
    """The manifest's ``tuning-cutoff`` (an ISO date, ``""`` when absent): fixes committed before it are the tuning
    half; the ones on or after it, and every entry marked ``measured``, are the measured half."""
    return str(tomllib.loads(path.read_text(encoding="utf-8")).get("tuning-cutoff", ""))


def half_of(date: str, cutoff: str, measured: bool) -> str:
    """``tuning`` or ``measured``, from the fix's commit date (``%cI``, compared in UTC) and the cut-off."""
    if measured or not cutoff:
        return "measured" if measured else "tuning"
    from datetime import datetime, timezone

    when = datetime.fromisoformat(date).astimezone(timezone.utc).date().isoformat()
    return "tuning" if when < cutoff else "measured"


def merge(lines: list[int]) -> list[Range]:
    """Sorted 1-based line numbers as inclusive ranges of consecutive lines."""
    ranges: list[list[int]] = []
    for line in sorted(set(lines)):
        if ranges and line == ranges[-1][1] + 1:
            ranges[-1][1] = line
        else:
            ranges.append([line, line])
    return [(a, b) for a, b in ranges]


def _opcodes(before: list[str], after: list[str]):
    return difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()


def changed_lines(before: list[str], after: list[str]) -> list[int]:
    """1-based lines of ``before`` that the change removes or replaces."""
    out = []
    for tag, i1, i2, _j1, _j2 in _opcodes(before, after):
        if tag in ("replace", "delete"):
            out.extend(range(i1 + 1, i2 + 1))
    return out


def map_ranges(before: list[str], after: list[str], ranges: list[Range]) -> list[Range]:
    """The after-file ranges that correspond to ``ranges`` of the before file.

    Unchanged lines map one to one; a line in a replaced block maps to the whole replacement; a deleted line maps
    to the line where the deletion happened. Each before range maps to the span of its lines' images.
    """
    codes = _opcodes(before, after)
    last = max(len(after), 1)

    def image(line: int) -> Range:
        i = line - 1
        for tag, i1, i2, j1, j2 in codes:
            if i1 <= i < i2:
                if tag == "equal":
                    return (j1 + (i - i1) + 1, j1 + (i - i1) + 1)
                if tag == "replace":
                    return (j1 + 1, j2)
                return (min(j1 + 1, last), min(j1 + 1, last))  # delete
        return (last, last)

    out = []
    for start, end in ranges:
        images = [image(line) for line in range(start, end + 1)]
        out.append((min(a for a, _ in images), max(b for _, b in images)))
    return out


def derive_labels(before_text: str, after_text: str, lines: list[list[int]] | None = None, match: str = "",
                  after: list[list[int]] | None = None) -> tuple[list[Range], list[Range]]:
    """(before ranges, after ranges) of one entry.

    ``lines`` gives the before ranges outright; otherwise ``match`` selects, among the before lines the fix removes
    or changes, those matching the regex (consecutive lines merged). The after ranges are ``after`` when given,
    else the images of the before ranges (``map_ranges``).
    """
    before, after_lines = before_text.splitlines(), after_text.splitlines()
    if lines:
        ranges = [(int(a), int(b)) for a, b in lines]
    elif match:
        pattern = re.compile(match)
        ranges = merge([n for n in changed_lines(before, after_lines) if pattern.search(before[n - 1])])
    else:
        raise ValueError("an entry needs `lines` or `match`")
    if after:
        return ranges, [(int(a), int(b)) for a, b in after]
    return ranges, map_ranges(before, after_lines, ranges)


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True).stdout


README = """# Real-bug benchmark (materialised)

Before/after pairs of upstream fixes of catalog traps, labelled with the rule each should trip and the lines.
Built by `bench/realbugs_tree.py` on the `realbugs` branch from `bench/realbugs/MANIFEST.toml`; `index.json` has
every entry's labelled ranges. Third-party code: read it here, never commit it.

Run the scorer with any build of ascendlint (it lints by subprocess, `--format json --no-cache --exit-zero`,
at the default set, with `--select ALL`, and with each labelled rule selected alone):

    python bench/realbugs.py --ascendlint .venv/bin/ascendlint
    python bench/realbugs.py --ascendlint ... --json > scores.json   # machine-readable
    python bench/realbugs.py --ascendlint ... --rules ASC105,ASC202 --modes default

A fix counts as caught when a finding of the labelled rule lies within the tolerance (default 2 lines) of a
labelled before range and no finding of that rule lies within the tolerance of the matching after ranges.
The baseline figures (and what each mode means) are in `docs/precision.md`, section "Real-bug benchmark".
"""


def materialise(entries: list[Entry], mirror: Path, out: Path, cutoff: str = "") -> tuple[list[dict], list[str]]:
    index, errors = [], []
    by_commit: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        by_commit.setdefault((entry.repo, entry.sha), []).append(entry.file)
    for entry in entries:
        gitdir = mirror / entry.repo.replace("/", "+") / "repo"
        try:
            parent = git(gitdir, "rev-parse", f"{entry.sha}^1").decode().strip()
            before = git(gitdir, "show", f"{entry.parent}:{entry.file}")
            after = git(gitdir, "show", f"{entry.sha}:{entry.file}")
        except (subprocess.CalledProcessError, FileNotFoundError) as exc:
            errors.append(f"{entry.ident}: cannot read from {gitdir}: {exc}")
            continue
        if parent != entry.parent:
            errors.append(f"{entry.ident}: manifest parent {entry.parent[:10]} is not the first parent {parent[:10]}")
            continue
        before_text, after_text = before.decode("utf-8", "replace"), after.decode("utf-8", "replace")
        try:
            before_ranges, after_ranges = derive_labels(before_text, after_text, entry.lines, entry.match,
                                                        entry.after)
        except (ValueError, re.error) as exc:
            errors.append(f"{entry.ident}: {exc}")
            continue
        if not before_ranges:
            errors.append(f"{entry.ident}: `match` selects no changed line")
            continue
        if max(b for _, b in before_ranges) > len(before_text.splitlines()):
            errors.append(f"{entry.ident}: a labelled line is past the end of the before file")
            continue
        pair = out / entry.pair_dir
        for side, data in (("before", before), ("after", after)):
            dst = pair / side / entry.file
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
        files = sorted(set(by_commit[(entry.repo, entry.sha)]))
        (pair / "fix.diff").write_bytes(git(gitdir, "show", "--format=", entry.sha, "--", *files))
        meta = git(gitdir, "log", "-1", "--format=sha: %H%nparent: %P%nauthor: %an <%ae>%ndate: %aI%n%n%B", entry.sha)
        (pair / "COMMIT.txt").write_bytes(meta)
        record = asdict(entry)
        date = git(gitdir, "log", "-1", "--format=%cI", entry.sha).decode().strip()
        record.update(date=date, half=half_of(date, cutoff, entry.measured))
        record.update(id=entry.ident, before_path=f"{entry.pair_dir}/before/{entry.file}",
                      after_path=f"{entry.pair_dir}/after/{entry.file}",
                      before_ranges=[list(r) for r in before_ranges], after_ranges=[list(r) for r in after_ranges])
        index.append(record)
    return index, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=HERE / "realbugs" / "MANIFEST.toml")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path("/work/realbugs"))
    args = parser.parse_args(argv)
    entries = load_manifest(args.manifest)
    idents = [e.ident for e in entries]
    args.out.mkdir(parents=True, exist_ok=True)
    cutoff = tuning_cutoff(args.manifest)
    index, errors = materialise(entries, args.mirror, args.out, cutoff)
    counts: dict[str, int] = {}
    for record in index:  # the same commit, file stem and rule more than once (several labelled places): number them
        base = record["id"]
        if idents.count(base) > 1:
            counts[base] = counts.get(base, 0) + 1
            record["id"] = f"{base}-{counts[base]}"
    (args.out / "index.json").write_text(json.dumps({"tuning_cutoff": cutoff, "entries": index}, indent=1) + "\n",
                                         encoding="utf-8")
    (args.out / "pyproject.toml").write_text("[tool.ascendlint]\n", encoding="utf-8")
    rules: dict[str, int] = {}
    for record in index:
        rules[record["rule"]] = rules.get(record["rule"], 0) + 1
    listing = ["", "## Labelled fixes", "", "| id | rule | half | before lines | commit subject |",
               "|---|---|---|---|---|"]
    for record in index:
        spans = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in record["before_ranges"])
        subject = record["subject"].replace("|", "/")
        listing.append(f"| `{record['id']}` | {record['rule']} | {record['half']} | {spans} | {subject} |")
    counts_line = ", ".join(f"{k} {v}" for k, v in sorted(rules.items()))
    (args.out / "README.md").write_text(README + f"\n{len(index)} labelled fixes: {counts_line}.\n"
                                        + "\n".join(listing) + "\n", encoding="utf-8")
    print(f"{len(index)} labelled fixes from {len({(r['repo'], r['sha']) for r in index})} commits written to "
          f"{args.out}: " + ", ".join(f"{k} {v}" for k, v in sorted(rules.items())))
    halves = {h: sum(r["half"] == h for r in index) for h in ("tuning", "measured")}
    print(f"tuning half (before {cutoff or 'no cut-off'}): {halves['tuning']}; measured half: {halves['measured']}")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
