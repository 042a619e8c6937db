"""Each layer of the emulated device model on its own: on by default, and what turning it off hides."""

import time

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels


def test_default_model_has_every_layer_on(emulate):
    model = emulate.DeviceModel()
    assert model.drop_unconsumed_waits and model.hold_stores_until_fence and model.check_udma_addresses
    assert model.vector_sub_blocks == 2 and model.bf16_in_fp32 and model.yield_on_signal
    assert model.resident_programs == 48
    assert model.acquire_by_wait_semantics and model.incoherent_cache_lines and model.loads_complete_at_fence
    assert model.check_bounds and model.udma_one_core_per_pe
    assert model.without("vector_sub_blocks", "resident_programs") == emulate.DeviceModel(
        vector_sub_blocks=1, resident_programs=None)
    with pytest.raises(ValueError, match="unknown layer"):
        model.without("caches")


# -- a dl.wait whose token reaches nothing is removed ----------------------------------------------------------


def test_wait_whose_token_is_never_used_is_removed_as_the_compiler_removes_it(emulate, dist_kernels):
    world = emulate.World(1, heap_bytes=1 << 20)
    signals, out = world.signal_zeros(8), [torch.zeros(1, dtype=torch.int32)]
    world.launch(dist_kernels.unconsumed_wait_kernel, (1,), lambda rank: ((signals[rank], out[rank]), {}))
    assert out[0].item() == 1  # nobody sets the slot: only a deleted wait lets the store happen


def test_without_the_layer_the_unconsumed_wait_still_blocks(emulate, dist_kernels):
    world = emulate.World(1, heap_bytes=1 << 20)
    signals, out = world.signal_zeros(8), [torch.zeros(1, dtype=torch.int32)]
    with pytest.raises(emulate.EmulatorHang, match="deadlocked"):
        world.launch(dist_kernels.unconsumed_wait_kernel, (1,), lambda rank: ((signals[rank], out[rank]), {}),
                     model=emulate.DeviceModel().without("drop_unconsumed_waits"))


@pytest.mark.parametrize("kernel_name", ["consumed_wait_kernel", "summed_tokens_kernel"])
def test_waits_whose_token_reaches_a_store_are_kept(emulate, dist_kernels, kernel_name):
    world = emulate.World(1, heap_bytes=1 << 20)
    signals, out = world.signal_zeros(8), [torch.zeros(1, dtype=torch.int32)]
    kwargs = {"N": 3} if kernel_name == "summed_tokens_kernel" else {}
    with pytest.raises(emulate.EmulatorHang):
        world.launch(getattr(dist_kernels, kernel_name), (1,), lambda rank: ((signals[rank], out[rank]), kwargs))
    assert out[0].item() == 0


# -- stores become visible at fence / barrier / end ------------------------------------------------------------


def _publish(emulate, dist_kernels, *, fence, notify_first=False, hazards=False, model=None):
    """One producer rank, one consumer rank, under the fixed schedule (what each layer does on its own)."""
    world = emulate.World(2, heap_bytes=1 << 20)
    data, flag = world.symmetric_zeros((8,), torch.float32), world.signal_zeros(1)
    out = [torch.full((8,), -1.0), torch.full((8,), -1.0)]
    world.launch(dist_kernels.publish_kernel, (1,),
                 lambda rank: ((data[rank], flag[rank], out[rank]), {"N": 8, "FENCE": fence,
                                                                     "NOTIFY_FIRST": notify_first}),
                 hazards=hazards, model=model, schedules=emulate.FIXED_ONLY)
    return out[1]


def test_store_fence_notify_delivers_the_data(emulate, dist_kernels):
    assert _publish(emulate, dist_kernels, fence=True).tolist() == [float(i + 1) for i in range(8)]


def test_notify_without_fence_lets_the_consumer_read_the_old_data(emulate, dist_kernels):
    assert _publish(emulate, dist_kernels, fence=False).tolist() == [0.0] * 8


def test_with_hazards_a_read_racing_a_pending_store_is_nan(emulate, dist_kernels):
    assert _publish(emulate, dist_kernels, fence=False, hazards=True).isnan().all()


def test_without_held_stores_the_missing_fence_goes_unnoticed(emulate, dist_kernels):
    model = emulate.DeviceModel().without("hold_stores_until_fence")
    assert _publish(emulate, dist_kernels, fence=False, model=model).tolist() == [float(i + 1) for i in range(8)]


# -- a signal hands the turn to the programs it wakes ----------------------------------------------------------


def test_notify_before_the_store_lets_the_woken_consumer_read_first(emulate, dist_kernels):
    assert _publish(emulate, dist_kernels, fence=True, notify_first=True).tolist() == [0.0] * 8


def test_without_the_hand_over_the_producer_finishes_its_store_first(emulate, dist_kernels):
    model = emulate.DeviceModel().without("yield_on_signal")
    got = _publish(emulate, dist_kernels, fence=True, notify_first=True, model=model)
    assert got.tolist() == [float(i + 1) for i in range(8)]


# -- UDMA address checks -----------------------------------------------------------------------------------------


