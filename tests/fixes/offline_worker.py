"""Child process of the fix-verification harness: compiles kernels offline, or runs them in the interpreter.

    python offline_worker.py compile JOBS.json OUT_DIR
    python offline_worker.py interpret JOBS.json OUT_DIR

Each job's result is written to ``OUT_DIR/<job id>.json`` as soon as it is known, so a crash (the interpreter
dereferences raw addresses) loses only the job that caused it. A child process is needed because
``@triton.jit`` reads TRITON_INTERPRET when a kernel module is imported: compiles need it unset, runs need it
set, and the test session itself may have imported triton in either mode.

compile: triton-ascend 3.2.0's frontend lowers the kernel to TTIR (``ASTSource.make_ir`` and the ``ttir``
stage), then ``triton-adapter-opt`` lowers the TTIR to Linalg (the ``ttadapter`` stage); only the binary stage,
which needs CANN, is not run. Triton-distributed calls compile against ``device_stubs``.

interpret: the original and the fixed kernel run on the same inputs (CPU tensors, triton-ascend's interpreter,
programs one after another), and every tensor argument is compared afterwards. ``hazards`` also runs both under
``ascendlint.emulate``'s ``tl.dot`` left-operand clobber. ``world`` runs the kernels on that many emulated ranks.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

TARGET_ARCH = "Ascend910B1"
BUFFER_ELEMENTS = 1 << 14  # every pointer argument gets a buffer this long: small extents stay inside it
TIMEOUT_SECONDS = 10.0
TILE = 16  # signatures.TILE

_modules: dict[str, object] = {}
_folder = Path(tempfile.mkdtemp(prefix="ascendlint-fix-harness-"))
atexit.register(shutil.rmtree, _folder, ignore_errors=True)  # a killed worker leaves it; a finished one does not


def load_module(text: str):
    """Import module text from a real file (Triton reads a kernel's source from its file)."""
    import hashlib

    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    if key not in _modules:
        path = _folder / f"fixcase_{key}.py"
        path.write_text(text, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        _modules[key] = module
    return _modules[key]


def unwrap(kernel):
    """The jit function under ``triton.autotune`` / ``triton.heuristics`` wrappers."""
    while type(kernel).__name__ in ("Autotuner", "Heuristics"):
        kernel = kernel.fn
    return kernel


def describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text[-3000:]


# -- compile ---------------------------------------------------------------------------------------------------


def _prepare_compile():
    os.environ.pop("TRITON_INTERPRET", None)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import device_stubs
    from offline_frontend import HostOnlyDriver
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    device_stubs.install()
    device_stubs.install_reexports()
    target = GPUTarget("npu", TARGET_ARCH, 0)
    driver.set_active(HostOnlyDriver(target))
    return target


def compile_job(job: dict, target) -> dict:
    from offline_frontend import lower_to_ttir
    from triton.compiler import ASTSource

    result = {"ttir": None, "error": None, "linalg": None, "linalg_error": None}
    try:
        kernel = unwrap(getattr(load_module(job["module"]), job["kernel"]))
        source = ASTSource(fn=kernel, signature=job["signature"], constants=job["constants"])
        ttir, stages, metadata = lower_to_ttir(source, target)
        result["ttir"] = str(ttir)
    except Exception as error:  # noqa: BLE001 - the verdict is the test's to give
        result["error"] = describe(error)
        return result
    if job["linalg"]:
        try:
            result["linalg"] = str(stages["ttadapter"](ttir, metadata))
        except Exception as error:  # noqa: BLE001
            detail = getattr(error, "stderr", b"") or b""
            result["linalg_error"] = describe(error) + "\n" + detail.decode("utf-8", "replace")[-2000:]
    if result["linalg"] is not None:
        result["bisheng"] = _bisheng(result["linalg"])
    return result


def _bisheng(linalg: str) -> dict | None:
    """BiShengIR's verdict on the Linalg, at triton-ascend's default launch options (None without the compiler)."""
    from ascendlint.compiler import missing
    from ascendlint.compiler.bisheng import compile_linalg
    from ascendlint.compiler.jobs import compiler_flags

    if missing():
        return None
    return compile_linalg(linalg, compiler_flags(TARGET_ARCH, {}), TARGET_ARCH, timeout=120).as_json()


# -- interpret -------------------------------------------------------------------------------------------------


def _prepare_interpret():
    from ascendlint import emulate

    emulate.install_stand_ins()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import device_stubs

    device_stubs.install_host_package()
    device_stubs.install_reexports()
    return emulate


_TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "i8": "int8", "i32": "int32",
                 "i64": "int64"}


def _tensor(spec: dict, seed: int):
    import torch

    dtype = getattr(torch, _TORCH_DTYPES[spec["dtype"]])
    generator = torch.Generator().manual_seed(seed)
    fill = spec["fill"]
    if fill == "index":  # offsets of whole tiles (0, 16, 32, ...): sequences as long as a tile, in bounds
        return (torch.arange(BUFFER_ELEMENTS) * TILE).clamp(max=8 * TILE).to(dtype)
    if fill == "signal":
        return torch.full((BUFFER_ELEMENTS,), spec.get("value", 0), dtype=dtype)
    if dtype.is_floating_point:
        return torch.randn(BUFFER_ELEMENTS, generator=generator).to(dtype)
    return torch.randint(-4, 5, (BUFFER_ELEMENTS,), generator=generator).to(dtype)


def _arguments(job: dict, ranks: int = 1, world=None) -> list[tuple[dict, dict]]:
    """(keyword arguments, tensors by name) of one launch per rank. Tensors are fresh, from fixed seeds, so two
    launches see equal inputs; on a ``world`` every tensor is one symmetric allocation (same offset on every rank)."""
    launches = [({}, {}) for _ in range(ranks)]
    for position, spec in enumerate(job["args"]):
        if spec["kind"] == "tensor":
            values = [_tensor(spec, seed=1000 * rank + position) for rank in range(ranks)]
            if world is not None:
                if spec["fill"] == "signal":
                    views = world.signal_zeros(BUFFER_ELEMENTS, values[0].dtype)
                else:
                    views = world.symmetric_zeros((BUFFER_ELEMENTS,), values[0].dtype)
                for view, value in zip(views, values):
                    view.copy_(value)
                values = views
            for rank, value in enumerate(values):
                launches[rank][0][spec["name"]] = value
                launches[rank][1][spec["name"]] = value
        else:
            for rank in range(ranks):
                value = spec["value"]
                if isinstance(value, dict):  # a per-rank scalar: {"rank": a, "offset": b, "modulo": m}
                    value = (value["rank"] * rank + value["offset"]) % value.get("modulo", 1 << 30)
                launches[rank][0][spec["name"]] = value
    return launches


def _same(before: dict, after: dict) -> list[str]:
    """Names of the tensors whose contents differ (NaN equals NaN, -0.0 equals 0.0)."""
    differ = []
    for name, a in before.items():
        b = after[name]
        if a.dtype.is_floating_point:
            equal = bool(((a == b) | (a.isnan() & b.isnan())).all())
        else:
            equal = bool((a == b).all())
        if not equal:
            differ.append(name)
    return differ


def _run_single(emulate, job: dict, text: str, hazards: bool):
    kernel = unwrap(getattr(load_module(text), job["kernel"]))
    ((kwargs, tensors),) = _arguments(job)
    grid = tuple(job["grid"])
    if hazards:
        emulate.launch(kernel, grid, hazards=True, timeout=TIMEOUT_SECONDS, schedules=emulate.FIXED_ONLY, **kwargs)
    else:
        kernel[grid](**kwargs)
    return {name: t.clone() for name, t in tensors.items()}


def _run_world(emulate, job: dict, text: str, inputs: dict | None = None):
    """Outputs by ``name@rank``; ``inputs`` (when given) receives the tensors and scalars before the launch."""
    kernel = unwrap(getattr(load_module(text), job["kernel"]))
    ranks = job["world"]
    world = emulate.World(ranks, heap_bytes=len(job["args"]) * BUFFER_ELEMENTS * 8 + (1 << 20))
    per_rank = _arguments(job, ranks, world)
    if inputs is not None:
        for rank, (kwargs, tensors) in enumerate(per_rank):
            inputs.update({f"{name}@{rank}": t.clone() for name, t in tensors.items()})
            inputs.update({f"{name}@{rank}": v for name, v in kwargs.items() if name not in tensors})
    # one deterministic run per side, as before the emulator explored schedules and turned hazards on by default:
    # the harness compares what the original and the fix leave, it does not hunt races in rule examples
    world.launch(kernel, tuple(job["grid"]), lambda rank: ((), per_rank[rank][0]), timeout=TIMEOUT_SECONDS,
                 hazards=False, schedules=emulate.FIXED_ONLY)
    return {f"{name}@{rank}": t.clone() for rank in range(ranks) for name, t in per_rank[rank][1].items()}


def _expected(job: dict, inputs: dict) -> dict:
    """The buffers the job's expectation (``expectations.py``) says the kernel must leave."""
    import expectations

    spec = job["expect"]
    tensors = {name: value for name, value in inputs.items() if hasattr(value, "dtype")}
    scalars = {name: value for name, value in inputs.items() if not hasattr(value, "dtype")}
    return getattr(expectations, spec["name"])(tensors, scalars, job["world"], **spec.get("args", {}))


def interpret_job(job: dict, emulate) -> dict:
    result = {"original_error": None, "fixed_error": None, "differ": None, "hazard": None}
    expect = bool(job.get("expect") and job.get("world"))
    if expect:  # names of the buffers that do not hold what the expectation says, per side that ran
        result.update({"original_unexpected": None, "fixed_unexpected": None})
    outputs = {}
    for side in ("original", "fixed"):
        inputs = {} if expect else None
        try:
            if job.get("world"):
                outputs[side] = _run_world(emulate, job, job[side], inputs)
            else:
                outputs[side] = _run_single(emulate, job, job[side], hazards=False)
        except Exception as error:  # noqa: BLE001
            result[f"{side}_error"] = describe(error)
            continue
        if expect:  # outside the try: a broken expectation is the harness's crash, not the kernel's error
            result[f"{side}_unexpected"] = _same(_expected(job, inputs), outputs[side])
    if len(outputs) == 2:
        result["differ"] = _same(outputs["original"], outputs["fixed"])
    if job.get("hazards") and "original" in outputs:
        hazard = {}
        for side in ("original", "fixed"):
            try:
                clobbered = _run_single(emulate, job, job[side], hazards=True)
                hazard[side] = _same(outputs["original"], clobbered)
            except Exception as error:  # noqa: BLE001
                hazard[side] = describe(error)
        result["hazard"] = hazard
    return result


def main(mode: str, jobs_path: str, out_dir: str) -> None:
    jobs = json.loads(Path(jobs_path).read_text(encoding="utf-8"))
    out = Path(out_dir)
    if mode == "compile":
        target = _prepare_compile()
        run = lambda job: compile_job(job, target)  # noqa: E731
    else:
        emulate = _prepare_interpret()
        run = lambda job: interpret_job(job, emulate)  # noqa: E731
    for job in jobs:
        try:
            result = run(job)
        except BaseException:  # noqa: BLE001 - recorded, and the next job still runs
            result = {"crash": traceback.format_exc()[-3000:]}
        partial = out / f"{job['id']}.json.part"
        partial.write_text(json.dumps(result), encoding="utf-8")
        partial.replace(out / f"{job['id']}.json")


if __name__ == "__main__":
    main(*sys.argv[1:4])
