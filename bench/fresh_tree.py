"""Materialise the fresh held-out set (bench/fresh/MANIFEST.toml) from bare git clones.

    python bench/fresh_tree.py [--manifest bench/fresh/MANIFEST.toml] [--mirror /work/.mirror] [--out /work/fresh]

For every ``[[repo]]`` entry the files of ``commit`` that match an ``include`` glob and no ``exclude`` glob are
scanned; a file is kept when it holds a Triton kernel (a ``@triton.jit``-style decorator) or, as a host module,
when it imports a module that holds one and launches something with ``name[grid](...)``. Kept files are written to
``<out>/<owner>__<name>/<path>`` and ``<out>/README.md`` lists repository, commit, folders and counts. Nothing is
imported or executed; git is only read (``ls-tree``, ``show``). The clones are ``<mirror>/<owner>+<name>/repo``.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = re.compile(r"^\s*@\s*(?:triton|tt)\s*\.\s*(?:jit|autotune|heuristics)\b|^\s*@\s*jit\b", re.M)
LAUNCH = re.compile(r"\b[A-Za-z_]\w*\s*\[\s*[^\]\n]+\]\s*\(")
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+([\w.]+))", re.M)


@dataclass
class Entry:
    repo: str
    commit: str
    include: list[str]
    exclude: list[str] = field(default_factory=list)
    dist: bool = False
    license: str = ""
    note: str = ""

    @property
    def folder(self) -> str:
        return self.repo.replace("/", "__")


def load_manifest(path: Path) -> list[Entry]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Entry(**item) for item in data.get("repo", [])]


def matches(path: str, globs: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) or (pattern.endswith("/**") and path.startswith(pattern[:-2]))
               for pattern in globs)


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True).stdout


def module_names(path: str) -> set[str]:
    """Dotted names a Python file can be imported as (every suffix of its path, and its package for __init__)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def imported(text: str) -> set[str]:
    names = set()
    for match in IMPORT.finditer(text):
        base = (match[1] or match[3] or "").lstrip(".")
        if base:
            names.add(base)
            for item in (match[2] or "").replace("(", " ").replace(")", " ").split(","):
                item = item.strip().split(" as ")[0].strip()
                if item.isidentifier():
                    names.add(f"{base}.{item}")
    return names


def relative_imports(path: str, text: str) -> set[str]:
    """Repository paths a file reaches with relative imports (``from .x import y``, ``from . import x``)."""
    out = set()
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    for match in re.finditer(r"^\s*from\s+(\.+)([\w.]*)\s+import\s+(.+)", text, re.M):
        base = folder.split("/") if folder else []
        base = base[: len(base) - (len(match[1]) - 1)] if len(match[1]) > 1 else base
        stem = "/".join(base + ([match[2].replace(".", "/")] if match[2] else []))
        out.add(stem)
        for item in match[3].replace("(", " ").replace(")", " ").split(","):
            item = item.strip().split(" as ")[0].strip()
            if item.isidentifier():
                out.add(f"{stem}/{item}" if stem else item)
    return out


def select(entry: Entry, gitdir: Path) -> tuple[list[str], list[str], dict[str, bytes]]:
    """(kernel files, host modules, texts) of one repository at its commit."""
    listing = git(gitdir, "ls-tree", "-r", "--name-only", entry.commit).decode().splitlines()
    candidates = [p for p in listing if p.endswith(".py") and matches(p, entry.include)
                  and not matches(p, entry.exclude)]
    texts = {p: git(gitdir, "show", f"{entry.commit}:{p}") for p in candidates}
    kernels = [p for p, t in texts.items() if KERNEL.search(t.decode("utf-8", "replace"))]
    kernel_modules = {name: p for p in kernels for name in module_names(p)}
    kernel_stems = {p[:-3] for p in kernels} | {p[: -len("/__init__.py")] for p in kernels if p.endswith("__init__.py")}
    hosts = []
    for path, raw in texts.items():
        if path in kernels:
            continue
        text = raw.decode("utf-8", "replace")
        if not LAUNCH.search(text):
            continue
        reaches = any(name in kernel_modules for name in imported(text)) or bool(
            relative_imports(path, text) & kernel_stems)
        if reaches:
            hosts.append(path)
    return sorted(kernels), sorted(hosts), texts


def materialise(entries: list[Entry], mirror: Path, out: Path) -> list[dict]:
    rows = []
    for entry in entries:
        gitdir = mirror / entry.repo.replace("/", "+") / "repo"
        if not gitdir.is_dir():
            print(f"{entry.repo}: no clone at {gitdir}", file=sys.stderr)
            continue
        kernels, hosts, texts = select(entry, gitdir)
        target = out / entry.folder
        if target.exists():
            shutil.rmtree(target)
        for path in kernels + hosts:
            dst = target / path
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(texts[path])
        folders = Counter(p.rsplit("/", 1)[0] if "/" in p else "." for p in kernels)
        rows.append({"entry": entry, "kernels": len(kernels), "hosts": len(hosts), "folders": folders,
                     "lines": sum(texts[p].count(b"\n") for p in kernels + hosts)})
        print(f"{entry.repo}@{entry.commit[:10]}: {len(kernels)} kernel files, {len(hosts)} host modules")
    return rows


def readme(rows: list[dict], extra: str = "") -> str:
    lines = [
        "# Fresh held-out set",
        "",
        "Public repositories with Triton kernels for Ascend NPUs, outside the shared corpus and last round's held-out",
        "set, materialised at fixed commits by `bench/fresh_tree.py` from `bench/fresh/MANIFEST.toml`.",
        "Only Python files holding a Triton kernel are here, plus host modules that import one and launch it.",
        "Third-party code: read it here, never commit it.",
        "",
        "| repository | commit | license | kernel files | host modules | lines | folders (kernel files) | dist |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        e = row["entry"]
        folders = ", ".join(f"`{f}` ({n})" for f, n in sorted(row["folders"].items()))
        lines.append(f"| `{e.folder}` ({e.repo}) | `{e.commit[:12]}` | {e.license} | {row['kernels']} | "
                     f"{row['hosts']} | {row['lines']} | {folders} | {'yes' if e.dist else 'no'} |")
    total_k = sum(r["kernels"] for r in rows)
    total_h = sum(r["hosts"] for r in rows)
    lines += ["", f"Total: {len(rows)} repositories, {total_k} kernel files, {total_h} host modules.", ""]
    for row in rows:
        if row["entry"].note:
            lines.append(f"- `{row['entry'].folder}`: {row['entry'].note}")
    if extra:
        lines += ["", extra.rstrip()]
    lines += ["", "Rebuild: `python bench/fresh_tree.py` (clones under `/work/.mirror`).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=HERE / "fresh" / "MANIFEST.toml")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=Path("/work/fresh"))
    parser.add_argument("--notes", type=Path, help="markdown appended to the README (e.g. index-only sources)")
    parser.add_argument("--ready", action="store_true", help='end the README with the line "READY"')
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = materialise(load_manifest(args.manifest), args.mirror, args.out)
    extra = args.notes.read_text(encoding="utf-8") if args.notes else ""
    text = readme(rows, extra) + ("\nREADY\n" if args.ready else "")
    (args.out / "README.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
