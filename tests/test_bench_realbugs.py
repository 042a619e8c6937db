"""The real-bug benchmark's labelling and scoring (bench/realbugs_tree.py, bench/realbugs.py) on tiny pairs of our own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import realbugs, realbugs_tree
from bench.realbugs import Finding, score, summarise

BEFORE = """\
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)


def launch(x, y, n):
    copy_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, num_warps=4)
"""

AFTER = BEFORE.replace("import triton\n", "import triton\n# the launch keyword is gone\n", 1).replace(
    ", num_warps=4)", ")")


def entry(before_ranges, after_ranges, rule="ASC101", ident="pair"):
    return {"id": ident, "rule": rule, "before_ranges": before_ranges, "after_ranges": after_ranges}


def test_explicit_lines_map_to_the_shifted_after_lines():
    before_ranges, after_ranges = realbugs_tree.derive_labels(BEFORE, AFTER, lines=[[12, 12]])
    assert before_ranges == [(12, 12)]
    # one comment line inserted above and the launch line itself replaced: line 12 becomes line 13
    assert after_ranges == [(13, 13)]
    assert "copy_kernel[" in AFTER.splitlines()[12]


def test_unchanged_lines_map_one_to_one():
    _, after_ranges = realbugs_tree.derive_labels(BEFORE, AFTER, lines=[[6, 7]])
    assert after_ranges == [(7, 8)]


def test_match_selects_only_lines_the_fix_changed():
    before = "a = f(num_warps=4)\nb = 1\nc = g(num_warps=8)\n"
    after = "a = f()\nb = 1\nc = g(num_warps=8)\n"  # the second num_warps is kept by the fix: not a label
    before_ranges, after_ranges = realbugs_tree.derive_labels(before, after, match=r"num_warps")
    assert before_ranges == [(1, 1)]
    assert after_ranges == [(1, 1)]


def test_match_merges_consecutive_lines_and_maps_deletions():
    before = "x = 1\nk(\n    num_warps=4,\n    num_stages=2,\n)\ny = 2\n"
    after = "x = 1\nk(\n)\ny = 2\n"
    before_ranges, after_ranges = realbugs_tree.derive_labels(before, after, match=r"num_(warps|stages)")
    assert before_ranges == [(3, 4)]
    assert after_ranges == [(3, 3)]  # where the deleted lines were


def test_an_entry_needs_lines_or_match():
    with pytest.raises(ValueError):
        realbugs_tree.derive_labels(BEFORE, AFTER)


def test_a_finding_within_the_tolerance_is_a_hit_and_beyond_it_is_not():
    e = entry([(10, 12)], [(10, 12)])
    assert score(e, [Finding("ASC101", 14, 14)], [], tolerance=2).caught
    assert not score(e, [Finding("ASC101", 15, 15)], [], tolerance=2).before_hit
    assert score(e, [Finding("ASC101", 8, 8)], [], tolerance=2).before_hit
    assert not score(e, [Finding("ASC101", 7, 7)], [], tolerance=2).before_hit
    # a multi-line finding counts when any of its rows reaches the widened range
    assert score(e, [Finding("ASC101", 1, 9)], [], tolerance=0).before_hit is False
    assert score(e, [Finding("ASC101", 1, 10)], [], tolerance=0).before_hit


def test_only_the_labelled_rule_counts():
    e = entry([(5, 5)], [(5, 5)], rule="ASC105")
    outcome = score(e, [Finding("ASC101", 5, 5)], [], tolerance=2)
    assert not outcome.before_hit and not outcome.caught


def test_by_trap_a_finding_of_the_rules_sweep_counts_and_of_another_rule_does_not():
    e = entry([(5, 5)], [(5, 5)], rule="ASC105")
    sweep = [Finding("ASC110", 5, 5)]
    assert not score(e, sweep, [], tolerance=2).caught
    assert score(e, sweep, [], tolerance=2, by_trap=True).caught
    assert not score(e, [Finding("ASC202", 5, 5)], [], tolerance=2, by_trap=True).caught
    assert not score(e, sweep, [Finding("ASC110", 5, 5)], tolerance=2, by_trap=True).caught  # still there after
    assert not score(entry([(5, 5)], [(5, 5)]), [Finding("ASC110", 5, 5)], [], 2, by_trap=True).caught


def test_by_family_any_rule_warning_of_the_same_failure_counts():
    ub = entry([(5, 5)], [(5, 5)], rule="ASC304")
    compiler = [Finding("ASC307", 6, 6)]
    assert not score(ub, compiler, [], tolerance=2, by_trap=True).caught  # ASC307 is no sweep of ASC304
    assert score(ub, compiler, [], tolerance=2, by_family=True).caught
    assert not score(ub, compiler, [Finding("ASC305", 5, 5)], tolerance=2, by_family=True).caught  # left after
    assert not score(ub, [Finding("ASC202", 5, 5)], [], tolerance=2, by_family=True).caught  # another failure
    narrowed = entry([(5, 5)], [(5, 5)], rule="ASC203")
    assert score(narrowed, [Finding("ASC202", 5, 5)], [], tolerance=2, by_family=True).caught
    assert not score(entry([(5, 5)], [(5, 5)]), [Finding("ASC110", 5, 5)], [], 2, by_family=True).caught


def test_a_finding_left_after_the_fix_means_not_caught():
    e = entry([(5, 5)], [(9, 9)])
    outcome = score(e, [Finding("ASC101", 5, 5)], [Finding("ASC101", 9, 9)], tolerance=2)
    assert outcome.before_hit and outcome.after_hit and not outcome.caught
    # a finding elsewhere in the after file does not undo the catch, and is not counted against it
    elsewhere = score(e, [Finding("ASC101", 5, 5)], [Finding("ASC101", 40, 40)], tolerance=2)
    assert elsewhere.caught


def test_findings_away_from_the_labels_are_counted_separately():
    e = entry([(5, 5)], [(5, 5)])
    outcome = score(e, [Finding("ASC101", 5, 5), Finding("ASC101", 30, 30), Finding("ASC202", 31, 31)], [], 2)
    assert outcome.caught and outcome.other_before == 1


def test_summary_per_rule_and_overall():
    outcomes = [
        realbugs.Outcome("a", "ASC101", True, False),
        realbugs.Outcome("b", "ASC101", True, True),
        realbugs.Outcome("c", "ASC105", False, False),
    ]
    summary = summarise(outcomes)
    assert summary["overall"] == {"labelled": 3, "flagged_before": 2, "caught": 1, "flagged_after": 1,
                                  "missed": ["b", "c"]}
    assert summary["per_rule"]["ASC101"]["caught"] == 1
    assert summary["per_rule"]["ASC105"] == {"labelled": 1, "flagged_before": 0, "caught": 0, "flagged_after": 0,
                                             "missed": ["c"]}


def test_parse_findings_reads_ascendlint_json(tmp_path):
    payload = json.dumps([{"code": "ASC101", "filename": "pairs/x/before/k.py", "location": {"row": 3, "column": 1},
                           "end_location": {"row": 4, "column": 2}}])
    found = realbugs.parse_findings(payload, tmp_path)
    assert found == {"pairs/x/before/k.py": [Finding("ASC101", 3, 4)]}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                               "PATH": "/usr/bin:/bin", "HOME": str(repo)}).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_end_to_end_on_a_synthetic_fix(tmp_path):
    ascendlint = Path(sys.executable).parent / "ascendlint"
    if not ascendlint.exists():
        pytest.skip("the ascendlint console script is not installed next to this interpreter")
    work = tmp_path / "src"
    (work / "ops").mkdir(parents=True)
    _git(work, "init", "-q")
    (work / "ops" / "copy_npu.py").write_text(BEFORE)
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "add kernel")
    (work / "ops" / "copy_npu.py").write_text(AFTER)
    _git(work, "commit", "-q", "-am", "drop num_warps")
    sha, parent = _git(work, "rev-parse", "HEAD"), _git(work, "rev-parse", "HEAD^1")
    mirror = tmp_path / "mirror"
    (mirror / "us+kernels").mkdir(parents=True)
    shutil.copytree(work / ".git", mirror / "us+kernels" / "repo")
    manifest = tmp_path / "MANIFEST.toml"
    manifest.write_text(
        f'[[fix]]\nrepo = "us/kernels"\nsha = "{sha}"\nparent = "{parent}"\nfile = "ops/copy_npu.py"\n'
        f'rule = "ASC101"\nmatch = "num_warps"\n'
        f'[[fix]]\nrepo = "us/kernels"\nsha = "{sha}"\nparent = "{parent}"\nfile = "ops/copy_npu.py"\n'
        f'rule = "ASC105"\nlines = [[6, 7]]\n')
    out = tmp_path / "realbugs"
    assert realbugs_tree.main(["--manifest", str(manifest), "--mirror", str(mirror), "--out", str(out)]) == 0
    index = json.loads((out / "index.json").read_text())["entries"]
    assert [e["before_ranges"] for e in index] == [[[12, 12]], [[6, 7]]]
    assert (out / index[0]["before_path"]).read_text() == BEFORE
    outcomes = realbugs.run_mode("rule", index, str(ascendlint), out, tolerance=2)
    by_rule = {o.rule: o for o in outcomes}
    assert by_rule["ASC101"].caught  # flagged on the launch before, gone after
    assert not by_rule["ASC105"].before_hit  # nothing of that rule on the kernel body lines


def test_a_wrong_parent_is_reported(tmp_path):
    work = tmp_path / "src"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "k.py").write_text(BEFORE)
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "one")
    (work / "k.py").write_text(AFTER)
    _git(work, "commit", "-q", "-am", "two")
    sha = _git(work, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror" / "us+k"
    mirror.mkdir(parents=True)
    shutil.copytree(work / ".git", mirror / "repo")
    manifest = tmp_path / "M.toml"
    manifest.write_text(f'[[fix]]\nrepo = "us/k"\nsha = "{sha}"\nparent = "{sha}"\nfile = "k.py"\n'
                        f'rule = "ASC101"\nlines = [[1, 1]]\n')
    assert realbugs_tree.main(["--manifest", str(manifest), "--mirror", str(tmp_path / "mirror"),
                               "--out", str(tmp_path / "out")]) == 1


def test_the_half_follows_the_commit_date_in_utc_and_the_measured_mark():
    cutoff = "2026-08-23"
    assert realbugs_tree.half_of("2026-08-22T16:25:44+08:00", cutoff, False) == "tuning"
    assert realbugs_tree.half_of("2026-08-22T20:00:00-05:00", cutoff, False) == "measured"  # 01:00 UTC on the 23rd
    assert realbugs_tree.half_of("2024-01-01T00:00:00+00:00", cutoff, True) == "measured"  # added after the split
    assert realbugs_tree.half_of("2030-01-01T00:00:00+00:00", "", False) == "tuning"  # no cut-off: all tuned on
    assert realbugs.half_of({"id": "old-index"}) == "tuning"


def test_the_shipped_manifest_keeps_every_fix_the_rules_were_tuned_on_before_its_cutoff():
    manifest = Path(realbugs_tree.__file__).parent / "realbugs" / "MANIFEST.toml"
    cutoff = realbugs_tree.tuning_cutoff(manifest)
    assert cutoff == "2026-08-23"
    entries = realbugs_tree.load_manifest(manifest)
    assert any(e.measured for e in entries)  # fixes added after the split


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_each_half_is_scored_and_reported_apart(tmp_path, capsys):
    ascendlint = Path(sys.executable).parent / "ascendlint"
    if not ascendlint.exists():
        pytest.skip("the ascendlint console script is not installed next to this interpreter")
    work = tmp_path / "src"
    work.mkdir()
    _git(work, "init", "-q")
    (work / "copy_npu.py").write_text(BEFORE)
    _git(work, "add", ".")
    _git(work, "commit", "-q", "-m", "add kernel")
    (work / "copy_npu.py").write_text(AFTER)
    _git(work, "commit", "-q", "-am", "drop num_warps")
    sha, parent = _git(work, "rev-parse", "HEAD"), _git(work, "rev-parse", "HEAD^1")
    mirror = tmp_path / "mirror" / "us+k"
    mirror.mkdir(parents=True)
    shutil.copytree(work / ".git", mirror / "repo")
    fix = f'repo = "us/k"\nsha = "{sha}"\nparent = "{parent}"\nfile = "copy_npu.py"\nmatch = "num_warps"\n'
    manifest = tmp_path / "M.toml"
    manifest.write_text(f'tuning-cutoff = "2999-01-01"\n[[fix]]\n{fix}rule = "ASC101"\n'
                        f'[[fix]]\n{fix}rule = "ASC105"\nmeasured = true\n')
    out = tmp_path / "out"
    assert realbugs_tree.main(["--manifest", str(manifest), "--mirror", str(tmp_path / "mirror"),
                               "--out", str(out)]) == 0
    index = json.loads((out / "index.json").read_text())
    assert index["tuning_cutoff"] == "2999-01-01"
    assert [e["half"] for e in index["entries"]] == ["tuning", "measured"]
    capsys.readouterr()
    assert realbugs.main(["--ascendlint", str(ascendlint), "--root", str(out), "--modes", "default,review",
                          "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["halves"]["tuning"]["default"]["overall"]["caught"] == 1  # the num_warps fix
    assert report["halves"]["measured"]["review"]["overall"]["labelled"] == 1
    assert realbugs.main(["--ascendlint", str(ascendlint), "--root", str(out), "--modes", "default",
                          "--half", "measured", "--json"]) == 0
    only = json.loads(capsys.readouterr().out)
    assert set(only["halves"]) == {"measured"} and only["results"]["default"]["overall"]["labelled"] == 1
