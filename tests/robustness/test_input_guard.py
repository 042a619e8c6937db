"""One input guard for every command that reads user files (``check``, ``ub``, ``--add-noqa``, standard input, the
editor server): no command hangs on a FIFO, crashes on an encoding or nesting, or takes in more than the limit."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from ascendlint.files import source
from tests.conftest import REPO, run_cli
from tests.robustness.conftest import FIXED_KERNEL, KERNEL

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def _run(*args: str, cwd, stdin: bytes | None = None, timeout: int = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "ascendlint", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=env, timeout=timeout)


# -- ascendlint ub ----------------------------------------------------------------------------------------------


@needs_fifo
def test_ub_does_not_block_on_a_fifo(tmp_path):
    """A FIFO named ``.py`` blocked ``ascendlint ub`` for ever."""
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / "k.py")
    os.mkfifo(tmp_path / "named.py")
    for named in (".", "named.py"):
        result = _run("ub", named, cwd=tmp_path, timeout=30)
        assert result.returncode == 0, result.stderr
        assert b"not a regular file" in result.stderr


def test_ub_refuses_deep_nesting_instead_of_crashing(tmp_path):
    """3,000 nested parentheses killed ``ascendlint ub`` (SIGSEGV in libcst's parser)."""
    (tmp_path / "k.py").write_text("import triton\nx = " + "(" * 3000 + "1" + ")" * 3000 + "\n")
    result = _run("ub", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"cannot be parsed" in result.stderr and b"nest" in result.stderr


def test_ub_refuses_an_oversized_file_without_reading_it_whole(tmp_path):
    with open(tmp_path / "k.py", "wb") as handle:
        handle.write(b"import triton\n")
        handle.truncate(8 << 30)  # sparse
    result = _run("ub", "k.py", cwd=tmp_path, timeout=30)
    assert result.returncode == 0 and b"over the 1 MiB limit" in result.stderr


@pytest.mark.parametrize("coding", ["idna", "punycode", "unicode_escape"])
def test_ub_reads_odd_encodings_without_failing(tmp_path, coding):
    (tmp_path / "k.py").write_bytes(f"# coding: {coding}\n".encode() + KERNEL.encode())
    result = _run("ub", "k.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert b"failed unexpectedly" not in result.stderr


# -- --fix and --diff with encodings whose codecs raise their own errors ---------------------------------------


@pytest.mark.parametrize("mode", ["--fix", "--diff"])
def test_an_idna_coding_comment_does_not_end_the_run(tmp_path, mode):
    """``# coding: idna`` ended a whole ``--fix``/``--diff`` run with "failed unexpectedly"."""
    (tmp_path / "a.py").write_bytes(b"# coding: idna\n" + KERNEL.encode())
    (tmp_path / "b.py").write_text(KERNEL)
    result = _run("check", ".", mode, "--no-cache", cwd=tmp_path)
    assert b"failed unexpectedly" not in result.stderr, result.stderr
    assert result.returncode in (1, 2)
    if mode == "--fix":
        assert (tmp_path / "b.py").read_text() == FIXED_KERNEL  # the other file was still fixed


def test_a_codec_error_while_decoding_is_a_decode_error():
    with pytest.raises(source.SourceDecodeError):
        source.decode_source(b"# coding: idna\nx = 1\n.xn--.\n")  # idna raises UnicodeError, not a decode error


# -- --add-noqa has --fix's guards -------------------------------------------------------------------------------


def test_add_noqa_never_writes_a_file_that_would_not_read_back(tmp_path):
    """On a ``unicode_escape`` file the whole program became one comment line."""
    path = tmp_path / "k.py"
    original = b"# coding: unicode_escape\n" + KERNEL.encode()
    path.write_bytes(original)
    result = run_cli("check", str(path), "--add-noqa", "--no-cache")
    assert path.read_bytes() == original
    assert result.returncode == 2 and "would not read back" in result.stderr and "k.py" in result.stderr


def test_add_noqa_goes_on_past_an_undecodable_file(tmp_path):
    """One undecodable file crashed the run."""
    (tmp_path / "bad.py").write_bytes(b"import triton\nx = '\xff'\n")
    (tmp_path / "good.py").write_text(KERNEL)
    result = run_cli("check", str(tmp_path), "--add-noqa", "--no-cache")
    assert "failed unexpectedly" not in result.stderr and "Traceback" not in result.stderr
    assert "# noqa: ASC101" in (tmp_path / "good.py").read_text()
    assert "Added 1 noqa code." in result.stderr


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes read-only files")
def test_add_noqa_names_a_read_only_file_and_goes_on(tmp_path):
    _read_only_case(tmp_path)


def test_add_noqa_names_a_file_it_may_not_write_and_goes_on(tmp_path, monkeypatch):
    from ascendlint.fixes import add_noqa

    def refuse(path, data, expected_digest=None):
        if path.endswith("locked.py"):
            raise source.NotWritable(13, "the file is read-only (mode 0444)")
        return real(path, data, expected_digest)

    real = add_noqa.atomic_write
    monkeypatch.setattr(add_noqa, "atomic_write", refuse)
    from click.testing import CliRunner

    from ascendlint.cli import main

    (tmp_path / "locked.py").write_text(KERNEL)
    (tmp_path / "open.py").write_text(KERNEL)
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--add-noqa", "--no-cache"])
    assert result.exit_code == 2
    assert "locked.py: no `# noqa` added: the file cannot be written: the file is read-only" in result.output
    assert "# noqa: ASC101" in (tmp_path / "open.py").read_text()


def _read_only_case(tmp_path):
    locked, other = tmp_path / "locked.py", tmp_path / "open.py"
    locked.write_text(KERNEL)
    other.write_text(KERNEL)
    locked.chmod(stat.S_IRUSR)
    result = run_cli("check", str(tmp_path), "--add-noqa", "--no-cache")
    assert result.returncode == 2 and "locked.py" in result.stderr and "read-only" in result.stderr
    assert "# noqa: ASC101" in other.read_text() and locked.read_text() == KERNEL


# -- standard input and the editor's buffers ---------------------------------------------------------------------


def test_standard_input_over_the_limit_is_refused_not_read_whole(tmp_path):
    big = b"import triton\n" + b"#" * (2 * source.MAX_SOURCE_BYTES) + b"\n"
    result = _run("check", "-", "--no-cache", cwd=tmp_path, stdin=big)
    assert result.returncode == 2 and b"standard input is over the 1 MiB limit" in result.stderr
    fixed = _run("check", "-", "--fix", "--no-cache", cwd=tmp_path, stdin=big)
    assert fixed.stdout == big  # passed through untouched


def test_the_server_refuses_a_document_over_the_limit(tmp_path):
    from ascendlint import server

    text = "import triton\n" + "x = 1\n" * (source.MAX_SOURCE_BYTES // 6 + 10)

    class Linter:
        rules = []

        def _classes(self, rules):
            return []

    (found,) = server._refused_as_too_large(text, "k.py", Linter())
    assert found.code == "ASC001" and "over the 1 MiB limit" in found.message
    assert server._refused_as_too_large("import triton\n", "k.py", Linter()) is None
