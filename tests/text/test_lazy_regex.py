"""A lazy pattern answers like the compiled one and compiles only when first used."""

from __future__ import annotations

import re

from ascendlint.text.lazy_regex import lazy


def test_a_lazy_pattern_answers_every_method_as_the_compiled_pattern_does():
    source, flags = r"(?P<word>num_?\w*heads?)", re.IGNORECASE
    compiled, deferred = re.compile(source, flags), lazy(source, flags)
    text = "NUM_HEADS, n_heads and num_kv_heads"
    assert deferred.search(text).group("word") == compiled.search(text).group("word")
    assert deferred.match(text).span() == compiled.match(text).span()
    assert deferred.fullmatch("Num_Heads") is not None and deferred.fullmatch("heads!") is None
    assert [m.span() for m in deferred.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert deferred.findall(text) == compiled.findall(text)
    assert deferred.sub("H", text) == compiled.sub("H", text)
    assert deferred.split(text) == compiled.split(text)
    assert deferred.pattern == source and deferred.compiled.flags == compiled.flags


def test_nothing_is_compiled_before_the_first_use(monkeypatch):
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *args: compiled.append(args) or real(*args))
    deferred = lazy(r"stride_?[a-z]?_?(b|z)$", re.IGNORECASE)
    assert compiled == []
    assert deferred.search("stride_b") and deferred.search("STRIDE_Z")
    assert len(compiled) == 1  # once, however often it is used
