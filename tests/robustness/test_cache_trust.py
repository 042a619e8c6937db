"""The result cache trusts nothing in its folder: a forged shard, a damaged one and a FIFO are misses, never a way to
hide findings or hang the run."""

from __future__ import annotations

import json
import os
import threading

import pytest

from ascendlint.linter import cache as cache_module
from ascendlint.linter.cache import CACHE_DIR, ResultCache
from ascendlint.workspace.config import Settings
from ascendlint.catalog.registry import all_rules
from ascendlint.linter.runner import Linter, Options

LAUNCH = "import triton\n\ndef run(kernel, x):\n    kernel[(1,)](x, num_warps=4)\n"


@pytest.fixture(autouse=True)
def user_cache(tmp_path, monkeypatch):
    from ascendlint.catalog import rule_index

    monkeypatch.setenv(rule_index.CACHE_ENV, str(tmp_path / "user-cache"))
    monkeypatch.setattr(cache_module, "_KEY", [])


def _run(root):
    linter = Linter(list(all_rules()), Settings(root=root), cache=ResultCache(root))
    result = linter.process_path(root / "k.py", Options())
    linter.cache.save()
    return result, linter.cache


def _shard(root):
    (shard,) = sorted((root / CACHE_DIR).glob("*/*.json"))
    return shard


def _warm(tmp_path):
    (tmp_path / "k.py").write_text(LAUNCH)
    first, _ = _run(tmp_path)
    assert [d.code for d in first.diagnostics] == ["ASC101"]
    return _shard(tmp_path)


def test_a_shard_is_checksummed_with_the_users_key(tmp_path):
    shard = _warm(tmp_path)
    data = shard.read_bytes()
    assert data.startswith(cache_module._MAGIC)
    assert oct((tmp_path / "user-cache" / cache_module._KEY_FILE).stat().st_mode & 0o777) == "0o600"
    _, cache = _run(tmp_path)
    assert cache.hits == 1


def test_a_forged_shard_hides_no_finding(tmp_path):
    shard = _warm(tmp_path)
    header, _, body = shard.read_bytes().partition(b"\n")
    entries = json.loads(body)
    forged = json.dumps({key: [value[0], []] for key, value in entries.items()}).encode()
    for data in (forged,  # plain JSON, as the old format was
                 header + b"\n" + forged,  # the old checksum over a new body
                 cache_module._MAGIC + b"0" * 64 + b"\n" + forged):
        shard.write_bytes(data)
        result, cache = _run(tmp_path)
        assert [d.code for d in result.diagnostics] == ["ASC101"], data[:80]
        assert cache.hits == 0


def test_a_shard_signed_by_another_key_is_a_miss(tmp_path, monkeypatch):
    shard = _warm(tmp_path)
    header, _, body = shard.read_bytes().partition(b"\n")
    entries = {key: [value[0], []] for key, value in json.loads(body).items()}
    forged = json.dumps(entries).encode()
    monkeypatch.setattr(cache_module, "_KEY", [b"k" * 32])  # e.g. the key of whoever committed the folder
    shard.write_bytes(cache_module.shard_bytes(shard.stem, forged))
    monkeypatch.setattr(cache_module, "_KEY", [])
    result, cache = _run(tmp_path)
    assert [d.code for d in result.diagnostics] == ["ASC101"] and cache.hits == 0


@pytest.mark.parametrize("record", [
    "x", {"code": "ASC101"}, {"code": 1, "name": "n", "severity": "warning", "message": "m",
                             "location": [1, 1], "end_location": [1, 2], "fix": None, "noqa_row": None, "url": None},
    {"code": "ASC101", "name": "n", "severity": "warning", "message": "m", "location": [1, -1],
     "end_location": [1, 2], "fix": {"message": "m", "applicability": "safe", "edits": [[5, 2, ""]]},
     "noqa_row": None, "url": None},
])
def test_a_correctly_signed_shard_of_the_wrong_shape_is_a_miss(tmp_path, record):
    shard = _warm(tmp_path)
    _, _, body = shard.read_bytes().partition(b"\n")
    entries = {key: [value[0], [record]] for key, value in json.loads(body).items()}
    data = json.dumps(entries).encode()
    shard.write_bytes(cache_module.shard_bytes(shard.stem, data))
    result, cache = _run(tmp_path)
    assert [d.code for d in result.diagnostics] == ["ASC101"] and cache.hits == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_shard_does_not_hang_the_run(tmp_path):
    shard = _warm(tmp_path)
    shard.unlink()
    os.mkfifo(shard)
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(result=_run(tmp_path)[0]), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():  # unblock the reader, or the test process would hang too
        with open(shard, "wb") as handle:
            handle.write(b"{}")
        pytest.fail("reading a FIFO shard blocked the run")
    assert [d.code for d in outcome["result"].diagnostics] == ["ASC101"]


def test_a_shard_linked_to_an_endless_device_is_a_miss(tmp_path):
    shard = _warm(tmp_path)
    shard.unlink()
    shard.symlink_to("/dev/zero")
    result, cache = _run(tmp_path)
    assert [d.code for d in result.diagnostics] == ["ASC101"] and cache.hits == 0


def test_a_shard_moved_over_another_rule_sets_shard_is_a_miss(tmp_path):
    """The empty shard of a ``--select ASC003`` run, moved over the default run's, made a tree with findings pass:
    the checksum now covers the rules fingerprint (rule set, options, tool version and code) the shard was made
    for, not only its bytes."""
    (tmp_path / "k.py").write_text(LAUNCH)
    rules = list(all_rules())
    narrow = [rule for rule in rules if rule.code == "ASC003"]
    for chosen in (narrow, rules):
        linter = Linter(chosen, Settings(root=tmp_path), cache=ResultCache(tmp_path))
        linter.process_path(tmp_path / "k.py", Options())
        linter.cache.save()
    shards = sorted((tmp_path / CACHE_DIR).glob("*/*.json"), key=lambda p: p.stat().st_size)
    assert len(shards) == 2
    empty, full = shards
    os.replace(empty, full)
    result, cache = _run(tmp_path)
    assert [d.code for d in result.diagnostics] == ["ASC101"] and cache.hits == 0


def test_a_shard_made_for_other_rule_options_is_a_miss(tmp_path):
    (tmp_path / "k.py").write_text(LAUNCH)
    _run(tmp_path)
    (shard,) = (tmp_path / CACHE_DIR).glob("*/*.json")
    _, _, body = shard.read_bytes().partition(b"\n")
    silent = json.dumps({key: [value[0], []] for key, value in json.loads(body).items()}).encode()
    shard.write_bytes(cache_module.shard_bytes(shard.stem + "-other-options", silent))  # signed, for another name
    result, cache = _run(tmp_path)
    assert [d.code for d in result.diagnostics] == ["ASC101"] and cache.hits == 0
