"""`--watch` lints again once a change has settled: a save that truncates the file and then writes it is linted on
what it finished writing, not on the empty file between the two steps."""

from __future__ import annotations

from ascendlint.cli import watch


def test_a_change_saved_in_steps_is_linted_once_the_files_stop_changing(monkeypatch):
    # the files as each poll sees them: unchanged after the first run, then truncated, then written, then still
    polls = iter(["before", "before", "truncated", "written", "written", "written"])
    seen: list[str] = []
    current = {"state": "before"}

    def fake_snapshot(_paths):
        current["state"] = next(polls)
        return current["state"]

    monkeypatch.setattr(watch, "snapshot", fake_snapshot)
    monkeypatch.setattr(watch.time, "sleep", lambda _seconds: None)
    watch.watch_and_rerun([], lambda: seen.append(current["state"]), interval=0.0, rounds=2)
    assert seen == ["before", "written"]
