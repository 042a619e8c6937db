"""A hostile ``.gitignore`` cannot hang discovery: ignore patterns match in time linear in the path, and they match
exactly what pathspec's own expressions match."""

from __future__ import annotations

import random
import time

import pathspec
import pytest

from ascendlint.files.ignore_patterns import compile_spec, linear_regex
from tests.robustness.conftest import KERNEL
from tests.robustness.test_hostile_repositories import run

HOSTILE = [  # pattern, a name it does not match, one it matches
    ("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 60, "a" * 60 + "b"),  # 30 letters took 4.5-30 s, 60 did not end in 120 s
    ("a**a**a**a**a**a**b", "a" * 200, "a" * 200 + "b"),
    ("**/a/**/a/**/a/**/a/**/b", "/".join(["a"] * 400), "/".join(["a"] * 400) + "/b"),  # 100 levels took 5 s
    ("**/*a*a*a*a*a*/**/*a*a*a*b", "/".join(["a" * 40] * 60), "/".join(["a" * 40] * 60) + "/aaab"),
]


@pytest.mark.parametrize("pattern, miss, hit", HOSTILE, ids=["stars", "double-stars-in-a-segment",
                                                             "inner-double-stars", "both"])
def test_a_pathological_pattern_matches_in_milliseconds(pattern, miss, hit):
    spec = compile_spec([pattern])
    started = time.monotonic()
    assert not spec.match_file(miss) and not spec.match_file(miss + "/")
    assert spec.match_file(hit)
    assert time.monotonic() - started < 0.5


def test_the_rewritten_patterns_match_exactly_what_pathspec_matches():
    """The same answers as pathspec's own expressions on 3,000 random patterns and 30 paths each."""
    generator = random.Random(3)
    tokens = ["a", "b", "*", "**", "/", "?", "[ab]", "\\*"]
    compared = 0
    for _ in range(3000):
        pattern = "".join(generator.choice(tokens) for _ in range(generator.randint(1, 7)))
        if generator.random() < 0.1:
            pattern = "!" + pattern
        try:
            reference = pathspec.GitIgnoreSpec.from_lines([pattern])
        except Exception:  # noqa: BLE001 - a pattern pathspec refuses is refused by both
            continue
        ours = compile_spec([pattern])
        for _ in range(30):
            path = "/".join(part for part in "".join(generator.choice("aab/*") for _ in range(
                generator.randint(1, 14))).split("/") if part) or "a"
            for candidate in (path, path + "/"):
                assert ours.match_file(candidate) == reference.match_file(candidate), (pattern, candidate)
                compared += 1
    assert compared > 100_000


def test_plain_patterns_keep_pathspecs_expressions():
    for pattern in ["*.pyc", "build/", "/dist", "**/node_modules", "docs/**/*.md", "a?c"]:
        regex = pathspec.GitIgnoreSpec.from_lines([pattern]).patterns[0].regex.pattern
        assert linear_regex(regex) == regex


def test_a_hostile_gitignore_does_not_hang_the_run(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*a*b\n**/a/**/a/**/a/**/a/**/b\n")
    deep = tmp_path.joinpath(*["a"] * 60)
    deep.mkdir(parents=True)
    (deep / ("a" * 60 + ".py")).write_text(KERNEL)
    started = time.monotonic()
    result = run("check", ".", "--no-cache", "--format", "concise", cwd=tmp_path)
    assert time.monotonic() - started < 20
    assert result.returncode == 1 and "ASC101" in result.stdout
