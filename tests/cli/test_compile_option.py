"""`ascendlint check --compile` and `ascendlint ub` with the compiler: what a user sees."""

import json

import pytest

from ascendlint import cli
from ascendlint import compiler as compiler_package
from tests.compiler.support import needs_compiler
from tests.conftest import run_cli

AUTOTUNED = '''
import triton
import triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 4096}), triton.Config({"BLOCK": 65536})], key=["n"])
@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n), mask=offs < n)
'''


def test_compile_reports_exactly_the_config_the_compiler_rejects_with_its_numbers(tmp_path):
    needs_compiler()
    (tmp_path / "k.py").write_text(AUTOTUNED, encoding="utf-8")
    result = run_cli("check", "k.py", "--compile", "--select", "ASC307,ASC308", "--format", "json", "--no-cache",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    (finding,) = json.loads(result.stdout)
    assert finding["code"] == "ASC307" and finding["location"]["row"] == 5
    assert "at least 256 KB of UB, 192 KB available" in finding["message"] and "BLOCK=65536" in finding["message"]


def test_compile_selects_both_compiler_rules_besides_the_configured_ones():
    assert cli.COMPILER_RULES == ("ASC307", "ASC308")
    assert "--compile" in run_cli("check", "--help").stdout


def test_selected_compiler_rules_say_once_that_they_cannot_run_without_the_extra(monkeypatch, capsys):
    monkeypatch.setattr(compiler_package, "missing", lambda: "ascendnpu-ir not installed")
    monkeypatch.setattr(cli, "_COMPILER_WARNED", [])

    class Enabled:
        def __init__(self, code):
            self.code = code

    cli._warn_compiler_missing([Enabled("ASC101"), Enabled("ASC307")])
    cli._warn_compiler_missing([Enabled("ASC307")])
    assert capsys.readouterr().err == "warning: ASC307 not run: ascendnpu-ir not installed\n"


def test_ub_prints_the_compilers_verdict_beside_the_estimate(tmp_path):
    needs_compiler()
    (tmp_path / "k.py").write_text(AUTOTUNED, encoding="utf-8")
    table = run_cli("ub", "k.py", cwd=tmp_path)
    assert "BiShengIR's verdict beside it" in table.stdout
    # both at the fp16 the estimate and the compile assume for pointers the host does not show
    assert "~  16 KB" in table.stdout and "fits 16 KB" in table.stdout
    assert "~ 256 KB" in table.stdout and "OVER 256 KB UB" in table.stdout
    rows = json.loads(run_cli("ub", "k.py", "--format", "json", cwd=tmp_path).stdout)["configs"]
    assert [r["compiler"]["status"] for r in rows] == ["fits", "overflow"]
    plain = run_cli("ub", "k.py", "--no-compile", cwd=tmp_path)
    assert "BiShengIR" not in plain.stdout


@pytest.mark.parametrize("spelling", ["ASC307", "ASC3"])
def test_compiler_rules_are_opt_in(spelling, tmp_path):
    (tmp_path / "k.py").write_text(AUTOTUNED, encoding="utf-8")
    result = run_cli("check", "k.py", "--no-cache", "--format", "json", cwd=tmp_path)
    assert all(f["code"] not in cli.COMPILER_RULES for f in json.loads(result.stdout or "[]"))


HELPER_MODULE = '''
import triton
import triton.language as tl

WIDTH = tl.constexpr({width})


@triton.jit
def doubled(x_ptr, out_ptr):
    offs = tl.arange(0, WIDTH)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
'''

IMPORTING_KERNEL = '''
import triton
import triton.language as tl

from .tiles import doubled


@triton.jit
def double_kernel(x_ptr, out_ptr):
    doubled(x_ptr, out_ptr)


def double(x, out):
    double_kernel[(1,)](x, out)
'''


def test_a_cached_importer_is_compiled_again_when_its_helper_module_changes(write, tmp_path):
    """The rebuilt kernel holds the imported helper's text: a warm lint cache must not keep the old verdict."""
    needs_compiler()
    write("pkg/__init__.py", "")
    write("pkg/tiles.py", HELPER_MODULE.format(width=1024))
    write("pkg/kernel.py", IMPORTING_KERNEL)

    def rows():
        result = run_cli("check", "pkg", "--compile", "--select", "ASC307", "--format", "json", cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return sorted((f["filename"].replace("\\", "/"), f["location"]["row"]) for f in json.loads(result.stdout))

    assert rows() == []
    (tmp_path / "pkg" / "tiles.py").write_text(HELPER_MODULE.format(width=262144), encoding="utf-8")
    assert ("pkg/kernel.py", 13) in rows()  # kernel.py's bytes are unchanged; the helper it compiles with is not


LAUNCHING_IMPORTER = '''
import torch

from .tiles import doubled


def double(x):
    out = torch.empty_like(x)
    doubled[(1,)](x, out)
    return out
'''


def test_a_helper_only_called_from_an_importers_kernel_is_compiled_there_and_not_alone(write, tmp_path):
    """Compiled at its defaults in its own module as well, the same overflow would be reported twice."""
    needs_compiler()
    write("pkg/__init__.py", "")
    write("pkg/tiles.py", HELPER_MODULE.format(width=262144))
    write("pkg/kernel.py", IMPORTING_KERNEL)
    result = run_cli("check", "pkg", "--compile", "--select", "ASC307", "--format", "json", "--no-cache",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = sorted((f["filename"].replace("\\", "/"), f["location"]["row"]) for f in json.loads(result.stdout))
    assert rows == [("pkg/kernel.py", 13)]


def test_a_jit_function_an_importer_launches_is_still_compiled_in_its_own_module(write, tmp_path):
    needs_compiler()
    write("pkg/__init__.py", "")
    write("pkg/tiles.py", HELPER_MODULE.format(width=262144))
    write("pkg/kernel.py", LAUNCHING_IMPORTER)
    result = run_cli("check", "pkg", "--compile", "--select", "ASC307", "--format", "json", "--no-cache",
                     cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [f["filename"].replace("\\", "/") for f in json.loads(result.stdout)] == ["pkg/tiles.py"]
