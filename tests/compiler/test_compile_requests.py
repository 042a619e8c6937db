"""What the compiler is asked: the rebuilt kernel text, argument kinds and dtypes, specialisation, launch options.
No compiler needed: these read the linted text only."""

from ascendlint.compiler import configs, kernel_text
from tests.compiler.support import facts_of

MODULE = '''
import torch
import triton
import triton.language as tl
from .elsewhere import helper_table

SCALE = 2
EPS: tl.constexpr = 1e-6
TABLE = helper_table()

@triton.jit
def _square(v):
    return v * v * SCALE

@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, multibuffer=False), triton.Config({"BLOCK": 2048})],
                 key=["n"])
@triton.jit(do_not_specialize=["n"])
def kern(x_in, out, idx, n, stride_x, BLOCK: tl.constexpr):
    base = x_in + tl.program_id(0) * stride_x
    offs = tl.arange(0, BLOCK)
    rows = tl.load(idx + offs)
    tl.store(out + offs, _square(tl.load(base + rows)) + EPS)

def host_only():
    import os
    os.remove("/never")

def run(n):
    x = torch.empty(n, dtype=torch.bfloat16)
    out = torch.empty_like(x)
    kern[(4,)](x, out, None, n, x.stride(-1))
'''


def test_rebuilt_text_holds_the_kernel_its_helpers_and_literal_constants_only():
    facts = facts_of(MODULE)
    text = kernel_text.rebuild(facts, next(k for k in facts.kernels.values() if k.name == "kern"))
    assert "def _square" in text and "def kern" in text
    assert "SCALE = 2" in text and "EPS: tl.constexpr = 1e-6" in text
    for absent in ("host_only", "os.remove", "helper_table", "TABLE", "autotune", "torch"):
        assert absent not in text, absent
    assert '@triton.jit(do_not_specialize=[\'n\'])' in text


def _requests(source=MODULE):
    facts = facts_of(source)
    return configs.requests(facts, "Ascend910B1", "fp16")


def test_every_autotune_config_is_a_request_with_its_launch_options():
    found = _requests()
    assert [r.values["BLOCK"] for r in found] == [1024, 2048]
    assert found[0].job.options == {"multibuffer": False}
    assert found[1].job.options == {}


def test_argument_kinds_dtypes_and_specialisation_follow_the_launcher():
    params = {p["name"]: p for p in _requests()[0].job.params}
    assert params["x_in"] == {"name": "x_in", "kind": "pointer", "dtype": "bf16"}  # dtype= in the host code
    assert params["out"]["dtype"] == "bf16"  # torch.empty_like(x)
    assert params["idx"] == {"name": "idx", "kind": "pointer", "value": "None"}  # None: a constexpr *i8
    assert params["stride_x"] == {"name": "stride_x", "kind": "int", "value": 1}  # x.stride(-1)
    assert params["n"]["kind"] == "int" and params["n"]["value"] is None


def test_pointer_dtypes_the_host_does_not_show_are_assumed_and_named():
    source = MODULE.replace("x = torch.empty(n, dtype=torch.bfloat16)", "x = make(n)")
    (first, _) = _requests(source)
    assert first.assumed == {"x_in": "fp16", "out": "fp16"}


def test_a_pointer_reached_through_a_derived_local_or_a_helper_is_a_pointer():
    source = '''
import triton
import triton.language as tl

@triton.jit
def _put(dst, v):
    tl.store(dst, v)

@triton.jit
def k(a, b, n, BLOCK: tl.constexpr):
    a_row = a + tl.program_id(0) * n
    _put(b + tl.arange(0, BLOCK), tl.load(a_row + tl.arange(0, BLOCK)))
    _put(b, 0.0)

def run(a, b):
    k[(1,)](a, b, 7, BLOCK=64)
'''
    facts = facts_of(source)
    kernel = next(k for k in facts.kernels.values() if k.name == "k")
    assert configs.pointer_params(facts, kernel) == {"a", "b"}
    (request,) = [r for r in configs.requests(facts, "Ascend910B1", "fp16") if r.kernel.name == "k"]
    assert {p["name"]: p["kind"] for p in request.job.params}["n"] == "int"


