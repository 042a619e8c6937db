"""The result cache: reuse only for identical bytes, path, code and rules; corrupt or shared folders stay safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ascendlint.linter import cache as cache_module
from ascendlint.linter import engine
from ascendlint.catalog import registry
from ascendlint.catalog import rule_index as rule_index_module
from ascendlint.linter.cache import CACHE_DIR, ResultCache, content_key, rules_fingerprint
from ascendlint.workspace.config import Settings
from ascendlint.diagnostics import Diagnostic, Location, Severity
from ascendlint.catalog.registry import all_rules
from ascendlint.linter.runner import Linter, Options
from tests.helpers import rules_named

LAUNCH = textwrap.dedent(
    """
    import triton

    def run(kernel, x):
        kernel[(1,)](x, num_warps=4)
    """
).lstrip()
LINT_ONLY = Options()


@pytest.fixture
def kernel_file(tmp_path) -> Path:
    path = tmp_path / "k.py"
    path.write_text(LAUNCH)
    return path


def _linter(root: Path, rules=None, rule_options=None, use_cache: bool = True) -> Linter:
    settings = Settings(root=root, rule_options=rule_options or {})
    return Linter(rules or list(all_rules()), settings, cache=ResultCache(root) if use_cache else None)


def _lint_and_save(linter: Linter, path: Path, options: Options = LINT_ONLY):
    result = linter.process_path(path, options)
    linter.cache.save()
    return result


def _forbid_linting(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the file was linted again instead of being answered from the cache")

    monkeypatch.setattr(engine, "lint_text", refuse)


def _read_shard(shard: Path) -> dict:
    """A shard's entries (after the checksummed header line)."""
    return json.loads(shard.read_bytes().partition(b"\n")[2])


def _write_shard(shard: Path, entries: dict) -> None:
    """Entries written as ascendlint writes them, with this user's checksum (so only their content is tested)."""
    body = json.dumps(entries).encode()
    shard.write_bytes(cache_module.shard_bytes(shard.stem, body))


def _shards(root: Path) -> list[Path]:
    return sorted((root / CACHE_DIR).glob("*/*.json"))


def test_unchanged_file_is_answered_from_the_cache_with_identical_findings(tmp_path, kernel_file, monkeypatch):
    cold = _lint_and_save(_linter(tmp_path), kernel_file)
    assert [d.code for d in cold.diagnostics] == ["ASC101"]
    _forbid_linting(monkeypatch)
    warm_linter = _linter(tmp_path)
    warm = warm_linter.process_path(kernel_file, LINT_ONLY)
    assert warm.diagnostics == cold.diagnostics
    assert warm.text == cold.text == LAUNCH
    assert (warm_linter.cache.hits, warm_linter.cache.misses) == (1, 0)


def test_clean_file_result_is_cached_too(tmp_path, monkeypatch):
    path = tmp_path / "clean.py"
    path.write_text("import triton\n")
    assert _lint_and_save(_linter(tmp_path), path).diagnostics == []
    _forbid_linting(monkeypatch)
    warm = _linter(tmp_path).process_path(path, LINT_ONLY)
    assert warm.diagnostics == [] and warm.text is None


def test_edited_file_is_linted_again(tmp_path, kernel_file):
    _lint_and_save(_linter(tmp_path), kernel_file)
    kernel_file.write_text(LAUNCH.replace("num_warps=4", "num_warps=4, num_stages=2"))
    linter = _linter(tmp_path)
    assert len(linter.process_path(kernel_file, LINT_ONLY).diagnostics) == 2
    assert linter.cache.misses == 1


@pytest.mark.parametrize("options", [Options(fix=True), Options(diff=True)], ids=["fix", "diff"])
def test_fix_and_diff_never_read_the_cache(tmp_path, kernel_file, options):
    _lint_and_save(_linter(tmp_path), kernel_file)
    linter = _linter(tmp_path)
    result = linter.process_path(kernel_file, options)
    assert [d.code for d in result.fixed] == ["ASC101"]
    assert (linter.cache.hits, linter.cache.misses) == (0, 0)


def test_fix_then_lint_sees_the_fixed_text_not_the_old_entry(tmp_path, kernel_file):
    _lint_and_save(_linter(tmp_path), kernel_file)
    _linter(tmp_path).process_path(kernel_file, Options(fix=True))
    assert _lint_and_save(_linter(tmp_path), kernel_file).diagnostics == []


def test_content_key_depends_on_path_and_bytes():
    keys = {content_key("a.py", b"x"), content_key("b.py", b"x"), content_key("a.py", b"y")}
    assert len(keys) == 3
    assert content_key("a.py", b"x") == content_key("a.py", b"x")


