"""Turn a user's kernel object and launch arguments into something a program thread can call.

Handles ``triton.autotune`` (first config, since the interpreter has no driver to benchmark with)
and ``triton.heuristics`` wrappers, plain ``@triton.jit`` functions decorated with or without
interpreter mode, and the conversion of tensors and ints to what interpreted kernels expect.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from .environment import import_triton
from .interpreter_patch import interpreted_twin

# Launch options a real launcher accepts that are not kernel parameters; the interpreter ignores them.
LAUNCH_OPTIONS = frozenset({
    "num_warps", "num_stages", "num_ctas", "enable_fp_fusion", "grid", "maxnreg", "warmup", "stream",
    "debug", "force_simt_only", "compile_mode", "multibuffer", "enable_linearize",
    "enable_hivm_auto_cv_balance", "sync_solver", "unit_flag", "tile_mix_vector_loop", "tile_mix_cube_loop",
    "num_buffers_warp_spec", "num_consumer_groups", "reg_dec_producer", "reg_inc_consumer",
    "force_simt_template", "limit_auto_multi_buffer_only_for_local_buffer",
    "limit_auto_multi_buffer_of_local_buffer", "set_workspace_multibuffer",
})


@dataclass
class BoundKernel:
    """A rewritten kernel function with the keyword arguments of one program launch."""

    name: str
    fn: Callable
    call_args: dict
    grid: tuple
    tensors: tuple = ()  # the torch tensors among the launch arguments (restored between schedules, bounds)

    parameters: tuple = ()  # the parameter name of each entry of ``tensors``

    def run_program(self) -> None:
        self.fn(**self.call_args)

    def argument_names(self) -> dict:
        """data_ptr -> parameter name of every tensor argument (names buffers in reports)."""
        return {tensor.data_ptr(): name for name, tensor in zip(self.parameters, self.tensors)}


def bind(kernel, grid, args: tuple, kwargs: dict) -> BoundKernel:
    """Resolve wrappers, bind arguments to parameters and evaluate the grid."""
    kwargs = dict(kwargs)
    interpreted = _resolve_wrappers(kernel, args, kwargs)
    fn = interpreted.rewrite()
    kwargs = {k: v for k, v in kwargs.items() if k not in LAUNCH_OPTIONS or k in interpreted.arg_names}
    _reject_device_tensors(args, kwargs)
    raw = inspect.getcallargs(fn, *args, **kwargs)
    constexprs = _constexpr_names(interpreted)
    _, _, interpreter = import_triton()
    call_args = {
        name: value if name in constexprs else interpreter._implicit_cvt(value) for name, value in raw.items()
    }
    named = [(k, v) for k, v in raw.items() if hasattr(v, "data_ptr") and hasattr(v, "untyped_storage")]
    return BoundKernel(interpreted.fn.__name__, fn, call_args, normalize_grid(grid, raw),
                       tuple(v for _, v in named), tuple(k for k, _ in named))


def normalize_grid(grid, meta: dict) -> tuple:
    grid = grid(meta) if callable(grid) else grid
    if isinstance(grid, int):
        grid = (grid,)
    grid = tuple(int(g) for g in grid)
    if not 1 <= len(grid) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {grid}")
    if any(g < 0 for g in grid):
        raise ValueError(f"grid dimensions must not be negative, got {grid}")
    return grid + (1,) * (3 - len(grid))


def _resolve_wrappers(kernel, args: tuple, kwargs: dict):
    """Peel autotune/heuristics layers (outermost first), filling ``kwargs`` as they would."""
    _, _, interpreter = import_triton()
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    layer = kernel
    while True:
        if isinstance(layer, Autotuner):
            config = layer.configs[0]
            kwargs.update(config.kwargs)
            if config.pre_hook is not None:
                config.pre_hook({**dict(zip(layer.arg_names, args)), **kwargs})
            layer = layer.fn
        elif isinstance(layer, Heuristics):
            for name, heuristic in layer.values.items():
                kwargs[name] = heuristic({**dict(zip(layer.arg_names, args)), **kwargs})
            layer = layer.fn
        elif isinstance(layer, interpreter.InterpretedFunction):
            return layer
        elif isinstance(layer, JITFunction):
            return interpreted_twin(layer)
        else:
            raise TypeError(f"expected a @triton.jit kernel, got {type(layer).__name__}")


def _constexpr_names(interpreted) -> set:
    from triton.runtime.jit import _normalize_ty

    annotations = {name: _normalize_ty(ty) for name, ty in interpreted.fn.__annotations__.items()}
    return {name for name in interpreted.arg_names if annotations.get(name) == "constexpr"}


def _reject_device_tensors(args: tuple, kwargs: dict) -> None:
    for value in (*args, *kwargs.values()):
        device = getattr(value, "device", None)
        if device is not None and hasattr(value, "data_ptr") and str(device) != "cpu":
            raise ValueError(f"the emulator runs on CPU tensors only, got a tensor on {device}")
