"""Probes of triton-ascend 3.2.0 behind the claims of ASC106, ASC108, ASC109, ASC205 and ASC206 (run as a child
process by ``test_new_rule_compile_probes.py``: ``@triton.jit`` must see TRITON_INTERPRET unset).

Each probe kernel is lowered through the frontend to TTIR and through ``triton-adapter-opt`` to Linalg, as in
``tests/fixes/offline_frontend.py``; the launcher probes (ASC109) launch through 3.2.0's own binder and autotuner
with a stand-in compile step that records the options it is given. ``python compile_probes.py OUT.json`` writes
``{probe: {"error": ..., "ttir": ..., "linalg": ...}}`` and ``{"options:<placement>": {...}}``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from tests.fixes.offline_frontend import HostOnlyDriver, lower_to_ttir  # noqa: E402

TARGET_ARCH = "Ascend910B1"
VECTOR = {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"}
QUANT = {"x_ptr": "*fp32", "y_ptr": "*i8", "BLOCK": "constexpr"}
SPIN = {"ctr": "*i32", "x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@triton.jit
def dtype_constructor(x_ptr, y_ptr, BLOCK: tl.constexpr):
    m = tl.float32(float("-inf"))
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs), m))


@triton.jit
def full_scalar(x_ptr, y_ptr, BLOCK: tl.constexpr):
    m = tl.full((), float("-inf"), tl.float32)
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs), m))


@triton.jit
def to_overflow_mode(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.int8, overflow_mode="saturate"))


@triton.jit
def method_cast_overflow_mode(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs).cast(tl.int8, overflow_mode="saturate"))


@triton.jit
def cast_overflow_mode(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cast(tl.load(x_ptr + offs), tl.int8, overflow_mode="saturate"))


@triton.jit
def cast_to_output(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cast(tl.load(x_ptr + offs), y_ptr.dtype.element_ty))


@triton.jit
def saturate_to_output(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cast(tl.load(x_ptr + offs), y_ptr.dtype.element_ty, overflow_mode="saturate"))


@triton.jit
def cache_hints(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, eviction_policy="evict_last", cache_modifier=".cg")
    tl.store(y_ptr + offs, v, eviction_policy="evict_first", cache_modifier=".wb")


@triton.jit
def atomic_spin(ctr, x_ptr, n, BLOCK: tl.constexpr):
    while tl.atomic_add(ctr, 0, sem="acquire") < n:
        pass
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


@triton.jit
def volatile_spin(ctr, x_ptr, n, BLOCK: tl.constexpr):
    flag = tl.load(ctr, volatile=True)
    while flag < n:
        flag = tl.load(ctr, volatile=True)
    tl.atomic_add(ctr, 0, sem="acquire")
    offs = tl.arange(0, BLOCK) + (flag - flag)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)


@triton.jit
def scalar_param_in_task_loop(x_ptr, T, n_tasks, BLOCK: tl.constexpr):
    core = tl.program_id(0)
    for task in range(core, n_tasks, tl.num_programs(0)):
        T = T + task
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + task * BLOCK + offs, tl.load(x_ptr + offs, mask=offs < T))


@triton.jit
def fresh_local_in_task_loop(x_ptr, T, n_tasks, BLOCK: tl.constexpr):
    core = tl.program_id(0)
    for task in range(core, n_tasks, tl.num_programs(0)):
        T_cur = T + task
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + task * BLOCK + offs, tl.load(x_ptr + offs, mask=offs < T_cur))


TASK = {"x_ptr": "*fp32", "T": "i32", "n_tasks": "i32", "BLOCK": "constexpr"}
PROBES = {
    "dtype_constructor": (dtype_constructor, VECTOR),
    "full_scalar": (full_scalar, VECTOR),
    "to_overflow_mode": (to_overflow_mode, QUANT),
    "method_cast_overflow_mode": (method_cast_overflow_mode, QUANT),
    "cast_overflow_mode": (cast_overflow_mode, QUANT),
    "cache_hints": (cache_hints, VECTOR),
    # the quantisation casts of real kernels, with and without the keyword: fp32, fp16, bf16 and int32 to int8
    **{f"{kind}:{source}": (fn, {"x_ptr": f"*{source}", "y_ptr": "*i8", "BLOCK": "constexpr"})
       for source in ("fp32", "fp16", "bf16", "i32")
       for kind, fn in (("cast", cast_to_output), ("saturate", saturate_to_output))},
    "saturate:fp32->fp8e4nv": (saturate_to_output, {"x_ptr": "*fp32", "y_ptr": "*fp8e4nv", "BLOCK": "constexpr"}),
    "cast:fp32->fp8e4nv": (cast_to_output, {"x_ptr": "*fp32", "y_ptr": "*fp8e4nv", "BLOCK": "constexpr"}),
    "atomic_spin": (atomic_spin, SPIN),
    "volatile_spin": (volatile_spin, SPIN),
    "scalar_param_in_task_loop": (scalar_param_in_task_loop, TASK),
    "fresh_local_in_task_loop": (fresh_local_in_task_loop, TASK),
}


def _lower(fn, signature) -> dict:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    result = {"error": None, "ttir": None, "linalg": None}
    try:
        source = ASTSource(fn=fn, signature=signature, constants={"BLOCK": 128})
        ttir, stages, metadata = lower_to_ttir(source, GPUTarget("npu", TARGET_ARCH, 0))
        result["ttir"] = str(ttir)
        result["linalg"] = str(stages["ttadapter"](ttir, metadata))
    except Exception as exc:  # noqa: BLE001 - the error text is what the tests check
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


class _Launched:
    function = None
    packed_metadata = None

    def launch_metadata(self, *args):
        return None

    def _init_handles(self):
        pass

    def run(self, *args):
        pass


def _options_reaching_compile() -> dict:
    """Which placements of an Ascend option reach the compile options, in 3.2.0's launcher and autotuner."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend
    from triton.runtime import driver

    target = GPUTarget("npu", TARGET_ARCH, 0)
    driver.set_active(HostOnlyDriver(target))
    placements = {
        "config-dict": ([triton.Config({"BLOCK": 64, "multibuffer": False, "unit_flag": True})], {}),
        "config-keyword": ([triton.Config({"BLOCK": 64}, multibuffer=False, unit_flag=True)], {}),
        "config-unknown-keyword": ([triton.Config({"BLOCK": 64}, enable_ubuf_saving=True)], {}),
        "launch-keyword": (None, {"BLOCK": 64, "multibuffer": False, "unit_flag": True}),
    }
    found = {}
    for label, (configs, keywords) in placements.items():

        @triton.jit
        def probe(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)

        probe.create_binder(make_backend(target))
        seen: list[dict] = []

        def record(src, target=None, options=None, seen=seen):
            seen.append(dict(options or {}))
            return _Launched()

        probe.compile = record
        launched = triton.autotune(configs=configs, key=["n"])(probe) if configs else probe
        try:
            launched[(1,)](torch.zeros(64), 64, **keywords)
            options = seen[0] if seen else {}
            found[f"options:{label}"] = {
                key: options.get(key) for key in ("multibuffer", "unit_flag", "enable_ubuf_saving")
            }
        except Exception as exc:  # noqa: BLE001
            found[f"options:{label}"] = {"error": f"{type(exc).__name__}: {exc}"}
    return found


def main(out_path: str) -> None:
    results = {name: _lower(fn, signature) for name, (fn, signature) in PROBES.items()}
    results.update(_options_reaching_compile())
    Path(out_path).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