def test_fingerprint_depends_on_rules_and_their_options():
    every = list(all_rules())
    base = rules_fingerprint(every, {})
    assert rules_fingerprint(every, {}) == base
    assert rules_fingerprint(rules_named("ASC101"), {}) != base
    assert rules_fingerprint(every, {"ASC101": {"x": 1}}) != base
    unrelated = rules_fingerprint(rules_named("ASC201"), {"ASC101": {"x": 1}})
    assert unrelated == rules_fingerprint(rules_named("ASC201"), {})


def test_fingerprint_changes_when_a_rule_source_file_changes(monkeypatch):
    rules = rules_named("ASC101")
    before = rules_fingerprint(rules, {})
    monkeypatch.setattr(cache_module, "_STAMPS", {})
    real_stat = os.stat

    def touched(name, *args, **kwargs):
        info = real_stat(name, *args, **kwargs)
        if str(name).endswith("asc101_launch_num_warps.py"):
            return os.stat_result((*info[:8], info.st_mtime + 5, info[9]))
        return info

    monkeypatch.setattr(cache_module.os, "stat", touched)
    assert rules_fingerprint(rules, {}) != before


def test_other_rule_selection_does_not_reuse_findings(tmp_path, kernel_file):
    _lint_and_save(_linter(tmp_path), kernel_file)
    linter = _linter(tmp_path, rules=rules_named("ASC2"))
    assert linter.process_path(kernel_file, LINT_ONLY).diagnostics == []
    assert linter.cache.misses == 1


@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00\xff not json", b"[1, 2]", b'{"k": "v"}', b"{" * 5000],
    ids=["empty", "binary", "list", "wrong-entry", "deep"],
)
def test_corrupt_shard_reads_as_a_miss_and_is_replaced(tmp_path, kernel_file, garbage):
    _lint_and_save(_linter(tmp_path), kernel_file)
    (shard,) = _shards(tmp_path)
    shard.write_bytes(garbage)
    linter = _linter(tmp_path)
    assert [d.code for d in _lint_and_save(linter, kernel_file).diagnostics] == ["ASC101"]
    assert linter.cache.misses == 1
    assert len(_read_shard(shard)) == 1


@pytest.mark.parametrize(
    "record",
    [{"code": "ASC101"}, "not a record", {"code": "ASC101", "fix": None, "severity": "catastrophic"}, 7],
    ids=["missing-fields", "string", "bad-severity", "number"],
)
def test_corrupt_entry_reads_as_a_miss(tmp_path, kernel_file, record):
    _lint_and_save(_linter(tmp_path), kernel_file)
    (shard,) = _shards(tmp_path)
    entries = _read_shard(shard)
    for entry in entries.values():
        entry[1] = [record]
    _write_shard(shard, entries)
    linter = _linter(tmp_path)
    assert [d.code for d in linter.process_path(kernel_file, LINT_ONLY).diagnostics] == ["ASC101"]
    assert linter.cache.misses == 1


