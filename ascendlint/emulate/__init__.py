"""Run Triton kernels for Ascend on CPU, through triton-ascend's interpreter.

Program instances run concurrently (one thread each) so kernels whose programs wait on each other
work; several ranks can share one process through a symmetric heap, with stand-ins for
Triton-distributed's device API. Importing this package does not import triton or torch.
"""

from __future__ import annotations

from .errors import EmulatorHang
from .model import DeviceModel
from .schedules import (
    DEFAULT_EXPLORATION,
    FIXED_ONLY,
    REPLAY_VARIABLE,
    Exploration,
    Schedule,
)

__all__ = [
    "DEFAULT_EXPLORATION", "FIXED_ONLY", "REPLAY_VARIABLE", "DeviceModel", "EmulatorHang", "Exploration", "Schedule",
    "HOST_BARRIER", "Launch", "World", "install_stand_ins", "launch",
]


def install_stand_ins() -> None:
    """Prepare the process for emulation; call before importing kernel modules.

    Sets TRITON_INTERPRET=1 (``@triton.jit`` reads it when a kernel is decorated), installs the
    interpreter changes the emulator relies on and, only where the real modules cannot be
    imported, stand-ins for ``triton_dist.language``, ``triton_dist.language.extra.libshmem_device``
    and ``triton.language.extra.cann.extension``, plus a placeholder driver when no device exists
    (``@triton.autotune`` needs one to import). Idempotent.
    """
    from . import executor
    from .stand_ins import driver, modules

    executor.prepare()
    driver.install_if_no_device()
    modules.install_triton_dist()
    modules.install_cann_extension()


def launch(kernel, grid, *args, hazards: bool = True, timeout: float = 60.0, model=None, schedules=None, check=None,
           compare_schedules: bool = True, **kwargs) -> None:
    from .single import launch as single_launch

    single_launch(kernel, grid, *args, hazards=hazards, timeout=timeout, model=model, schedules=schedules,
                  check=check, compare_schedules=compare_schedules, **kwargs)


launch.__doc__ = """Run ``kernel`` over ``grid`` on CPU tensors, every program in its own thread.

``grid`` is a tuple or a callable of the bound arguments, as with ``kernel[grid](...)``.
``hazards`` (on unless ``hazards=False``) clobbers every ``tl.dot`` lhs after use, as Ascend may, and
makes racing reads NaN. ``model`` (a ``DeviceModel``) picks the emulated device behaviours; the
default has all of them. ``schedules`` picks the interleavings explored (default
``DEFAULT_EXPLORATION``; ``FIXED_ONLY``, an ``Exploration``, a ``Schedule`` or a token such as
``"pct:3:d3:k420"`` to replay one); memory is restored before each. ``check()`` runs after each
schedule and should raise on wrong results; with ``compare_schedules`` every schedule must leave the
memory the first one left (a callable instead returns a canonical form of the results to compare, for
kernels whose memory legitimately depends on the order; False compares nothing). A failure names its
schedule (``error.schedule`` and a note); a ``ScheduleDependentResult`` names both schedules and
replays as that pair. Raises
EmulatorHang on a deadlock or after ``timeout`` seconds, naming the programs still running and
their kernel lines.
"""


def __getattr__(name: str):
    if name in ("World", "Launch", "HOST_BARRIER"):
        from . import world

        return getattr(world, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
