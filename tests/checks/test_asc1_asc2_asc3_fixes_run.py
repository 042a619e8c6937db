"""The fixes of ASC202, ASC203 and ASC301 keep kernels computing the same thing (each launch below writes every
output element from one program, so results are deterministic), and the ASC301 fix survives the
Ascend `tl.dot` lhs clobber: the rule examples are run on CPU through the emulator (triton-ascend's interpreter),
with the clobber reproduced by its hazard mode."""

from __future__ import annotations

import importlib.util
import itertools

import pytest

from ascendlint.catalog.registry import all_rules

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.kernels

_counter = itertools.count()


@pytest.fixture(scope="module")
def emulate():
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton-ascend is not installed (the 'kernels' extra)")
    from ascendlint import emulate

    emulate.install_stand_ins()
    return emulate


@pytest.fixture
def load(tmp_path, emulate):
    """Import a kernel module from source (Triton needs a real file to read the kernel's source)."""

    def _load(code: str):
        path = tmp_path / f"example_{next(_counter)}.py"
        path.write_text(code, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return _load


def _example(code: str, index: int):
    rule = next(r for r in all_rules() if r.code == code)
    example = rule.INVALID[index]
    assert example.fixed is not None
    return example.code, example.fixed


def test_asc301_doc_example_reads_a_clobbered_tile_and_its_fix_does_not(emulate, load):
    original, fixed = (load(code).kernel for code in _example("ASC301", 0))
    q, k = torch.randn(16, 16), torch.randn(16, 16)
    expected = q @ k + q
    broken, repaired, plain = torch.empty(16, 16), torch.empty(16, 16), torch.empty(16, 16)
    emulate.launch(original, (1,), q, k, broken, BT=16, hazards=True)
    emulate.launch(fixed, (1,), q, k, repaired, BT=16, hazards=True)
    emulate.launch(original, (1,), q, k, plain, BT=16, hazards=False)  # hazards are on unless turned off
    assert torch.isnan(broken).all()
    torch.testing.assert_close(repaired, expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(plain, expected, rtol=1e-4, atol=1e-4)


def test_asc306_fix_inside_a_loop_survives_every_iteration(emulate, load):
    original, fixed = (load(code).kernel for code in _example("ASC306", 0))
    q, k = torch.randn(16, 16), torch.randn(3, 16, 16)
    expected = sum(q @ k[i] for i in range(3))
    broken, repaired = torch.empty(16, 16), torch.empty(16, 16)
    emulate.launch(original, (1,), q, k, broken, 3, BT=16, hazards=True)
    emulate.launch(fixed, (1,), q, k, repaired, 3, BT=16, hazards=True)
    assert torch.isnan(broken).all()
    torch.testing.assert_close(repaired, expected, rtol=1e-4, atol=1e-4)


def test_asc202_fix_keeps_the_tiles_a_nested_loop_writes(emulate, load):
    original, fixed = (load(code).kernel for code in _example("ASC202", 2))
    length, dim = 32, 2
    start = torch.randn(4 * length * dim)
    before, after = start.clone(), start.clone()
    emulate.launch(original, (1,), before, None, length, dim, BT=16)
    emulate.launch(fixed, (1,), after, None, length, dim, BT=16)
    assert torch.equal(before, after)
    assert not torch.equal(before, start)


def test_asc203_fix_keeps_the_rows_each_sequence_reads(emulate, load):
    original, fixed = (load(code).kernel for code in _example("ASC203", 0))
    heads, dim, block = 2, 4, 8
    cu_seqlens = torch.tensor([0, 3, 8], dtype=torch.int32)
    x = torch.randn(8 * heads * dim)
    before, after = torch.zeros(2 * block), torch.zeros(2 * block)
    emulate.launch(original, (2, 1), x, before, cu_seqlens, heads, K=dim, BT=block)
    emulate.launch(fixed, (2, 1), x, after, cu_seqlens, heads, K=dim, BT=block)
    torch.testing.assert_close(before, after)
    first_elements = x.view(8, heads, dim)[:, 0, 0]  # the example reads one element per row
    torch.testing.assert_close(before[:3], first_elements[:3])
    torch.testing.assert_close(before[block : block + 5], first_elements[3:])
