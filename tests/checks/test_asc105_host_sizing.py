"""ASC105 decides from how the host code sizes the grid: real upstream fixes of the 65535-program limit, as minimal
kernels of our own (each reported once the host sizing is read, and quiet in its fixed form), the wrong findings
of earlier versions as non-triggers, and the split with the review sweep ASC110 (never both on one launch)."""

from __future__ import annotations

import pytest

from ascendlint.catalog.registry import all_rules
from ascendlint.linter import engine
from tests.helpers import lint, rules_named

HEADER = "import triton\nimport triton.language as tl\n\n"

REPORTED = {
    # an asserted shape says nothing of the tensor rebound after it, nor of one past the limit
    "rows of a tensor reshaped after its shape is asserted": """
@triton.jit
def row_norm(x_ptr, N, BLOCK: tl.constexpr):
    pass

def run(x):
    assert x.shape == (4096, 1024)
    x = x.reshape(-1, 16)
    row_norm[(x.shape[0],)](x, 16, BLOCK=16)
""",
    "elements the host asserts past the limit": """
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    pass

def run(x):
    assert x.numel() == 4096 * 1024
    scale[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
""",
    # (progs, cdiv(total, progs)) with progs bounded by the core count launches `total` programs: batch x seq blocks
    "core-count axis times the rest of a split": """
@triton.jit
def bincount(tokens_ptr, counts_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pass

def run(tokens, counts, cores):
    n_rows, n_cols = tokens.shape
    blocks = n_rows * triton.cdiv(n_cols, 256)
    progs = min(cores, blocks)
    grid = (progs, triton.cdiv(blocks, progs))
    bincount[grid](tokens, counts, n_rows, n_cols, BLOCK=256)
""",
    # batch = x.shape[0] of an activation, multiplied by a sequence length: the tokens of the batch
    "batch of an activation times a sequence length": """
@triton.jit
def split_heads(x_ptr, out_ptr, HEADS: tl.constexpr):
    pass

def run(mixed_qkv, heads):
    batch, seq_len = mixed_qkv.shape[0], 1
    out = mixed_qkv.new_empty([batch * seq_len, heads, 64])
    split_heads[(batch * seq_len, heads)](mixed_qkv, out, HEADS=heads)
""",
    # `n_ctx` names a context length (the sequence axis of a 5-d query): its tiles times batch x heads
    "context-length tiles times batch and heads": """
@triton.jit
def sink_attn(q_ptr, o_ptr, N_CTX: tl.constexpr, BLOCK_M: tl.constexpr):
    pass

def forward(q, o):
    bs, n_ctx, n_kv_heads, repeat, head_dim = q.shape
    n_heads = n_kv_heads * repeat
    grid = (triton.cdiv(n_ctx, 32), bs * n_heads, 1)
    sink_attn[grid](q, o, N_CTX=n_ctx, BLOCK_M=32)
""",
    # the leading dimension of a gradient tiled by a block the host keeps at most 8 rows, times the groups
    "a gradient's batch tiled by the host times groups": """
@triton.jit
def norm_bwd(dy_ptr, n, G, BLOCK_BATCH: tl.constexpr):
    pass

def batch_block(hidden):
    return max(1, min(8, 4096 // hidden))

def backward(dy, groups):
    shape = dy.shape
    batch = shape[0]
    block_batch = batch_block(dy.shape[-1])
    norm_bwd[(groups, triton.cdiv(batch, block_batch))](dy, batch, groups, BLOCK_BATCH=block_batch)
""",
    # a weight's channels over a tile of 8 or 16 (about a thousand programs) times the sequences
    "weight channels over a small tile times sequences": """
@triton.jit
def conv_dh0(dy_ptr, w_ptr, h0_ptr, D, BD: tl.constexpr):
    pass

def dh0(dy, weight, initial_state):
    D, W = weight.shape
    N = initial_state.shape[0]
    BD = 8 if dy.dtype == 1 else 16
    conv_dh0[(triton.cdiv(D, BD), N)](dy, weight, initial_state, D, BD=BD)
""",
    # rows over a vocab tile, uncapped: the form the penalties fix started from
    "token rows times vocab tiles": """
@triton.jit
def penalties(logits_ptr, vocab, BLOCK: tl.constexpr):
    pass

def apply(logits):
    num_tokens, vocab = logits.shape
    penalties[(num_tokens, triton.cdiv(vocab, 4096))](logits, vocab, BLOCK=4096)
""",
    # token tiles of the batch times channel tiles: a third size multiplies the tokens of the launch
    "token tiles of the batch times channel tiles": """
@triton.jit
def conv_fwd(x_ptr, T, D, BT: tl.constexpr, BD: tl.constexpr):
    pass

def run(x, BT=64, BD=16):
    B, T, D = x.shape
    NT = triton.cdiv(T, BT)
    conv_fwd[(triton.cdiv(D, BD), NT, B)](x, T, D, BT=BT, BD=BD)
""",
}

