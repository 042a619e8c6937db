"""triton-ascend's frontend without a device: a driver stand-in for the launcher, and the lowering of a kernel to
Linalg. Imported only in child processes (the worker, and the test harnesses that compile reference kernels)."""

from __future__ import annotations


class HostOnlyDriver:
    """The active driver triton's launcher and ``triton.autotune`` consult: a target and nothing to run on."""

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target

    def get_benchmarker(self):
        def refuse(*args, **kwargs):
            raise RuntimeError("no device: nothing is benchmarked offline")

        return refuse


def a5_target(arch: str) -> bool:
    return arch.startswith(("Ascend950", "Ascend910_95"))


def lower_to_ttir(source, target, options: dict | None = None):
    """``(ttir, stages, metadata)`` for an ``ASTSource``: ``stages["ttadapter"](ttir, metadata)`` lowers on to
    Linalg. ``metadata`` holds the parsed launch options plus the fields the adapter stage reads."""
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    backend = make_backend(target)
    parsed = backend.parse_options(options or {})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    stages: dict = {}
    backend.add_stages(stages, parsed)
    module = source.make_ir(parsed, backend.get_codegen_implementation(), backend.get_module_map(), context)
    metadata = {
        **parsed.__dict__,
        "enable_nd2nz_on_vector": False,
        "enable_select_analysis": True,
        "compile_on_910_95": a5_target(target.arch),
        "force_simt_template": False,
    }
    return stages["ttir"](module, metadata), stages, metadata


def lower_to_linalg(source, target, options: dict | None = None) -> str:
    ttir, stages, metadata = lower_to_ttir(source, target, options)
    return str(stages["ttadapter"](ttir, metadata))
