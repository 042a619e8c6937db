"""The part of triton's active driver that the launcher and ``triton.autotune`` consult, for compiling offline:
no device, so nothing is benchmarked. Shared by the fix harness's worker and the reference kernels' compile test."""

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
