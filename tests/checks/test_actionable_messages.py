"""Messages a reviewer can act on: each says what happens on the device (hang, NaN, wrong result), a fix's
inserted code says why it is there, an unsafe fix says it is unsafe where plain `--fix` leaves it, and a fix that
would hide a worse bug on the same call is not offered."""

from __future__ import annotations

from ascendlint.catalog.registry import all_rules
from tests.helpers import fix, lint

RULES = {rule.code: rule for rule in all_rules()}

BOTH = """
import triton
import triton.language as tl
import triton_dist.language as dl


@triton.jit
def consumer(buf_ptr, signal_ptr, out_ptr, n_rounds, rank, BLOCK: tl.constexpr, RING: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for rnd in range(n_rounds):
        slot = signal_ptr + (rnd % RING) * 8
        token = dl.wait(slot, 1, "gpu", "acquire", waitValue=rnd + 1)
        tile_ptr = dl.consume_token(buf_ptr + (rnd % RING) * BLOCK, token)
        tl.store(out_ptr + rnd * BLOCK + offs, tl.load(tile_ptr + offs))
        dl.notify(slot, rank, signal=0, sig_op="set")
        tl.store(out_ptr + (n_rounds + rnd) * BLOCK + offs, tl.load(tile_ptr + offs) * 2)
"""


def _messages(code: str) -> list[str]:
    example = next(e for e in RULES[code].INVALID if e.doc)
    return [d.message for d in lint(example.code, code) if d.code == code]


def test_asc408_says_the_launch_hangs():
    assert all("hangs" in m or "wrong results" in m for m in _messages("ASC408"))
    assert any("hangs" in m for m in _messages("ASC408"))


def test_asc205_says_why_the_rebinding_is_wrong():
    (message,) = _messages("ASC205")
    assert "NaN" in message and "previous task" in message


def test_asc301_fix_says_why_the_copy_is_there():
    example = next(e for e in RULES["ASC301"].INVALID if e.doc)
    fixed = fix(example.code, "ASC301").text
    lines = fixed.splitlines()
    copy = next(i for i, line in enumerate(lines) if line.strip().endswith("+ 0.0"))
    assert lines[copy - 1].strip() == "# a copy: tl.dot may overwrite its left operand on Ascend (ASC301)"


def test_an_unsafe_fix_says_so_where_plain_fix_leaves_it(cli, tmp_path):
    example = next(e for e in RULES["ASC303"].INVALID if e.doc)
    (tmp_path / "k.py").write_text(example.code, encoding="utf-8")
    plain = cli("check", "k.py", "--select", "ASC303", "--no-cache", cwd=tmp_path)
    assert "(unsafe fix: applied only with `--fix --unsafe-fixes`)" in plain.stdout
    enabled = cli("check", "k.py", "--select", "ASC303", "--no-cache", "--unsafe-fixes", cwd=tmp_path)
    assert "unsafe fix:" not in enabled.stdout and "= help:" in enabled.stdout


def test_no_fence_fix_for_a_notify_that_returns_a_credit_too_early():
    found = {d.code: d for d in lint(BOTH, "ASC403", "ASC410")}
    assert set(found) == {"ASC403", "ASC410"}
    assert found["ASC403"].fix is None and "ASC410" in found["ASC403"].message
    assert fix(BOTH, "ASC403").text == BOTH


def test_a_plain_missing_fence_keeps_its_fix():
    example = next(e for e in RULES["ASC403"].INVALID if e.fixed is not None)
    assert all(d.fix is not None for d in lint(example.code, "ASC403") if d.code == "ASC403")

