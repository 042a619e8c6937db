"""Child process that lowers and compiles: ``python -m ascendlint.compiler.worker JOBS.json OUT_DIR``.

The only process that imports triton, and the only code it imports of the user's is the rebuilt kernel text of each
job (``kernel_text``): the jit functions and the literal constants they read, never the linted module. Each verdict
is written to ``OUT_DIR/<key>.json`` as soon as it is known, so a crash loses one job, not the batch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import verdict as v
from .bisheng import compile_linalg

# Errors that say the rebuilt text lacks something the real module has (a global, an import, an extension module
# this frontend version does not ship): no verdict on the kernel, only on what could be rebuilt here.
_ENVIRONMENT_ERRORS = ("NameError", "ImportError", "ModuleNotFoundError", "is not defined",
                       "has no attribute 'extra'", "object has no attribute 'cann'", "triton_dist")


class _Pointer:
    """What the launcher sees of a tensor argument: an aligned address and an element type."""

    def __init__(self, dtype: str):
        self.dtype = dtype

    def data_ptr(self) -> int:
        return 0


class _FrontendTimeout(Exception):
    pass


def _load(text: str, folder: Path, key: str):
    path = folder / f"ascendlint_kernel_{key[:16]}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _bound_values(params: list[dict]) -> list:
    values = []
    for param in params:
        kind = param["kind"]
        if kind == "pointer":
            values.append(None if param.get("value") == "None" else _Pointer(param.get("dtype", "fp16")))
        elif kind == "int":
            values.append(param["value"] if param.get("value") is not None else 17)  # 17: no specialisation
        elif kind == "float":
            values.append(float(param["value"]) if param.get("value") is not None else 0.5)
        else:
            values.append(param.get("value"))
    return values


def _signature(params: list[dict], fn) -> dict:
    signature = {}
    for param, spec in zip(fn.params, params):
        if param.is_constexpr:
            continue
        if spec["kind"] == "pointer":
            signature[param.name] = "*i8" if spec.get("value") == "None" else "*" + spec.get("dtype", "fp16")
        elif spec["kind"] == "float":
            signature[param.name] = "fp32"
        else:
            value = spec.get("value")
            signature[param.name] = "i64" if isinstance(value, int) and abs(value) >= 2**31 else "i32"
    return signature


def _unwrap(kernel):
    while type(kernel).__name__ in ("Autotuner", "Heuristics"):
        kernel = kernel.fn
    return kernel


def _describe(error: BaseException) -> str:
    """One line: for a frontend error, the kernel line it points at and what was wrong there."""
    innermost = None
    current: BaseException | None = error
    while current is not None:
        if type(current).__name__ == "CompilationError" and getattr(current, "src", None):
            innermost = current
        current = current.__cause__ or current.__context__
    if innermost is not None:
        line = ""
        lineno = getattr(innermost.node, "lineno", None)
        if lineno:
            lines = innermost.src.split("\n")
            line = lines[lineno - 1].strip() if lineno <= len(lines) else ""
        cause = innermost.__cause__ or innermost.__context__
        what = innermost.error_message or (f"{type(cause).__name__}: {cause}" if cause is not None else "")
        text = (f"`{line}`: " if line else "") + " ".join(str(what).split())
        return text[:1500]
    if isinstance(error, subprocess.CalledProcessError):  # a frontend tool failed: its name, not its command line
        command = error.cmd if isinstance(error.cmd, (list, tuple)) else str(error.cmd).split()
        tool = Path(str(command[0])).name if command else "a frontend tool"
        return f"{tool} exited with status {error.returncode}"
    text = f"{type(error).__name__}: {error}"
    cause = error.__cause__ or error.__context__
    if cause is not None and str(cause) not in text:
        text += f" ({type(cause).__name__}: {cause})"
    return " ".join(text.split())[:1500]


def _environment_error(described: str) -> bool:
    return any(marker in described for marker in _ENVIRONMENT_ERRORS)


def run_job(job: dict, folder: Path, frontend_timeout: float, compiler_timeout: float) -> v.Verdict:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.runtime import driver

    from .frontend import HostOnlyDriver, lower_to_linalg

    started = time.monotonic()
    target = GPUTarget("npu", job["target"], 0)
    driver.set_active(HostOnlyDriver(target))
    try:
        module = _load(job["source"], folder, job["key"])
        fn = _unwrap(getattr(module, job["kernel"]))
    except BaseException as error:  # noqa: BLE001 - the rebuilt text does not stand alone: no verdict
        return v.Verdict(v.NOT_COMPILED, message="rebuilt kernel text does not load: " + _describe(error))
    params = job["params"]
    if [p.name for p in fn.params] != [p["name"] for p in params]:
        return v.Verdict(v.NOT_COMPILED, message="parameters differ from the linted signature")
    bound = _bound_values(params)
    backend = make_backend(target)
    attrs = backend.get_attrs_descriptor(fn.params, bound)
    constant_params = attrs.get_constants()
    constants = {p.name: value for value, p in zip(bound, fn.params)
                 if p.is_constexpr or p.num in constant_params or value is None}
    source = ASTSource(fn=fn, signature=_signature(params, fn), constants=constants, attrs=attrs)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, frontend_timeout)
    try:
        linalg = lower_to_linalg(source, target, job.get("options") or {})
    except _FrontendTimeout:
        return v.Verdict(v.NOT_COMPILED, message=f"the frontend ran past the {frontend_timeout:g} s limit")
    except BaseException as error:  # noqa: BLE001 - the frontend's verdict
        described = _describe(error)
        if _environment_error(described):
            return v.Verdict(v.NOT_COMPILED, message="the frontend lacks a name the module provides: " + described)
        stderr = getattr(error, "stderr", b"") or b""
        if stderr:
            described += " " + " ".join(stderr.decode("utf-8", "replace").split())[-800:]
        return v.Verdict(v.ERROR, message="frontend: " + described, seconds=round(time.monotonic() - started, 3))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    result = compile_linalg(linalg, job["flags"], job["target"], compiler_timeout)
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _alarm(signum, frame):
    raise _FrontendTimeout()


def _limit_memory() -> None:
    limit = int(os.environ.get("ASCENDLINT_COMPILER_MEMORY_MB", "0") or 0)
    if limit > 0:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit << 20, limit << 20))


def main(jobs_path: str, out_dir: str, frontend_timeout: str = "60", compiler_timeout: str = "120") -> None:
    _limit_memory()
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="ascendlint-triton-cache-"))
    from .device_api import install

    install()
    jobs = json.loads(Path(jobs_path).read_text(encoding="utf-8"))
    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="ascendlint-kernels-") as folder:
        for job in jobs:
            try:
                result = run_job(job, Path(folder), float(frontend_timeout), float(compiler_timeout))
            except BaseException:  # noqa: BLE001 - recorded; the next job still runs
                result = v.Verdict(v.NOT_COMPILED, message="worker crash: " + traceback.format_exc()[-1500:])
            partial = out / f"{job['key']}.json.part"
            partial.write_text(json.dumps(result.as_json()), encoding="utf-8")
            partial.replace(out / f"{job['key']}.json")


if __name__ == "__main__":
    main(*sys.argv[1:])
