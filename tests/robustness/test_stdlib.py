"""The whole standard library of the running interpreter, through every rule and every fix.

Almost no stdlib file mentions triton, so the normal run skips them unparsed; here the prefilter is bypassed
(``engine.lint_text`` on each file's text) so every rule really walks some 1,800 files of real-world Python.
The work is spread over all cores.
"""

from __future__ import annotations

import os
import sysconfig
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from ascendlint.files.source import SourceDecodeError, decode_source
from tests.robustness.harness import examine

pytestmark = pytest.mark.slow

STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Test data that is deliberately not decodable (wrong or missing coding cookie): decoding must fail cleanly.
UNDECODABLE = {"bad_coding.py", "bad_coding2.py", "badsyntax_pep3120.py"}


def stdlib_files() -> list[Path]:
    return sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts and p.is_file())


def survey(path: Path) -> tuple[str, list[str]]:
    """(path, problems) for one file: undecodable files are fine as long as decoding fails with our error."""
    try:
        text = decode_source(path.read_bytes()).text
    except SourceDecodeError:
        return str(path), [] if path.name in UNDECODABLE else ["cannot be decoded"]
    except Exception as exc:  # noqa: BLE001 - reported as a problem
        return str(path), [f"decoding raised {type(exc).__name__}: {exc}"]
    return str(path), examine(text, str(path)).problems


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def test_every_stdlib_file_survives_every_rule_and_fix():
    files = stdlib_files()
    assert len(files) > 500, f"standard library not found under {STDLIB}"
    with ProcessPoolExecutor(_cores()) as pool:
        results = list(pool.map(survey, files, chunksize=8))
    problems = {path: found for path, found in results if found}
    assert problems == {}


def test_stdlib_folder_through_the_cli_has_no_internal_error(cli):
    result = cli("check", str(STDLIB), "--no-cache", "--format", "concise", "--exit-zero")
    assert result.returncode == 0, result.stderr
    assert "ASC002" not in result.stdout
    assert "Failed to lint" not in result.stderr
