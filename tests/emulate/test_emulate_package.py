"""The emulator package's import boundary and stand-in installation."""

import subprocess
import sys
import types

import pytest


def test_importing_emulate_does_not_import_triton_or_torch():
    probe = "import sys, ascendlint.emulate; print(sorted(m for m in ('triton', 'torch') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_emulator_hang_carries_its_report():
    from ascendlint.emulate import EmulatorHang

    hang = EmulatorHang("rank 0 program (1, 0, 0): kernel.py:12")
    assert isinstance(hang, RuntimeError)
    assert hang.report == str(hang) == "rank 0 program (1, 0, 0): kernel.py:12"


@pytest.mark.kernels
def test_stand_in_modules_expose_the_device_api(emulate):
    import triton_dist.language as dl
    from triton.language.extra.cann import extension
    from triton_dist.language.extra import libshmem_device

    assert {"rank", "num_ranks", "symm_at", "wait", "notify", "consume_token"} <= set(vars(dl))
    assert {"my_pe", "n_pes", "remote_ptr", "putmem", "getmem", "putmem_nbi", "getmem_nbi", "quiet", "fence",
            "barrier_all", "barrier_all_vec", "int_p", "signal_op", "putmem_signal",
            "signal_wait_until"} <= set(vars(libshmem_device))
    assert {"sub_vec_id", "compile_hint", "extract_slice", "insert_slice"} <= set(vars(extension))


@pytest.mark.kernels
def test_install_stand_ins_is_idempotent(emulate):
    import triton_dist.language as before

    emulate.install_stand_ins()
    import triton_dist.language as after

    assert after is before


@pytest.mark.kernels
def test_importable_real_modules_are_left_alone(emulate, monkeypatch):
    from ascendlint.emulate.stand_ins import modules

    real = {name: types.ModuleType(name) for name in (
        "triton_dist", "triton_dist.language", "triton_dist.language.extra",
        "triton_dist.language.extra.libshmem_device", "triton.language.extra.cann",
        "triton.language.extra.cann.extension")}
    for name, module in real.items():
        monkeypatch.setitem(sys.modules, name, module)
    modules.install_triton_dist()
    modules.install_cann_extension()
    assert all(sys.modules[name] is module for name, module in real.items())


@pytest.mark.kernels
def test_calling_a_stand_in_outside_a_launch_is_a_clear_error(emulate):
    import triton_dist.language as dl

    with pytest.raises(RuntimeError, match="inside a kernel started by ascendlint.emulate"):
        dl.rank()