QUIET = {
    # the host asserts the exact shape before the launch: one program per row of 4096 rows
    "rows of a tensor whose shape the host asserts": """
@triton.jit
def row_norm(x_ptr, N, BLOCK: tl.constexpr):
    pass

def run(x):
    assert x.shape == (4096, 1024), "fixed problem size"
    M, N = x.shape
    row_norm[(M,)](x, N, BLOCK=1024)
""",
    "a leading dimension the host bounds with an exit": """
@triton.jit
def row_norm(x_ptr, N, BLOCK: tl.constexpr):
    pass

def run(x):
    if x.size(0) > 8192:
        raise ValueError("at most 8192 rows")
    row_norm[(x.shape[0],)](x, x.shape[1], BLOCK=1024)
""",
    "elements the host asserts, over a literal tile": """
@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    pass

def run(x):
    assert x.numel() == 1024 * 1024
    scale[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
""",
    # the penalties fix: the vocab axis capped at 65535 // num_tokens bounds the product of both axes
    "an axis capped by the limit over the other axis": """
@triton.jit
def penalties(logits_ptr, vocab, NUM_BLOCKS: tl.constexpr, GRID: tl.constexpr, BLOCK: tl.constexpr):
    pass

def apply(logits):
    num_tokens, vocab = logits.shape
    blocks = triton.cdiv(vocab, 4096)
    vocab_grid = min(blocks, 65535 // num_tokens)
    penalties[(num_tokens, vocab_grid)](logits, vocab, NUM_BLOCKS=blocks, GRID=vocab_grid, BLOCK=4096)
""",
    # the bincount fix: one core-count axis, the blocks looped inside the kernel
    "a capped grid-stride launch": """
@triton.jit
def bincount(tokens_ptr, counts_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pass

def run(tokens, counts, cores):
    n_rows, n_cols = tokens.shape
    blocks = n_rows * triton.cdiv(n_cols, 256)
    bincount[(min(cores, blocks),)](tokens, counts, n_rows, n_cols, BLOCK=256)
""",
    # the conv fix: the sequences chunked by a host loop
    "weight channels over a small tile, sequences chunked": """
@triton.jit
def conv_dh0(dy_ptr, w_ptr, h0_ptr, D, OFFSET: tl.constexpr, BD: tl.constexpr):
    pass

def dh0(dy, weight, initial_state):
    D, W = weight.shape
    N = initial_state.shape[0]
    BD = 16
    step = 65535 // triton.cdiv(D, BD)
    for n_off in range(0, N, step):
        n_len = min(step, N - n_off)
        conv_dh0[(triton.cdiv(D, BD), n_len)](dy, weight, initial_state, D, OFFSET=n_off, BD=BD)
""",
    # a launch helper every caller runs per chunk of rows (`for off, size in launch_chunks(T, ...)`)
    "a helper launched per chunk by its callers": """
@triton.jit
def norm_rows(x_ptr, D: tl.constexpr):
    pass

def _launch_rows(x, D):
    rows = x.shape[0]
    norm_rows[(rows,)](x, D=D)

def norm(x):
    T, D = x.shape
    for start, size in iter_launch_chunks(T, max_grid=65535):
        _launch_rows(x[start:start + size], D)
""",
    # (NT, B): token tiles times the batch they belong to count B * T / BT programs, the token tiles of one launch
    "token tiles times their own batch": """
@triton.jit
def cumsum(g_ptr, T, BT: tl.constexpr):
    pass

def run(g, BT=64):
    B, T, H = g.shape
    NT = triton.cdiv(T, BT)
    cumsum[(NT, B)](g, T, BT=BT)
""",
    # one program per request of a decode batch (batch = q.shape[0]) times heads
    "a decode batch times heads": """
@triton.jit
def decode(q_ptr, H: tl.constexpr):
    pass

def run(q):
    batch = q.shape[0]
    heads = q.shape[1]
    decode[(batch, heads)](q, H=heads)
""",
    # a weight's channels over a tile of 64 times the sequences: at most a few hundred programs per sequence
    "weight channels over a wide tile": """
@triton.jit
def conv_dh0(dy_ptr, w_ptr, h0_ptr, D, BD: tl.constexpr):
    pass

def dh0(dy, weight, initial_state):
    D, W = weight.shape
    N = initial_state.shape[0]
    conv_dh0[(triton.cdiv(D, 64), N)](dy, weight, initial_state, D, BD=64)
""",
}