def test_two_runs_sharing_the_folder_keep_both_entries(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(LAUNCH)
    second.write_text(LAUNCH.replace("num_warps", "num_stages"))
    one, two = _linter(tmp_path), _linter(tmp_path)
    one.process_path(first, LINT_ONLY)
    two.process_path(second, LINT_ONLY)
    one.cache.save()
    two.cache.save()
    (shard,) = _shards(tmp_path)
    assert len(_read_shard(shard)) == 2
    third = _linter(tmp_path)
    third.process_path(first, LINT_ONLY)
    third.process_path(second, LINT_ONLY)
    assert (third.cache.hits, third.cache.misses) == (2, 0)


def test_warm_run_rewrites_nothing(tmp_path, kernel_file):
    _lint_and_save(_linter(tmp_path), kernel_file)
    (shard,) = _shards(tmp_path)
    before = shard.stat().st_mtime_ns
    _lint_and_save(_linter(tmp_path), kernel_file)
    assert shard.stat().st_mtime_ns == before
    assert not [p for p in shard.parent.iterdir() if p.suffix == ".tmp"]


def test_expired_entries_are_dropped_on_save(tmp_path, kernel_file):
    other = tmp_path / "other.py"
    other.write_text(LAUNCH)
    _lint_and_save(_linter(tmp_path), other)
    (shard,) = _shards(tmp_path)
    entries = _read_shard(shard)
    for entry in entries.values():
        entry[0] = time.time() - cache_module._EXPIRY_SECONDS - 1
    _write_shard(shard, entries)
    _lint_and_save(_linter(tmp_path), kernel_file)
    assert len(_read_shard(shard)) == 1


def test_internal_errors_are_not_cached(tmp_path):
    crash = Diagnostic("ASC002", "internal-error", Severity.ERROR, "crashed", "k.py", Location(1, 1), Location(1, 1))
    cache = ResultCache(tmp_path)
    cache.put("f", "k", [crash])
    assert cache.get("f", "k", "k.py") is None


def test_unwritable_cache_folder_never_fails_the_run(tmp_path, kernel_file):
    (tmp_path / CACHE_DIR).write_text("a file where the folder should be")
    linter = _linter(tmp_path)
    assert [d.code for d in _lint_and_save(linter, kernel_file).diagnostics] == ["ASC101"]


def test_cli_writes_the_cache_and_no_cache_does_not(cli, write, tmp_path):
    path = write("k.py", LAUNCH)
    (tmp_path / "pyproject.toml").write_text("[tool.ascendlint]\n")
    skipped = cli("check", str(path), "--no-cache", "--format", "json")
    assert not (tmp_path / CACHE_DIR).exists()
    cold = cli("check", str(path), "--format", "json")
    assert _shards(tmp_path) and (tmp_path / CACHE_DIR / ".gitignore").exists()
    warm = cli("check", str(path), "--format", "json")
    assert skipped.returncode == cold.returncode == warm.returncode == 1
    assert skipped.stdout == cold.stdout == warm.stdout
    assert json.loads(warm.stdout)[0]["code"] == "ASC101"


# -- the rule index: rule metadata without importing the rules ------------------------------------------------------
@pytest.fixture
def user_cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "user-cache"
    monkeypatch.setenv(rule_index_module.CACHE_ENV, str(folder))
    return folder


def test_rule_index_is_read_back_without_loading_the_rules(user_cache, monkeypatch):
    fresh = rule_index_module.rule_index()
    assert [info.code for info in fresh] == [rule.code for rule in all_rules()]
    assert len(list(user_cache.glob("rules-*.json"))) == 1

    def refuse():
        raise AssertionError("the rules were imported although the stored index is current")

    monkeypatch.setattr(registry, "all_rules", refuse)
    assert rule_index_module.rule_index() == fresh


@pytest.mark.parametrize("damage", ["corrupt", "edited-rule"])
def test_stale_or_corrupt_rule_index_is_rebuilt(user_cache, damage):
    fresh = rule_index_module.rule_index()
    (stored,) = user_cache.glob("rules-*.json")
    if damage == "corrupt":
        stored.write_bytes(b"\x00{")
    else:
        document = json.loads(stored.read_text())
        source = next(iter(document["sources"]))
        document["sources"][source] = f"{source}:0:0"
        stored.write_text(json.dumps(document))
    assert rule_index_module._read(stored) is None
    assert rule_index_module.rule_index() == fresh


def test_index_entries_resolve_to_the_registered_classes(user_cache):
    assert rule_index_module.rule_classes(rule_index_module.rule_index()) == list(all_rules())


def test_no_cache_neither_reads_nor_writes_the_rule_index(user_cache, monkeypatch):
    assert rule_index_module.rule_index(use_stored=False)
    assert not user_cache.exists()


FAST_PATH_PROBE = """
import sys
from ascendlint.cli import main
try:
    main(["check", *sys.argv[1:]])
except SystemExit:
    pass
print("libcst imported:", "libcst" in sys.modules)
"""


def test_files_answered_by_prefilter_or_cache_never_import_libcst(tmp_path, kernel_file):
    (tmp_path / "pyproject.toml").write_text("[tool.ascendlint]\n")
    plain = tmp_path / "plain.py"
    plain.write_text("def add(a, b):\n    return a + b\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           rule_index_module.CACHE_ENV: str(tmp_path / "user-cache")}
    runs = [
        subprocess.run([sys.executable, "-c", FAST_PATH_PROBE, str(plain), str(kernel_file)], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=120)
        for _ in range(2)
    ]
    assert "libcst imported: True" in runs[0].stdout  # the first run lints the kernel and stores the index
    assert "ASC101" in runs[1].stdout and "libcst imported: False" in runs[1].stdout, runs[1].stdout + runs[1].stderr


def test_the_code_stamp_covers_the_shared_analysis():
    from ascendlint.linter import cache as cache_module

    stamped = {Path(name).name for name, _size, _mtime in cache_module._code_stamp(())}
    assert {"values.py", "grid.py", "distributed.py", "engine.py"} <= stamped


def test_the_code_stamp_covers_every_package_whose_code_decides_findings():
    from ascendlint.linter import cache as cache_module

    package = Path(cache_module.__file__).parent.parent
    stamped = {Path(name).relative_to(package).as_posix() for name, _size, _mtime in
               cache_module._code_stamp(())}
    for module in ("rule.py", "linter/runner.py", "files/source.py", "workspace/config.py", "text/locator.py",
                   "fixes/noqa.py", "catalog/rule_index.py", "analysis/context.py"):
        assert module in stamped, module


def test_the_code_stamp_covers_the_analysis_packages():
    from ascendlint.linter import cache as cache_module

    package = Path(cache_module.__file__).parent.parent
    stamped = {Path(name).relative_to(package).as_posix() for name, _size, _mtime in cache_module._code_stamp(())}
    assert {"analysis/ub/model.py", "analysis/ub/tiles.py", "compiler/configs.py"} <= stamped
