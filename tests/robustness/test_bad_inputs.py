"""Files that are not what they seem: each gets a clear message and the documented exit code.

Exit codes (README): 0 nothing to report, 1 findings (an undecodable or unparsable file is an ASC001 finding),
2 a path that cannot be read or written, or any internal failure.
"""

from __future__ import annotations

import os

import pytest

from ascendlint.linter import runner
from ascendlint.files import source
from tests.robustness.conftest import FIXED_KERNEL, KERNEL


def test_invalid_utf8_without_coding_cookie_is_a_decode_finding(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"import triton\nname = '\xff\xfe'\n")
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1
    assert "ASC001" in result.stdout and "cannot be decoded: not valid utf-8 (byte 22" in result.stdout


def test_latin1_coding_cookie_is_honoured_and_fix_keeps_the_encoding(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.encode())
    assert cli("check", str(path), "--format", "concise").stdout.count("ASC101") == 1
    result = cli("check", str(path), "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED_KERNEL.encode()


def test_unknown_coding_cookie_is_a_decode_finding(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"# coding: klingon\n" + KERNEL.encode())
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1 and "cannot be decoded" in result.stdout and "klingon" in result.stdout


@pytest.mark.parametrize(
    "prefix, newline", [(b"", "\n"), (b"\xef\xbb\xbf", "\n"), (b"", "\r\n"), (b"\xef\xbb\xbf", "\r\n")],
    ids=["plain", "bom", "crlf", "bom-crlf"],
)
def test_bom_and_crlf_do_not_move_reported_positions(cli, tmp_path, prefix, newline):
    path = tmp_path / "k.py"
    path.write_bytes(prefix + KERNEL.replace("\n", newline).encode())
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1
    assert f"{path}:5:21: ASC101" in result.stdout


def test_fix_in_a_mixed_line_ending_file_keeps_every_line_ending(cli, tmp_path):
    path = tmp_path / "k.py"
    lines = KERNEL.splitlines(keepends=True)
    mixed = "".join(line.replace("\n", "\r\n") if i % 2 else line for i, line in enumerate(lines))
    path.write_bytes(mixed.encode())
    assert cli("check", str(path), "--fix").returncode == 0
    assert path.read_bytes() == mixed.replace(", num_warps=4", "").encode()


@pytest.mark.parametrize("mentions_triton, code", [(True, 1), (False, 0)])
def test_binary_file_named_py(cli, tmp_path, mentions_triton, code):
    path = tmp_path / "blob.py"
    path.write_bytes(bytes(range(256)) * 4 + (b"triton" if mentions_triton else b""))
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == code
    if mentions_triton:
        assert "cannot be decoded: file contains NUL bytes" in result.stdout


def test_nul_byte_in_a_kernel_file_is_a_decode_finding(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(KERNEL.encode() + b"x = 1\x00\n")
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1 and "NUL bytes" in result.stdout


def test_huge_file_mentioning_triton_is_refused_with_the_limit_named(cli, tmp_path):
    path = tmp_path / "generated.py"
    filler = b"# " + b"x" * 1021 + b"\n"
    with open(path, "wb") as handle:
        handle.write(b"import triton\n")
        handle.writelines(filler for _ in range(50 * 1024))  # 50 MiB
    result = cli("check", str(path))
    assert result.returncode == 2
    assert "over the 1 MiB limit" in result.stderr and "generated.py" in result.stderr


def test_huge_file_that_never_mentions_triton_is_skipped(tmp_path):
    path = tmp_path / "data.py"
    path.write_bytes(b"x = 1\n" * (source.MAX_SOURCE_BYTES // 6 + 10))
    assert source.read_source_bytes(path) == b""


def test_triton_mentioned_across_a_read_chunk_boundary_is_found(tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * ((1 << 20) - 3) + b"triton" + b"\n" * source.MAX_SOURCE_BYTES)
    with pytest.raises(source.SourceTooLarge):
        source.read_source_bytes(path)


def test_folder_named_like_a_python_file_is_walked_not_read(cli, tmp_path):
    folder = tmp_path / "x.py"
    folder.mkdir()
    (folder / "k.py").write_text(KERNEL)
    for target in (tmp_path, folder):
        result = cli("check", str(target), "--format", "concise")
        assert result.returncode == 1 and result.stdout.count("ASC101") == 1, result.stderr


def test_empty_file_is_clean(cli, tmp_path):
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    result = cli("check", str(path))
    assert result.returncode == 0 and "All checks passed!" in result.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode; see the monkeypatched test")
def test_unreadable_file_is_an_error(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    path.chmod(0)
    result = cli("check", str(path))
    assert result.returncode == 2 and "Permission denied" in result.stderr


def test_unreadable_file_is_an_error_even_as_root(run_in_process, tmp_path, monkeypatch):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)

    def refuse(target):
        raise PermissionError(13, "Permission denied", str(target))

    monkeypatch.setattr(runner, "read_source_bytes", refuse)
    result = run_in_process("check", str(path), "--no-cache")
    assert result.exit_code == 2
    assert f"error: Failed to lint {path}: Permission denied" in result.stderr


@pytest.mark.parametrize("kind", ["broken", "loop"])
def test_dangling_symlink_named_explicitly_is_an_error_and_in_a_folder_a_warning(cli, tmp_path, kind):
    link = tmp_path / "link.py"
    link.symlink_to(tmp_path / ("missing.py" if kind == "broken" else "link.py"))
    reason = "broken symbolic link" if kind == "broken" else "symbolic link loop"
    explicit = cli("check", str(link))
    assert explicit.returncode == 2 and f"{link}: {reason}" in explicit.stderr
    walked = cli("check", str(tmp_path))
    assert walked.returncode == 0 and f"warning: skipped {link}: {reason}" in walked.stderr


def test_folder_symlink_loop_is_not_followed(cli, tmp_path):
    (tmp_path / "k.py").write_text(KERNEL)
    (tmp_path / "again").symlink_to(tmp_path, target_is_directory=True)
    result = cli("check", str(tmp_path), "--format", "concise")
    assert result.returncode == 1 and result.stdout.count("ASC101") == 1


def test_fifo_named_like_a_python_file_is_skipped_without_blocking(cli, tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "k.py").write_text(FIXED_KERNEL)
    result = cli("check", str(tmp_path))
    assert result.returncode == 0 and "pipe.py: not a regular file" in result.stderr


def test_file_deleted_after_discovery_is_an_error_and_the_others_are_linted(run_in_process, tmp_path, monkeypatch):
    from ascendlint import cli as cli_module

    doomed, kept = tmp_path / "a_doomed.py", tmp_path / "b_kept.py"
    doomed.write_text(KERNEL)
    kept.write_text(KERNEL)
    discover = cli_module.discover

    def discover_then_delete(paths, settings, **options):
        found = discover(paths, settings, **options)
        doomed.unlink()
        return found

    monkeypatch.setattr(cli_module, "discover", discover_then_delete)
    result = run_in_process("check", str(tmp_path), "--no-cache", "--format", "concise")
    assert result.exit_code == 2
    assert f"Failed to lint {doomed}: No such file or directory" in result.stderr
    assert "b_kept.py:5:21: ASC101" in result.stdout


@pytest.mark.parametrize(
    "body",
    [
        "x = " + "(" * 5000 + "1" + ")" * 5000,
        "x = " + "[" * 3000 + "]" * 3000,
        "x = " + "lambda: " * 6000 + "1",
        "x = " + "-" * 100_000 + "1",
        "x = " + "not " * 60_000 + "1",
    ],
    ids=["parens", "lists", "lambdas", "unary", "not"],
)
def test_absurdly_deep_nesting_is_a_syntax_finding_not_a_crash(cli, tmp_path, body):
    path = tmp_path / "deep.py"
    path.write_text("import triton\n" + body + "\n")
    result = cli("check", str(path), "--format", "concise")
    assert result.returncode == 1, result.stderr
    assert "ASC001" in result.stdout


def test_unexpected_internal_failure_exits_2_with_one_line(run_in_process, tmp_path, monkeypatch):
    from ascendlint import cli as cli_module

    def explode(paths, settings, **options):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(cli_module, "discover", explode)
    result = run_in_process("check", str(tmp_path))
    assert result.exit_code == 2
    assert "error: ascendlint failed unexpectedly (RuntimeError: disk on fire)" in result.stderr


def test_report_that_cannot_be_written_is_an_error_not_a_traceback(cli, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(FIXED_KERNEL)
    # missing folders are created (as ruff does); a folder that is a file cannot be
    result = cli("check", str(path), "--output-file", str(path / "report.txt"))
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "report.txt" in result.stderr and "Traceback" not in result.stderr


def test_a_2_mb_kernel_is_refused_within_a_memory_bound(tmp_path):
    """Linting costs about 0.5 GB per MiB of source (see source.MAX_SOURCE_BYTES); a 2 MB kernel is over the limit
    and is refused without being loaded whole, so the run stays far below what linting it would take."""
    import subprocess
    import sys

    from tests.conftest import REPO

    kernel = (REPO / "reference_kernels" / "allgather_gemm.py").read_text(encoding="utf-8")
    parts, size = [], 0
    while size < 2 * 10**6:
        part = kernel.replace("def ", f"def v{len(parts)}_")
        parts.append(part)
        size += len(part.encode())
    path = tmp_path / "big_kernel.py"
    path.write_text("".join(parts), encoding="utf-8")
    probe = ("import resource, subprocess, sys\n"
             f"run = subprocess.run([sys.executable, '-m', 'ascendlint', 'check', '--no-cache', {str(path)!r}],"
             " capture_output=True, text=True)\n"
             "print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
             "print(run.stderr)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300).stdout
    code, peak_mib = map(int, out.split("\n", 1)[0].split())
    assert code == 2 and "over the 1 MiB limit" in out, out
    assert peak_mib < 200, f"peak RSS {peak_mib} MiB for a refused 2 MB kernel"


@pytest.mark.parametrize("gibibytes", [4, 20])
def test_a_huge_sparse_file_costs_what_its_first_mebibytes_cost(tmp_path, gibibytes):
    """A 4 GiB sparse file without "triton" took 22 s, 20 GiB over 120 s: its size is known before reading, so
    only the first MAX_SCAN_BYTES are looked at."""
    import time

    quiet, kernel = tmp_path / "data.py", tmp_path / "generated.py"
    with open(quiet, "wb") as handle:
        handle.truncate(gibibytes << 30)  # sparse: costs no disk
    with open(kernel, "wb") as handle:
        handle.write(b"import triton\n")
        handle.truncate(gibibytes << 30)
    started = time.monotonic()
    assert source.read_source_bytes(quiet) == b""
    with pytest.raises(source.SourceTooLarge, match=rf"file is {gibibytes * 1024}\.0 MiB, over the 1 MiB limit"):
        source.read_source_bytes(kernel)
    assert time.monotonic() - started < 2


def test_a_file_that_grows_past_the_limit_after_it_was_measured_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "growing.py"
    path.write_bytes(b"import triton\n" + b"#" * source.MAX_SOURCE_BYTES)
    real_fstat = os.fstat
    monkeypatch.setattr(source.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 10, *real_fstat(fd)[7:])))
    with pytest.raises(source.SourceTooLarge):
        source.read_source_bytes(path)
