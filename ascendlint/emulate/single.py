"""Single-device launches: every program instance of one grid in its own thread."""

from __future__ import annotations

from . import binding, executor


def launch(kernel, grid, *args, hazards: bool = False, timeout: float = 60.0, model=None, **kwargs) -> None:
    """Run ``kernel`` over ``grid`` on CPU tensors, all programs concurrently.

    ``grid`` is a tuple or a callable taking the bound arguments by name, as in ``kernel[grid](...)``.
    With ``hazards=True`` every ``tl.dot`` clobbers its lhs operand afterwards, as Ascend may.
    Raises EmulatorHang when the programs deadlock or have not finished after ``timeout`` seconds.
    ``model`` (a ``DeviceModel``) picks the emulated device behaviours; the default has all of them.
    """
    executor.prepare()
    bound = binding.bind(kernel, grid, args, kwargs)
    executor.run([executor.RankLaunch(0, bound)], hazards=hazards, timeout=timeout, model=model)
