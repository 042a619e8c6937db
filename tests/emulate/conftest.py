"""Fixtures for the emulator tests: stand-ins first, then the sample kernel modules."""

import importlib
import importlib.util

import pytest


@pytest.fixture(scope="session")
def emulate():
    """The emulator with stand-ins installed; triton is first imported here, in interpreter mode."""
    pytest.importorskip("torch")
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton-ascend is not installed (the 'kernels' extra)")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture(scope="session")
def kernels(emulate):
    return importlib.import_module("emulate_sample_kernels")


@pytest.fixture(scope="session")
def dist_kernels(emulate):
    return importlib.import_module("emulate_sample_dist_kernels")