def test_a_capped_runtime_size_compiles_at_its_cap_and_an_uncapped_one_is_swept():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

def capped(x, n):
    k[(1,)](x, n, BLOCK=min(triton.next_power_of_2(n), 4096))

def uncapped(x, n):
    k[(1,)](x, n, BLOCK=triton.next_power_of_2(n))
'''
    capped, uncapped = _requests(source)
    assert capped.values["BLOCK"] == 4096 and capped.runtime is None
    assert uncapped.runtime == "BLOCK"


def test_a_constexpr_with_no_stated_value_is_not_compiled_and_says_why():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, BLOCK: tl.constexpr, MODE: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 1.0)

def run(x, mode):
    k[(1,)](x, BLOCK=64, MODE=pick(mode))
'''
    (request,) = _requests(source)
    assert request.job is None and "`MODE`" in request.reason


def test_configurations_the_settings_declare_are_compiled_too():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr, FAST: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

def run(x, n):
    k[(1,)](x, n, BLOCK=triton.next_power_of_2(n), FAST=n > 64)
'''
    facts = facts_of(source)
    declared = {"k": [{"BLOCK": 2048, "FAST": True, "x": "bf16", "multibuffer": False}]}
    stated, extra = configs.requests(facts, "Ascend910B1", "fp16", declared)
    assert stated.runtime == "BLOCK"
    assert extra.label.startswith("declared config 1") and extra.values == {"BLOCK": 2048, "FAST": True}
    assert extra.assumed == {} and extra.job.options == {"multibuffer": False}
    assert {p["name"]: p.get("dtype") for p in extra.job.params}["x"] == "bf16"


def test_integer_literals_in_any_base_or_too_long_for_a_launch_are_read_without_a_crash():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, n, m, BLOCK: tl.constexpr):
    tl.store(x + tl.arange(0, BLOCK), 1.0)

def run(x):
    k[(1,)](x, 0x10, ''' + "9" * 5000 + ''', BLOCK=0b1000000)
'''
    (request,) = _requests(source)
    params = {p["name"]: p for p in request.job.params}
    assert params["n"]["value"] == 16 and params["m"]["value"] is None and request.values["BLOCK"] == 64


def test_a_cap_bound_to_a_host_name_is_read_through_the_name():
    source = '''
import triton
import triton.language as tl

@triton.jit
def k(x, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

def run(x, n):
    block = min(triton.next_power_of_2(n), 4096)
    k[(1,)](x, n, BLOCK=block)
'''
    (request,) = _requests(source)
    assert request.values["BLOCK"] == 4096 and request.runtime is None


def test_a_kernel_whose_signature_would_run_code_is_not_rebuilt():
    source = '''
import os
import triton
import triton.language as tl

@triton.jit
def k(x, n: os.getcwd(), B: tl.constexpr, flag=os.getpid()):
    tl.store(x + tl.arange(0, B), 1.0)

@triton.jit
def plain(x, n: int, B: "tl.constexpr", flag=3):
    tl.store(x + tl.arange(0, B), 1.0)

def run(x):
    k[(1,)](x, 4, 64)
    plain[(1,)](x, 4, 64)
'''
    refused, rebuilt = _requests(source)
    assert refused.job is None and "default of `flag` is not a literal" in refused.reason
    assert "B: tl.constexpr" in rebuilt.job.source and "flag=3" in rebuilt.job.source
    assert "n: int" not in rebuilt.job.source and "import os" not in rebuilt.job.source


HOST_DEFAULT = '''
import torch
import triton
import triton.language as tl

@triton.jit
def scaled_copy(x, out, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + offs) * SCALE)

def run(x, scale: int = 3):
    out = torch.empty_like(x)
    scaled_copy[(1,)](x, out, SCALE=scale, BLOCK=1024)
    return out
'''


def test_a_constexpr_passed_on_from_a_host_parameter_is_compiled_at_its_default():
    (request,) = _requests(HOST_DEFAULT)
    assert request.values["SCALE"] == 3
    (without,) = _requests(HOST_DEFAULT.replace("scale: int = 3", "scale: int"))
    assert without.values.get("SCALE") != 3
