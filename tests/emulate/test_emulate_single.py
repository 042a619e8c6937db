import threading

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels


def test_vector_add_matches_torch_with_callable_grid(emulate, kernels):
    x, y, out = torch.randn(1000), torch.randn(1000), torch.empty(1000)
    grid = lambda meta: ((meta["n"] + meta["BLOCK"] - 1) // meta["BLOCK"],)
    emulate.launch(kernels.add_kernel, grid, x, y, out, 1000, BLOCK=128)
    torch.testing.assert_close(out, x + y)


def test_programs_waiting_on_earlier_programs_complete(emulate, kernels):
    flags = torch.zeros(16, dtype=torch.int32)
    out = torch.zeros(16, dtype=torch.int32)
    emulate.launch(kernels.relay_kernel, (16,), flags, out, timeout=20)
    assert out.tolist() == list(range(1, 17))


def test_atomic_grid_barrier_lets_programs_read_each_others_writes(emulate, kernels):
    counter = torch.zeros(1, dtype=torch.int32)
    data = torch.zeros(8, dtype=torch.int32)
    out = torch.full((8,), -1, dtype=torch.int32)
    emulate.launch(kernels.grid_barrier_kernel, (8,), counter, data, out, timeout=20)
    assert out.tolist() == [((pid + 1) % 8) * 10 for pid in range(8)]


def test_deadlock_raises_hang_naming_programs_and_line(emulate, kernels):
    threads_before = threading.active_count()
    with pytest.raises(emulate.EmulatorHang) as caught:
        emulate.launch(kernels.crossed_wait_kernel, (2,), torch.zeros(2, dtype=torch.int32), timeout=0.5)
    report = caught.value.report
    assert "crossed_wait_kernel" in report
    assert "program (0, 0, 0)" in report and "program (1, 0, 0)" in report
    assert "emulate_sample_kernels.py:" in report
    assert "while tl.load(flags_ptr + 1 - pid, volatile=True) == 0:" in report
    assert threading.active_count() == threads_before, "stuck program threads were not stopped"


def _run_dot(emulate, kernels, *, copy_lhs, hazards):
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    c, a_again = torch.empty(16, 16), torch.empty(16, 16)
    emulate.launch(kernels.dot_reusing_lhs_kernel, (1,), a, b, c, a_again, N=16, COPY_LHS=copy_lhs, hazards=hazards)
    return a, b, c, a_again


def test_hazards_turn_a_reused_dot_lhs_into_nan(emulate, kernels):
    a, b, c, a_again = _run_dot(emulate, kernels, copy_lhs=False, hazards=True)
    torch.testing.assert_close(c, a @ b)
    assert a_again.isnan().all()


@pytest.mark.parametrize("copy_lhs, hazards", [(True, True), (False, False)])
def test_lhs_survives_with_copy_form_or_without_hazards(emulate, kernels, copy_lhs, hazards):
    a, b, c, a_again = _run_dot(emulate, kernels, copy_lhs=copy_lhs, hazards=hazards)
    torch.testing.assert_close(c, a @ b)
    torch.testing.assert_close(a_again, a)


def test_num_programs_and_program_id_are_per_program(emulate, kernels):
    out = torch.zeros(12, dtype=torch.int32)
    emulate.launch(kernels.program_shape_kernel, (6,), out)
    assert out.view(6, 2).tolist() == [[pid, 6] for pid in range(6)]


def test_kernel_error_propagates_naming_the_program(emulate, kernels):
    with pytest.raises(ValueError, match="reshape") as caught:
        emulate.launch(kernels.failing_kernel, (4,), torch.zeros(4, dtype=torch.int32), BAD_PROGRAM=2)
    assert any("program (2, 0, 0)" in note for note in getattr(caught.value, "__notes__", []))


def test_jit_helper_is_interpreted_inside_the_kernel(emulate, kernels):
    x, out = torch.arange(8, dtype=torch.float32), torch.empty(8)
    emulate.launch(kernels.helper_call_kernel, (1,), x, out, BLOCK=8)
    torch.testing.assert_close(out, x * 2)


def test_kernel_decorated_without_interpreter_mode_still_runs(emulate, kernels):
    from triton.runtime.jit import JITFunction

    compiled_form = JITFunction(kernels.add_kernel.fn)
    x, y, out = torch.randn(64), torch.randn(64), torch.empty(64)
    emulate.launch(compiled_form, (2,), x, y, out, 64, BLOCK=32)
    torch.testing.assert_close(out, x + y)


def test_helper_decorated_without_interpreter_mode_is_interpreted(emulate, kernels):
    x, out = torch.arange(8, dtype=torch.float32), torch.empty(8)
    emulate.launch(kernels.compiled_helper_call_kernel, (2,), x, out, BLOCK=8)
    torch.testing.assert_close(out, x * 3)


def test_plain_interpreter_launch_also_interprets_such_helpers(emulate, kernels):
    x, out = torch.arange(8, dtype=torch.float32), torch.empty(8)
    kernels.compiled_helper_call_kernel[(1,)](x, out, BLOCK=8)
    torch.testing.assert_close(out, x * 3)


def test_autotuned_kernel_runs_its_first_config(emulate, kernels):
    out = torch.zeros(100, dtype=torch.int32)
    emulate.launch(kernels.autotuned_fill_kernel, lambda meta: (4,), out, 100)
    assert out.tolist() == [32] * 100


@pytest.mark.parametrize("n, even", [(64, 1), (60, 0)])
def test_heuristics_values_reach_the_kernel(emulate, kernels, n, even):
    out = torch.full((n,), -1, dtype=torch.int32)
    emulate.launch(kernels.heuristic_kernel, (4,), out, n, BLOCK=16)
    assert out.tolist() == [even] * n


def test_launch_options_are_accepted_and_ignored(emulate, kernels):
    x, y, out = torch.randn(32), torch.randn(32), torch.empty(32)
    emulate.launch(kernels.add_kernel, (1,), x, y, out, 32, BLOCK=32, num_warps=4, num_stages=2, multibuffer=True)
    torch.testing.assert_close(out, x + y)


@pytest.mark.parametrize("sub_blocks, expected_sub", [(2, [0, 11]), (1, [0, 10])])
def test_ascend_only_ops_run_on_the_interpreter(emulate, kernels, sub_blocks, expected_sub):
    x = torch.tensor([3.0, 1.0, 2.0, 0.0, 7.0, 5.0, 6.0, 4.0])
    out, head, first, sub = torch.empty(8), torch.empty(4), torch.empty(1), torch.zeros(2, dtype=torch.int32)
    model = emulate.DeviceModel(vector_sub_blocks=sub_blocks)
    emulate.launch(kernels.ascend_ops_kernel, (1,), x, out, head, first, sub, N=8, HALF=4, model=model)
    assert out.tolist() == [7.0, 5.0, 6.0, 4.0, 7.0, 5.0, 6.0, 4.0]
    assert head.tolist() == [3.0, 2.0, 1.0, 0.0]
    assert first.item() == 1.0
    # tl.parallel(0, 2, bind_sub_block=True): iteration 1 runs on sub-block 1, whose sub_vec_id() is 1
    assert sub.tolist() == expected_sub


def test_launch_leaves_triton_language_as_it_found_it(emulate, kernels):
    import triton.language as tl

    namespaces = (tl, tl.core, tl.math, tl.tensor)
    before = [dict(vars(ns)) for ns in namespaces]
    emulate.launch(kernels.ascend_ops_kernel, (1,), torch.zeros(8), torch.zeros(8), torch.zeros(4),
                   torch.zeros(1), torch.zeros(2, dtype=torch.int32), N=8, HALF=4)
    for ns, saved in zip(namespaces, before):
        assert dict(vars(ns)) == saved


def test_device_tensors_are_rejected(emulate, kernels):
    meta_tensor = torch.empty(4, device="meta")
    with pytest.raises(ValueError, match="CPU tensors only"):
        emulate.launch(kernels.program_shape_kernel, (1,), meta_tensor)


def test_too_many_programs_are_refused_before_starting(emulate, kernels):
    with pytest.raises(ValueError, match="at most"):
        emulate.launch(kernels.program_shape_kernel, (100000,), torch.zeros(2, dtype=torch.int32))
