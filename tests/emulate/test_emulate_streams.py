"""Launch sequences per rank, non-blocking transfers, and what hang reports and schedule pairs say."""

import pytest

torch = pytest.importorskip("torch")


def _wait_then_set(emulate, dist_kernels, world, flag, out, waiter, setter):
    return [
        emulate.Launch(dist_kernels.wait_for_peer_launch_kernel, (1,),
                       lambda r: ((flag[r], out[r]), {"WAITER": waiter})),
        emulate.Launch(dist_kernels.set_flag_kernel, (1,),
                       lambda r: ((flag[r],), {"SETTER": setter, "TARGET": waiter})),
    ]


def test_a_rank_runs_ahead_into_its_next_launch(emulate, dist_kernels):
    """Rank 0 is still in launch 0, waiting for what rank 1 does in launch 1: on a device stream that works."""
    world = emulate.World(2)
    flag = world.signal_zeros(1)
    out = [torch.zeros(1, dtype=torch.int32) for _ in range(2)]
    world.launch_sequence(_wait_then_set(emulate, dist_kernels, world, flag, out, waiter=0, setter=1),
                          check=lambda: torch.testing.assert_close(out[0], torch.ones(1, dtype=torch.int32)))


def test_a_host_barrier_keeps_every_rank_out_of_the_next_launch(emulate, dist_kernels):
    world = emulate.World(2)
    flag = world.signal_zeros(1)
    out = [torch.zeros(1, dtype=torch.int32) for _ in range(2)]
    first, second = _wait_then_set(emulate, dist_kernels, world, flag, out, waiter=0, setter=1)
    with pytest.raises(emulate.EmulatorHang) as caught:
        world.launch_sequence([first, emulate.HOST_BARRIER, second], schedules=emulate.FIXED_ONLY, timeout=10)
    assert "rank 1: 1 program(s) of launch 1 never started" in caught.value.report
    assert "rank 0 launch 0 (wait_for_peer_launch_kernel) program (0, 0, 0)" in caught.value.report


def test_a_rank_runs_its_own_launches_in_order(emulate, dist_kernels):
    """Rank 0 waits in launch 0 for a flag its own launch 1 would set: launch 1 cannot start before 0 ends."""
    world = emulate.World(2)
    flag = world.signal_zeros(1)
    out = [torch.zeros(1, dtype=torch.int32) for _ in range(2)]
    with pytest.raises(emulate.EmulatorHang) as caught:
        world.launch_sequence(_wait_then_set(emulate, dist_kernels, world, flag, out, waiter=0, setter=0),
                              schedules=emulate.FIXED_ONLY, timeout=10)
    assert "rank 0: 1 program(s) of launch 1 never started" in caught.value.report


def test_a_launch_sequence_runs_under_every_schedule_from_the_same_memory(emulate, dist_kernels):
    world = emulate.World(2)
    flag = world.signal_zeros(1)
    out = [torch.zeros(1, dtype=torch.int32) for _ in range(2)]
    runs = []

    def check():
        runs.append(int(out[0][0]))

    world.launch_sequence(_wait_then_set(emulate, dist_kernels, world, flag, out, waiter=0, setter=1), check=check)
    assert runs == [1] * len(emulate.DEFAULT_EXPLORATION.schedules())


def test_launch_sequence_rejects_what_is_not_a_launch(emulate, dist_kernels):
    with pytest.raises(TypeError, match="Launch"):
        emulate.World(2).launch_sequence([dist_kernels.set_flag_kernel])


@pytest.mark.parametrize("quiet", [False, True])
def test_putmem_nbi_lands_only_at_quiet(emulate, dist_kernels, quiet):
    world = emulate.World(2)
    dest = world.symmetric_zeros((8,), torch.float32)
    arrived = world.signal_zeros(1, dtype=torch.int32)
    src = [torch.arange(8, dtype=torch.float32) + 1 for _ in range(2)]
    out = [torch.zeros(8) for _ in range(2)]

    def run(model=None):
        world.launch(dist_kernels.put_nbi_kernel, (1,), lambda r: ((dest[r], src[r], arrived[r], out[r]),
                                                                   {"N": 8, "QUIET": quiet}),
                     check=lambda: torch.testing.assert_close(out[1], src[0]), schedules=emulate.FIXED_ONLY,
                     model=model)

    if quiet:
        run()
    else:
        with pytest.raises(AssertionError):
            run()
        run(emulate.DeviceModel().without("nbi_in_flight_until_quiet"))  # a put done at once hides the mistake


def test_hang_report_numbers_strided_slots_and_names_buffers_after_the_arguments(emulate, dist_kernels):
    world = emulate.World(2)
    flags = world.signal_zeros(32)
    out = [torch.zeros(1, dtype=torch.int64) for _ in range(2)]
    with pytest.raises(emulate.EmulatorHang) as caught:
        world.launch(dist_kernels.strided_wait_kernel, (1,), lambda r: ((flags[r], out[r]), {"STRIDE": 8}),
                     schedules=emulate.FIXED_ONLY, timeout=10)
    report = caught.value.report
    assert "slot 1 (element 8, stride 8) of signal buffer flags_ptr (#0 int64[32]) on rank 0" in report
    assert "signal buffer flags_ptr (#0 int64[32]), slots of stride 8 (slot = element // 8):" in report
    assert "rank 0: {0: 1}" in report


def test_schedule_tokens_name_pairs_for_replay(emulate, monkeypatch):
    from ascendlint.emulate import schedules

    assert [s.token for s in schedules.resolve("fixed,random:1")] == ["fixed", "random:1"]
    monkeypatch.setenv(emulate.REPLAY_VARIABLE, "fixed, pct:0:d3:k10")
    assert [s.token for s in schedules.resolve(None)] == ["fixed", "pct:0:d3:k10"]