def _udma(emulate, dist_kernels, mode, model=None):
    world = emulate.World(2, heap_bytes=1 << 20)
    dest = world.symmetric_zeros((4,), torch.float32)
    src = world.symmetric_empty((4,), torch.float32)
    for view in src:
        view.copy_(torch.arange(4.0))
    world.launch(dist_kernels.udma_kernel, (1,), lambda rank: ((dest[rank], src[rank]), {"NBYTES": 16, "MODE": mode}),
                 model=model)
    return dest


def test_putmem_to_a_peer_lands_there(emulate, dist_kernels):
    assert _udma(emulate, dist_kernels, 0)[1].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("mode, message", [
    (1, "putmem with pe 0, the calling rank itself"),
    (2, "putmem destination points into rank 1's copy"),
    (3, "getmem source points into rank 1's copy"),
])
def test_putmem_getmem_to_the_own_pe_or_through_a_mapped_pointer_fail_clearly(emulate, dist_kernels, mode, message):
    from ascendlint.emulate.udma import UdmaAddressError

    with pytest.raises(UdmaAddressError, match=message):
        _udma(emulate, dist_kernels, mode)


def test_without_the_checks_a_local_putmem_just_copies(emulate, dist_kernels):
    dest = _udma(emulate, dist_kernels, 1, model=emulate.DeviceModel().without("check_udma_addresses"))
    assert dest[0].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_symmetric_empty_floats_start_unknowable(emulate):
    world = emulate.World(2, heap_bytes=1 << 20)
    assert all(view.isnan().all() for view in world.symmetric_empty((4,), torch.float32))


# -- two vector sub-blocks per program -----------------------------------------------------------------------


def test_mix_kernel_runs_both_sub_blocks_and_barrier_all_waits_for_both(emulate, dist_kernels):
    out, shared = torch.full((9,), -1, dtype=torch.int32), torch.zeros(3, dtype=torch.int32)
    emulate.launch(dist_kernels.sub_block_kernel, (3,), out, shared)
    assert out[:6].tolist() == [0, 1, 10, 11, 20, 21]  # (program, sub-block) -> sub + 10 * program
    assert out[6:].tolist() == [101, 102, 100]  # written by sub-block 1 before the barrier


def test_with_one_sub_block_the_second_ones_work_never_runs(emulate, dist_kernels):
    out, shared = torch.full((9,), -1, dtype=torch.int32), torch.zeros(3, dtype=torch.int32)
    emulate.launch(dist_kernels.sub_block_kernel, (3,), out, shared, model=emulate.DeviceModel(vector_sub_blocks=1))
    assert out[:6].tolist() == [0, -1, 10, -1, 20, -1]
    assert out[6:].tolist() == [0, 0, 0]


def test_kernels_without_sub_vec_id_run_one_thread_per_program(emulate, kernels):
    out = torch.zeros(12, dtype=torch.int32)
    emulate.launch(kernels.program_shape_kernel, (6,), out)
    assert out.view(6, 2).tolist() == [[pid, 6] for pid in range(6)]


# -- bf16 in fp32 ---------------------------------------------------------------------------------------------


def _bf16(emulate, kernels, model=None):
    torch.manual_seed(5)
    a, b = torch.randn(16, 16).bfloat16(), torch.randn(16, 16).bfloat16()
    dot, scaled = torch.empty(16, 16), torch.empty(16, 16, dtype=torch.bfloat16)
    total = torch.empty(16, dtype=torch.bfloat16)
    emulate.launch(kernels.bf16_kernel, (1,), a, b, dot, scaled, total, N=16, model=model)
    return a.float(), b.float(), dot, scaled.float(), total.float()


def test_bf16_dot_arithmetic_and_sums_are_computed_in_fp32_and_rounded(emulate, kernels):
    a, b, dot, scaled, total = _bf16(emulate, kernels)
    torch.testing.assert_close(dot, a @ b, rtol=1e-5, atol=1e-4)  # fp32 accumulation of exact bf16 inputs
    torch.testing.assert_close(scaled, (a * 2.0 + b).bfloat16().float(), rtol=0, atol=0)
    torch.testing.assert_close(total, a.sum(1).bfloat16().float(), rtol=1.6e-2, atol=1e-2)


def test_without_the_layer_bf16_constants_fail_as_in_the_stock_interpreter(emulate, kernels):
    with pytest.raises(Exception, match="get_bf16"):
        _bf16(emulate, kernels, model=emulate.DeviceModel(bf16_in_fp32=False))


def test_bf16_rounding_is_to_nearest_even():
    import numpy as np

    from ascendlint.emulate.bf16 import to_bf16_bits, to_float32

    values = np.array([1.0, 1.00390625, 1.005859375, -2.5, np.inf, 3e38], dtype=np.float32)
    torch_bits = torch.from_numpy(values).bfloat16().view(torch.int16).numpy().view(np.uint16)
    assert to_bf16_bits(values).tolist() == torch_bits.tolist()
    assert np.isnan(to_float32(to_bf16_bits(np.array([np.nan], dtype=np.float32))))[0]


