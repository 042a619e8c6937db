"""The compiler facts the pages of ASC106, ASC108, ASC109, ASC205 and ASC206 state, probed with triton-ascend 3.2.0
offline (``compile_probes.py`` in a child process: frontend to TTIR, ``triton-adapter-opt`` to Linalg, and the
real launcher and autotuner with a stand-in compile step)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascendlint.catalog.docs import render_rule
from ascendlint.catalog.registry import rule_by_code_or_name

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
pytestmark = pytest.mark.kernels


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> dict:
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("triton-ascend or torch is not installed (the 'kernels' extra)")
    out = tmp_path_factory.mktemp("probes") / "probes.json"
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    env["TRITON_CACHE_DIR"] = str(out.parent / "triton_cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, str(HERE / "compile_probes.py"), str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def _lowered(result: dict) -> bool:
    return result["error"] is None and "func.func" in (result["linalg"] or "")


# -- ASC108 -------------------------------------------------------------------------------------------------------
def test_a_dtype_called_as_a_constructor_fails_in_the_frontend(probed):
    assert "TypeError" in probed["dtype_constructor"]["error"]
    assert "'dtype' object is not callable" in probed["dtype_constructor"]["error"]


def test_the_full_scalar_the_fix_writes_compiles(probed):
    assert _lowered(probed["full_scalar"])


def test_overflow_mode_on_to_fails_but_cast_takes_it(probed):
    assert "unexpected keyword argument 'overflow_mode'" in probed["to_overflow_mode"]["error"]
    for probe in ("method_cast_overflow_mode", "cast_overflow_mode"):
        assert _lowered(probed[probe]), probed[probe]["error"]
        assert 'overflow_mode = "saturate"' in probed[probe]["linalg"]


def _without_names(linalg: str) -> list[str]:
    return [re.sub(r"func\.func @\w+", "func.func @kernel", line) for line in linalg.splitlines()]


@pytest.mark.parametrize("source", ["fp32", "fp16", "bf16", "i32"])
def test_saturate_keeps_the_conversion_and_adds_one_mark_for_the_backend(probed, source):
    plain, saturated = probed[f"cast:{source}"], probed[f"saturate:{source}"]
    assert _lowered(plain) and _lowered(saturated)
    marks = [line for line in _without_names(saturated["linalg"]) if "annotation.mark" in line]
    assert len(marks) == 1 and 'overflow_mode = "saturate"' in marks[0]
    rest = [line for line in _without_names(saturated["linalg"]) if "annotation.mark" not in line]
    assert rest == _without_names(plain["linalg"])


def test_fp8_targets_fail_with_or_without_the_keyword(probed):
    for probe in ("cast:fp32->fp8e4nv", "saturate:fp32->fp8e4nv"):
        assert "unexpected type fp8" in probed[probe]["error"]


def test_asc108_page_quotes_the_errors_the_probes_see(probed):
    page = render_rule(rule_by_code_or_name("ASC108"))
    assert "TypeError(\"'dtype' object is not callable\")" in page
    assert "unexpected keyword argument 'overflow_mode'" in page


# -- ASC106 -------------------------------------------------------------------------------------------------------
def test_cache_hints_reach_ttir_and_are_dropped_by_the_linalg_lowering(probed):
    result = probed["cache_hints"]
    assert _lowered(result)
    assert "evictionPolicy = evict_last" in result["ttir"] and "cacheModifier = cg" in result["ttir"]
    body = result["linalg"]
    assert not re.search(r"evict|cacheModifier|cache_modifier", body)


# -- ASC206 -------------------------------------------------------------------------------------------------------
def test_an_atomic_spin_compiles_to_linalg_with_the_condition_on_a_plain_copy(probed):
    result = probed["atomic_spin"]
    assert _lowered(result)
    loop = result["linalg"][result["linalg"].index("scf.while"):]
    assert 'GenericAtomicRMW = "add"' in loop and 'MemSemantic = "acquire"' in loop
    copied = re.search(r"memref\.copy %\w+, (%\w+)", loop).group(1)
    tensor = re.search(r"(%\w+) = bufferization\.to_tensor " + copied, loop).group(1)
    assert re.search(r"tensor\.extract " + tensor + r"\[", loop), "the condition reads the atomic's result"


def test_a_volatile_spin_is_in_ttir_and_gone_from_linalg(probed):
    result = probed["volatile_spin"]
    assert _lowered(result)
    assert "scf.while" in result["ttir"]
    assert "scf.while" not in result["linalg"]


# -- ASC205 -------------------------------------------------------------------------------------------------------
def _iter_args(ttir: str) -> int:
    loop = re.search(r"scf\.for [^\n]*", ttir).group(0)
    found = re.search(r"iter_args\(([^)]*)\)", loop)
    return len(found.group(1).split(",")) if found else 0


def test_a_parameter_rebound_in_the_task_loop_is_carried_by_the_loop(probed):
    rebound, fresh = probed["scalar_param_in_task_loop"], probed["fresh_local_in_task_loop"]
    assert _lowered(rebound) and _lowered(fresh)
    assert _iter_args(rebound["ttir"]) == _iter_args(fresh["ttir"]) + 1


# -- ASC109 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("placement", ["config-dict", "config-keyword", "launch-keyword"])
def test_every_placement_reaches_the_compile_options_in_3_2_0(probed, placement):
    assert probed[f"options:{placement}"] == {"multibuffer": False, "unit_flag": True, "enable_ubuf_saving": None}


def test_an_unknown_config_keyword_is_dropped_without_a_word_in_3_2_0(probed):
    options = probed["options:config-unknown-keyword"]
    assert "error" not in options and options["enable_ubuf_saving"] is None