SWEPT = {
    # tile counts of two extents the host does not tie to tokens: the sweep's, not ASC105's
    "GEMM tiles of generic matrices": """
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr):
    pass

def mm(mat1, mat2, out):
    M, K = mat1.shape
    _, N = mat2.shape
    matmul[lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)](mat1, mat2, out, M, N, K)
""",
    # a whole tensor over an autotuned tile the module does not show
    "whole tensor over an autotuned tile": """
@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    pass

def full(out):
    n = out.numel()
    fill[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](out, n)
""",
    # a whole tensor over a tile of 32768: past the limit only beyond 2**31 elements
    "whole tensor over a wide literal tile": """
@triton.jit
def zeros(out_ptr, n, BLOCK: tl.constexpr):
    pass

def zeros_like(out):
    n = out.numel()
    zeros[(triton.cdiv(n, 32768),)](out, n, BLOCK=32768)
""",
}


def _codes(source: str) -> list[str]:
    return [d.code for d in lint(HEADER + source, "ASC105", "ASC110") if d.code in ("ASC105", "ASC110")]


@pytest.mark.parametrize("name", sorted(REPORTED))
def test_a_grid_the_host_sizes_past_the_limit_is_reported(name):
    assert _codes(REPORTED[name]) == ["ASC105"]


@pytest.mark.parametrize("name", sorted(QUIET))
def test_a_grid_the_host_bounds_stays_quiet(name):
    assert _codes(QUIET[name]) == []


@pytest.mark.parametrize("name", sorted(SWEPT))
def test_a_grid_the_host_does_not_back_is_left_to_the_sweep(name):
    assert _codes(SWEPT[name]) == ["ASC110"]


def test_asc105_and_its_sweep_are_opt_in_with_their_reasons():
    # ASC105 is below 90% on code read with its host callers (docs/precision.md); ASC110 is a review sweep
    rules = {rule.code: rule for rule in all_rules()}
    assert rules["ASC105"].default is False and "untuned" in rules["ASC105"].opt_in_reason
    assert rules["ASC110"].default is False and "review sweep" in rules["ASC110"].opt_in_reason


@pytest.mark.parametrize("code", ["ASC105", "ASC110"])
def test_the_pair_never_reports_one_launch_twice(code):
    rule = next(r for r in all_rules() if r.code == code)
    for example in rule.INVALID:
        found = [(d.location, d.code) for d in lint(example.code, "ASC105", "ASC110")
                 if d.code in ("ASC105", "ASC110")]
        locations = [location for location, _ in found]
        assert len(locations) == len(set(locations)), found


@pytest.mark.parametrize("path", ["tests/ops/test_rope.py", "unit_tests/rope.py", "benchmarks/rope.py",
                                  "kernels/bench_rope.py", "kernels/rope_test.py", "conftest.py"])
def test_a_launch_in_a_test_or_benchmark_is_left_to_the_sweep(path):
    # the suite runs it at sizes it picks, and a grid past the limit fails on the first run: a review matter
    source = HEADER + REPORTED["context-length tiles times batch and heads"]
    found = [d.code for d in engine.lint_text(source, path, rules_named("ASC105", "ASC110"), None)]
    assert found == ["ASC110"]


@pytest.mark.parametrize("path", ["kernels/rope.py", "latest/rope.py", "contest/rope.py", "rope.py"])
def test_a_launch_in_library_code_stays_asc105(path):
    source = "import pytest\n" + HEADER + REPORTED["context-length tiles times batch and heads"]
    found = [d.code for d in engine.lint_text(source, path, rules_named("ASC105", "ASC110"), None)]
    assert found == ["ASC105"]  # importing pytest for a test at the bottom of a library module changes nothing


DECODE = """
@triton.jit
def attn_kernel(q_ptr, o_ptr, H: tl.constexpr):
    pass

def {host}(q, o):
    total_q, heads, _ = q.shape
    attn_kernel[(total_q, heads)](q, o, H=heads)
"""


@pytest.mark.parametrize("host", ["sparse_attention_decode", "decode_merge", "run_decoding_step"])
def test_a_launch_for_decoding_reads_its_rows_as_a_batch(host):
    # a decode step's rows are its requests (one query row or a few per sequence): with the heads, the catalog's
    # small axes
    assert _codes(DECODE.format(host=host)) == []


@pytest.mark.parametrize("host", ["sparse_attention_decode", "decode_merge"])
def test_a_decode_grid_past_the_limit_by_its_literals_is_left_to_the_sweep(host):
    source = DECODE.format(host=host).replace("(total_q, heads)", "(total_q, 256)")
    assert _codes(source) == ["ASC110"]


@pytest.mark.parametrize("host", ["sparse_attention_prefill", "decoder_layer", "encode"])
def test_a_launch_not_named_for_decoding_stays_asc105(host):
    assert _codes(DECODE.format(host=host)) == ["ASC105"]
