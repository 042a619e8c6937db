import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels


@pytest.mark.parametrize("num_ranks", [2, 4])
def test_all_gather_through_symm_at_and_barrier_all(emulate, dist_kernels, num_ranks):
    world = emulate.World(num_ranks, heap_bytes=4 << 20)
    rows, cols = 32, 16
    local = world.symmetric_empty((rows, cols), torch.float32)
    gathered = world.symmetric_zeros((num_ranks * rows, cols), torch.float32)
    for shard in local:
        shard.copy_(torch.randn(rows, cols))
    world.launch(dist_kernels.all_gather_kernel, (4,),
                 lambda rank: ((local[rank], gathered[rank]), {"M": rows, "N": cols, "BLOCK_M": 8}), timeout=30)
    expected = torch.cat(local)
    for rank in range(num_ranks):
        torch.testing.assert_close(gathered[rank], expected)


def test_putmem_notify_add_wait_consume_token(emulate, dist_kernels):
    world = emulate.World(3, heap_bytes=1 << 20)
    n = 8
    src = world.symmetric_empty((n,), torch.float32)
    inbox = world.symmetric_zeros((3 * n,), torch.float32)
    arrivals = world.signal_zeros(1)
    out = [torch.zeros(n) for _ in range(3)]
    for rank in range(3):
        src[rank].copy_(torch.arange(n, dtype=torch.float32) * (rank + 1))
    world.launch(dist_kernels.put_then_count_kernel, (1,),
                 lambda rank: ((src[rank], inbox[rank], arrivals[rank], out[rank]), {"N": n}), timeout=30)
    expected = sum(src)
    for rank in range(3):
        torch.testing.assert_close(out[rank], expected)
        assert arrivals[rank].item() == 3


def test_hang_report_names_stuck_ranks_and_dumps_non_zero_signal_slots(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    signals = world.signal_zeros(4)
    with pytest.raises(emulate.EmulatorHang) as caught:
        world.launch(dist_kernels.ring_wait_kernel, (1,), lambda rank: ((signals[rank],), {}), timeout=0.5)
    report = caught.value.report
    assert "rank 0 program (0, 0, 0)" in report and "rank 1 program (0, 0, 0)" in report
    assert 'dl.wait(signals_ptr, 1, "gpu", "acquire")' in report
    assert "to equal 1" in report
    assert "rank 0: {1: 6}" in report  # rank 1 (signal 1 + 5) marked its right neighbour, rank 0
    assert "rank 1: {1: 5}" in report


def test_symm_at_rejects_pointers_outside_the_symmetric_heap(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    private = [torch.zeros(4), torch.zeros(4)]
    with pytest.raises(ValueError, match="does not point into the symmetric heap"):
        world.launch(dist_kernels.symm_at_kernel, (1,), lambda rank: ((private[rank],), {}))


def test_putmem_past_the_end_of_a_buffer_is_reported(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    dest = world.symmetric_zeros((4,), torch.float32)
    src = torch.zeros(64)
    with pytest.raises(ValueError, match=r"overrun symmetric buffer dest_ptr \(#0 float32"):
        world.launch(dist_kernels.putmem_kernel, (1,), lambda rank: ((dest[rank], src), {"NBYTES": 64}))


def test_putmem_signal_then_signal_wait_until_and_getmem(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    data = world.symmetric_zeros((4,), torch.float32)
    signal = world.signal_zeros(1, torch.int32)
    copies = [torch.zeros(4), torch.zeros(4)]
    data[0].copy_(torch.tensor([1.0, 2.0, 3.0, 4.0]))
    world.launch(dist_kernels.shmem_signal_kernel, (1,),
                 lambda rank: ((data[rank], copies[rank], signal[rank]), {"N": 4}), timeout=30)
    assert signal[1].item() == 3
    torch.testing.assert_close(copies[1], data[0])


def test_ranks_with_different_grids_see_their_own_num_programs(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    out = [torch.zeros(2 * 3, dtype=torch.int32), torch.zeros(2 * 5, dtype=torch.int32)]
    world.launch(dist_kernels.program_shape_kernel, lambda meta: (meta["out_ptr"].numel() // 2,),
                 lambda rank: ((out[rank],), {}))
    assert out[0].view(3, 2).tolist() == [[pid, 3] for pid in range(3)]
    assert out[1].view(5, 2).tolist() == [[100 + pid, 5] for pid in range(5)]


def test_symmetric_buffers_share_offsets_and_signals_start_at_zero(emulate):
    world = emulate.World(3, heap_bytes=1 << 20)
    world.symmetric_empty((7,), torch.float16)
    buffers = world.symmetric_zeros((5, 3), torch.float32)
    signals = world.signal_zeros(6)
    heap_offsets = {b.data_ptr() - b.untyped_storage().data_ptr() for b in buffers}
    assert len(heap_offsets) == 1
    assert all(s.dtype == torch.int64 and not s.any() for s in signals)
    assert all(not b.any() for b in buffers)


def test_heap_exhaustion_is_a_clear_error(emulate):
    world = emulate.World(2, heap_bytes=4096)
    with pytest.raises(MemoryError, match="heap_bytes"):
        world.symmetric_zeros((2048,), torch.float32)


def test_args_for_rank_must_return_args_and_kwargs(emulate, dist_kernels):
    world = emulate.World(2, heap_bytes=1 << 20)
    signals = world.signal_zeros(2)
    with pytest.raises(TypeError, match=r"must return \(args, kwargs\)"):
        world.launch(dist_kernels.ring_wait_kernel, (1,), lambda rank: signals[rank])