# -- resident programs ----------------------------------------------------------------------------------------


def test_a_grid_larger_than_the_resident_cores_deadlocks_at_its_barrier(emulate, dist_kernels):
    out = torch.zeros(6, dtype=torch.int32)
    started = time.monotonic()
    with pytest.raises(emulate.EmulatorHang) as hang:
        emulate.launch(dist_kernels.grid_barrier_kernel, (6,), out, model=emulate.DeviceModel(resident_programs=4),
                       timeout=30)
    assert time.monotonic() - started < 10, "a deadlock is reported when it happens, not at the timeout"
    assert "deadlocked" in hang.value.report
    assert "2 program(s) never started: only 4 programs per rank are resident" in hang.value.report
    assert "barrier_all" in hang.value.report


def test_a_grid_within_the_resident_cores_meets_at_its_barrier(emulate, dist_kernels):
    out = torch.zeros(6, dtype=torch.int32)
    emulate.launch(dist_kernels.grid_barrier_kernel, (6,), out, model=emulate.DeviceModel(resident_programs=6))
    assert out.tolist() == [1] * 6


def test_programs_beyond_the_resident_ones_start_when_one_ends(emulate, kernels):
    out = torch.zeros(20, dtype=torch.int32)
    emulate.launch(kernels.program_shape_kernel, (10,), out, model=emulate.DeviceModel(resident_programs=3))
    assert out.view(10, 2).tolist() == [[pid, 10] for pid in range(10)]


# -- Nz swizzle stand-ins -------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows, cols, group", [(64, 80, 2), (48, 16, 7), (16, 112, 3)])
def test_swizzles_visit_every_tile_once_in_the_nz_order(emulate, dist_kernels, rows, cols, group):
    tile, ranks = 16, 4
    row_tiles, col_tiles = rows // tile, cols // tile
    gemm = torch.zeros(2 * row_tiles * col_tiles, dtype=torch.int32)
    dist = torch.zeros(5 * row_tiles * col_tiles * ranks, dtype=torch.int32)
    emulate.launch(dist_kernels.swizzle_kernel, (1,), gemm, dist, ROWS=rows, COLS=cols, TILE=tile, GROUP=group,
                   RANKS=ranks)
    order = [tuple(pair) for pair in gemm.view(-1, 2).tolist()]
    assert sorted(order) == [(r, c) for r in range(row_tiles) for c in range(col_tiles)]
    first_group = [c for _, c in order[: group * row_tiles]] if col_tiles >= group else []
    assert all(c < group for c in first_group)  # the first ids stay in the first group of columns
    if col_tiles > group:  # the second group walks the rows bottom-up
        second = order[group * row_tiles]
        assert second[0] == row_tiles - 1
    comm = [tuple(entry) for entry in dist.view(-1, 5).tolist()]
    data_tiles = row_tiles * col_tiles
    for i, (r, c, rank, rows_here, cols_here) in enumerate(comm):
        assert r * col_tiles + c == i % data_tiles
        assert rank == (i // data_tiles + i % data_tiles) % ranks  # shifted by the data tile
        assert (rows_here, cols_here) == (tile, tile)
    for rank_group in range(ranks):  # any `ranks` consecutive ids of a group point at `ranks` different ranks
        for first in range(rank_group * data_tiles, (rank_group + 1) * data_tiles - ranks + 1):
            assert len({comm[i][2] for i in range(first, first + ranks)}) == ranks


# -- waits acquire only with an acquiring semantic at a scope wider than one core --------------------------------


@pytest.mark.parametrize(("scope", "semantic", "acquires"), [
    ("gpu", "acquire", True), ("sys", "acquire", True), ("gpu", "relaxed", False), ("cta", "acquire", False),
    ("cta", "relaxed", False),
])
def test_which_waits_acquire(scope, semantic, acquires):
    from ascendlint.emulate import ordering

    assert ordering.wait_acquires(scope, semantic) is acquires


# -- loads and stores stay inside their buffer ---------------------------------------------------------------------


def test_a_store_past_the_end_of_its_tensor_is_reported_naming_it(emulate, kernels):
    x, y, out = torch.ones(40), torch.ones(40), torch.zeros(40)
    # n says 48: program 2's block (32..47) runs past x's 40 elements; programs 3 and 4 are masked off entirely
    with pytest.raises(IndexError, match=r"tl.load by program \(2, 0, 0\) out of bounds, a pointer into tensor "
                                         r"argument #0 float32\[40\]: 8 of 16 live lanes leave it"):
        emulate.launch(kernels.add_kernel, (5,), x, y, out, 48, BLOCK=16)


def test_bounds_are_whole_storages_so_a_view_may_overrun_into_its_own_storage(emulate, kernels):
    storage = torch.ones(96)
    x, y, out = storage[:40], storage[40:80], torch.zeros(48)
    emulate.launch(kernels.add_kernel, (3,), x, y, out, 48, BLOCK=16)  # x's lanes 40..47 read y's storage
    assert out.tolist() == [2.0] * 48
