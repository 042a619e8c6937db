"""triton-ascend's frontend without a device: the driver stand-in the launcher and ``triton.autotune`` consult, and
the lowering of a kernel source to TTIR (whose stages and metadata then give Linalg). Shared by the fix
harness's worker and the reference kernels' offline compile test."""

from __future__ import annotations


class HostOnlyDriver:
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


def lower_to_ttir(source, target, options: dict | None = None):
    """``(ttir, stages, metadata)`` for an ``ASTSource``: ``stages["ttadapter"](ttir, metadata)`` lowers on to Linalg."""
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
        "compile_on_910_95": False,
        "force_simt_template": False,
    }
    return stages["ttir"](module, metadata), stages, metadata
