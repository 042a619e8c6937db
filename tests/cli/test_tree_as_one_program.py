"""A tree linted through the real command: helpers imported from other linted modules are known by their summaries,
serially, in a pool and from the cache, and an edited helper module changes its importers' findings."""

from __future__ import annotations

import json

import pytest

from tests.analysis.test_project import KERNEL, UTILS  # rows below: the files are written without the leading blank line

PROGRAM_ID32 = "program_id32"
WIDENED = UTILS.replace("return tl.program_id(axis)\n", "return tl.program_id(axis).to(tl.int64)\n")


@pytest.fixture
def tree(write, tmp_path):
    write("pkg/__init__.py", "")
    write("pkg/utils.py", UTILS)
    write("pkg/kernel.py", KERNEL.format(helper=PROGRAM_ID32))
    return tmp_path


def _rows(cli, tree, *paths, extra=()):
    result = cli("check", *paths, "--select", "ASC202", "--format", "json", *extra, cwd=tree)
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["filename"].replace("\\", "/"), d["location"]["row"]) for d in json.loads(result.stdout))


def test_the_helper_module_linted_with_its_importer_is_seen(cli, tree):
    alone = _rows(cli, tree, "pkg/kernel.py", extra=("--no-cache",))
    together = _rows(cli, tree, "pkg", extra=("--no-cache",))
    assert alone == [("pkg/kernel.py", 11)]  # an unknown call is not a program id
    assert together == [("pkg/kernel.py", 11), ("pkg/kernel.py", 12)]  # the helper returns an int32 program id


def test_a_pool_gives_what_a_serial_run_gives(cli, tree):
    serial = _rows(cli, tree, "pkg", extra=("--no-cache", "--jobs", "1"))
    pooled = _rows(cli, tree, "pkg", extra=("--no-cache", "--jobs", "2"))
    assert serial == pooled == [("pkg/kernel.py", 11), ("pkg/kernel.py", 12)]


def test_the_cache_keeps_summaries_and_follows_an_edited_helper(cli, tree):
    cold = _rows(cli, tree, "pkg")
    warm = _rows(cli, tree, "pkg")
    assert cold == warm == [("pkg/kernel.py", 11), ("pkg/kernel.py", 12)]
    (tree / "pkg" / "utils.py").write_text(WIDENED.replace("def program_id64", "def unused64"), encoding="utf-8")
    edited = _rows(cli, tree, "pkg")  # kernel.py is unchanged, but what its helper returns is not
    assert edited == [("pkg/kernel.py", 11)]


def test_two_modules_of_one_name_provide_nothing(cli, write, tmp_path):
    write("a/utils.py", UTILS)
    write("b/utils.py", UTILS)
    write("a/kernel.py", KERNEL.format(helper=PROGRAM_ID32).replace("from .utils", "from utils"))
    assert _rows(cli, tmp_path, "a", extra=("--no-cache",)) == [("a/kernel.py", 11), ("a/kernel.py", 12)]
    rows = _rows(cli, tmp_path, "a", "b", extra=("--no-cache",))
    assert rows == [("a/kernel.py", 11)]  # `utils` is ambiguous: no file is linted with another file's helpers
