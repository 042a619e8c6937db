"""Single-device launches: every program instance of one grid in its own thread."""

from __future__ import annotations

from . import binding, executor


def launch(kernel, grid, *args, hazards: bool = True, timeout: float = 60.0, model=None, schedules=None, check=None,
           compare_schedules: bool = True, **kwargs) -> None:
    """Run ``kernel`` over ``grid`` on CPU tensors, all programs concurrently.

    ``grid`` is a tuple or a callable taking the bound arguments by name, as in ``kernel[grid](...)``.
    With hazards on (the default) every ``tl.dot`` clobbers its lhs operand afterwards, as Ascend may.
    ``schedules``, ``check`` and ``compare_schedules``: see ``ascendlint.emulate.launch``.
    Raises EmulatorHang when the programs deadlock or have not finished after ``timeout`` seconds.
    ``model`` (a ``DeviceModel``) picks the emulated device behaviours; the default has all of them.
    """
    executor.prepare()
    bound = binding.bind(kernel, grid, args, kwargs)
    executor.run([executor.RankLaunch(0, bound)], hazards=hazards, timeout=timeout, model=model, schedules=schedules,
                 check=check, compare_schedules=compare_schedules)
