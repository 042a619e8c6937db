"""A placeholder device driver for hosts without an NPU.

``@triton.autotune`` asks the active driver for a benchmarker when a kernel module is imported,
which fails with "0 active drivers" when no device exists. The emulator never benchmarks (it runs
the first config), so this driver only has to exist; asking it to benchmark is an error.
"""

from __future__ import annotations

import warnings

from ..environment import import_triton


def _driver_class():
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    class InterpreterOnlyDriver(DriverBase):
        """Answers what decorators ask at import time; nothing here can launch or time a kernel."""

        @classmethod
        def is_active(cls):
            return False

        def get_current_target(self):
            return GPUTarget("cpu", 0, 0)

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_benchmarker(self):
            def refuse(*_args, **_kwargs):
                raise RuntimeError("no device to benchmark on: the emulator runs the first autotune config")

            return refuse

    return InterpreterOnlyDriver


def install_if_no_device() -> None:
    """Make the placeholder the active driver when no real driver can be created (idempotent)."""
    import_triton()
    from triton.runtime.driver import driver

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the NPU driver's probe warns about a missing compiler
            driver.active.get_current_target()
    except RuntimeError:
        driver.set_active(_driver_class()())
