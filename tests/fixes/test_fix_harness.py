"""Every fix proven by triton-ascend's own compiler and by running it: see ``harness.py`` for how.

What each rule's cases prove (``harness.CLAIMS``):

- ASC003, ASC101: the fix edits comments or host code only; the kernels' code is unchanged (compared as ASTs),
  so they compile and compute exactly as before.
- ASC102: the original fails to compile (``'constexpr' object has no attribute 'to'``, for a constexpr and for an
  integer the launcher specialises to 1); the fixed kernel compiles to TTIR and Linalg for every signature, and
  runs in the interpreter (where the original fails too).
- ASC106: the fix deletes `eviction_policy=` / `cache_modifier=`; the fixed kernel compiles for every signature
  and computes the same numbers as the original.
- ASC108: the original fails to compile (``'dtype' object is not callable``, or ``tensor.to()`` rejecting
  ``overflow_mode``); the fixed kernel (``tl.full((), value, dtype)``, ``x.cast(...)``) compiles to TTIR and Linalg
  for every signature and runs in the interpreter.
- ASC201, ASC202, ASC203, ASC303: the fixed kernel compiles for fp32, fp16, bf16 and int8 tiles and with
  integers specialised to 1, and computes the same numbers as the original where nothing overflows and tiles fit
  their extents (the interpreter, fp32/fp16/int8).
- ASC301: the same, and the copy or reload is a separate tile in Linalg (no other use of the matmul's left
  operand) and survives the emulator's ``tl.dot`` lhs clobber, which corrupts the original.
- ASC403: the fixed kernel compiles (against interface stand-ins of the Triton-distributed device API, to TTIR:
  the stand-ins' calls do not lower to Linalg), its TTIR has the device fence between the stores and the notify
  (the original's does not), and it computes the same on two emulated ranks, unless the original raced (the
  emulator holds MTE stores until a fence): then the fixed kernel leaves what the case's expectation says and
  the original does not.
- ASC402: an unsafe fix that changes which slots are notified; it must compile and run on two emulated ranks
  without error or hang.
- ASC405: the original hands UDMA an address mapped by ``symm_at``/``remote_ptr``, which the emulator rejects as
  the hardware does; the fixed kernel must compile, run on two emulated ranks and leave in every rank's buffers
  what a one-sided put or get of those bytes must (``expectations.py``).
"""

from __future__ import annotations

import importlib.util
import re
import time

import pytest

from . import cases as fix_cases
from . import harness

CASES = fix_cases.all_cases()
BY_ID = {case.id: case for case in CASES}

# Cases that fail today for defects outside this harness; strict, so they turn into failures once fixed.
KNOWN_DEFECTS: dict[str, str] = {}


def _params(selected, known_defects: bool = True):
    """One parameter per case; a case with a known defect is a strict xfail in the tests the defect breaks."""
    return [
        pytest.param(case, id=case.id, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DEFECTS[case.id]))
        if known_defects and case.id in KNOWN_DEFECTS else pytest.param(case, id=case.id)
        for case in selected
    ]


KERNEL_CASES = [c for c in CASES if c.changed_kernels]
HOST_ONLY_CASES = [c for c in CASES if not c.changed_kernels]


@pytest.fixture(scope="module")
def harness_cache(request, tmp_path_factory):
    if importlib.util.find_spec("triton") is None or importlib.util.find_spec("torch") is None:
        pytest.skip("triton-ascend or torch is not installed (the 'kernels' extra)")
    cache = getattr(request.config, "cache", None)  # absent under `-p no:cacheprovider`
    folder = cache.mkdir("ascendlint-fix-harness") if cache is not None else None
    return harness.Cache(folder or tmp_path_factory.mktemp("fix-harness"))


@pytest.fixture(scope="module")
def reports(harness_cache):
    cache = harness_cache
    started = time.monotonic()
    found, counts = harness.evaluate(KERNEL_CASES, cache)
    counts["seconds"] = round(time.monotonic() - started, 1)
    harness.LAST_RUN.update(counts)
    return found


def test_there_are_cases_for_every_rule_with_a_fix():
    from ascendlint.diagnostics import FixSafety
    from ascendlint.catalog.registry import all_rules

    fixing = {r.code for r in all_rules() if r.fix_safety is not FixSafety.NONE}
    covered = {code for case in CASES for code in case.codes}
    assert fixing <= covered, fixing - covered
    assert {"examples/chunked_attention_traps.py", "examples/vector_add_traps.py"} <= set(BY_ID)


@pytest.mark.parametrize("case", _params(CASES, known_defects=False))
def test_fix_reparses_and_is_idempotent(case):
    assert fix_cases.fix(case.fixed, case.lint_codes).text == case.fixed


@pytest.mark.parametrize("case", _params(HOST_ONLY_CASES))
def test_fix_outside_kernels_leaves_every_kernel_unchanged(case):
    """Comments and host code only: what the compiler sees of every kernel is the same AST as before."""
    assert set(case.codes) <= {"ASC003", "ASC101"}, "only comment and launch-keyword fixes stay outside kernels"
    assert fix_cases._jit_functions(case.original) == fix_cases._jit_functions(case.fixed)
    if "ASC003" in case.codes and len(case.codes) == 1:
        assert case.only_comments_changed


@pytest.mark.parametrize("case", _params(KERNEL_CASES))
def test_fixed_kernels_compile_offline(reports, case):
    report = reports[case.id]
    assert report.plans, f"no launchable kernel calls the changed code {sorted(case.changed_kernels)}"
    for kernel in report.plans:
        outcomes = [o for o in report.compiles if o.kernel == kernel]
        broken = [f"{o.variant}: {o.fixed.get('error') or o.fixed.get('crash')}" for o in outcomes
                  if o.status == "broken"]
        assert not broken, "\n".join(broken)
        lowered = [o for o in outcomes if o.status in ("compiles", "repaired")]
        assert lowered, f"{kernel}: no signature compiles, before or after the fix"
        no_linalg = [
            f"{o.variant}: {o.fixed.get('linalg_error')}" for o in outcomes if o.linalg_status == "broken-linalg"
        ]
        assert not no_linalg, "\n".join(no_linalg)
        worse = [f"{o.variant}: {o.fixed['bisheng']['status']}: {o.fixed['bisheng']['message']}" for o in outcomes
                 if o.bisheng_status == "broken-bisheng"]
        assert not worse, "the fix makes the NPU compiler's verdict worse:\n" + "\n".join(worse)
        if harness.REPAIRS_COMPILE in report.claims:
            assert any(o.status == "repaired" for o in outcomes), "the original compiled everywhere: nothing repaired"
        if not report.plans[kernel].distributed:
            assert any(o.linalg_status == "linalg" for o in lowered), f"{kernel}: never lowered to Linalg"


@pytest.mark.parametrize("case", _params(KERNEL_CASES))
def test_fixed_kernels_run_and_compute_what_the_originals_do(reports, case):
    report = reports[case.id]
    assert report.runs or report.not_run, "nothing was run"
    compared = repaired = 0
    runtime_traps = [harness.RUNTIME_TRAPS[c] for c in case.codes if c in harness.RUNTIME_TRAPS]
    for kernel, variant, result in report.runs:
        where = f"{kernel} [{variant}]"
        assert not result.get("crash"), f"{where}: {result['crash']}"
        if result["original_error"] is None:
            assert result["fixed_error"] is None, f"{where}: only the fixed kernel fails: {result['fixed_error']}"
        unexpected = result.get("fixed_unexpected")  # None: no expectation, or the fixed kernel did not run
        assert not unexpected, f"{where}: the fixed kernel leaves wrong contents in {unexpected}"
        if result["fixed_error"] is not None:
            assert harness.REPAIRS_RUNTIME not in report.claims, f"{where}: the fix fails: {result['fixed_error']}"
            continue  # neither runs in the interpreter (judged by the compile test)
        if result["original_error"] is not None:
            if harness.REPAIRS_RUNTIME in report.claims:
                error = result["original_error"]
                assert any(t in error for t in runtime_traps), f"{where}: the original fails otherwise: {error}"
                assert unexpected == [], f"{where}: no expectation judges the repaired kernel"
                repaired += 1
                continue
            assert harness.REPAIRS_COMPILE in report.claims, f"{where}: the original fails: {result['original_error']}"
            continue
        if harness.REPAIRS_RACE in report.claims and result["differ"]:
            # A difference is allowed only where the original is shown wrong and the fixed kernel right.
            assert unexpected == [], f"{where}: the fix changes {result['differ']} and no expectation judges it"
            assert result["original_unexpected"], f"{where}: the fix changes {result['differ']}, the original was right"
            repaired += 1
        elif report.claims <= {harness.SAME_NUMBERS, harness.REPAIRS_RACE}:
            assert result["differ"] == [], f"{where}: the fix changes {result['differ']}"
        compared += 1
    if harness.REPAIRS_COMPILE in report.claims and not report.not_run:
        assert any(r["fixed_error"] is None for _, _, r in report.runs), "the repaired kernel never ran"
    elif harness.REPAIRS_RUNTIME in report.claims and report.runs:
        assert repaired or compared, "the fixed kernel never ran"
        assert repaired or not any(r["original_error"] for _, _, r in report.runs), "nothing repaired"
    elif report.runs:
        assert compared, "the fixed kernel never ran where the original did"


ASC301_CASES = [c for c in KERNEL_CASES if {"ASC301", "ASC306"} & set(c.codes)]  # ASC306 has ASC301's fix
ASC403_CASES = [c for c in KERNEL_CASES if "ASC403" in c.codes]


_DEFINITION = re.compile(r"^\s*(%[\w.]+)(?::\d+)?\s*=")


def _defined_on(line: str) -> str | None:
    match = _DEFINITION.match(line)
    return match.group(1) if match else None


def _own_lhs_tiles(linalg: str) -> list[bool]:
    """For every ``linalg.matmul``: is its left operand a tile of its own? That is: defined in the matmul's own
    region (not outside a loop it is reused in), and used by nothing else except ops feeding the same matmul's
    right operand (``tl.dot(b, tl.trans(b))``)."""
    lines = linalg.splitlines()
    region_of, stack, counter = {}, [0], 0
    line_region = []
    for line in lines:
        if line.strip().startswith("}"):
            stack.pop()
        match = _DEFINITION.match(line)
        if match:
            region_of[match.group(1)] = stack[-1]
        line_region.append(stack[-1])
        if line.rstrip().endswith("{"):
            counter += 1
            stack.append(counter)
    found = []
    for number, line in enumerate(lines):
        match = re.search(r"linalg\.matmul\b.*?ins\((%[\w.]+)\s*,\s*(%[\w.]+)", line)
        if not match:
            continue
        lhs, rhs = match.groups()
        use = re.compile(re.escape(lhs) + r"(?![\w.])")
        others = [
            other for index, other in enumerate(lines)
            if index != number and use.search(other) and _defined_on(other) != lhs
        ]
        alone_in_matmul = len(use.findall(line)) == 1  # not also the accumulator (`outs(...)`)
        feeding_rhs = all(_defined_on(other) == rhs for other in others)
        found.append(region_of.get(lhs) == line_region[number] and alone_in_matmul and feeding_rhs)
    return found


@pytest.mark.parametrize("case", _params(ASC301_CASES))
def test_asc301_copy_is_a_tile_of_its_own_that_survives_the_lhs_clobber(reports, case):
    report = reports[case.id]
    pairs = [o for o in report.compiles if o.fixed.get("linalg") and (o.original or {}).get("linalg")]
    assert pairs
    newly_own = []
    for outcome in pairs:
        before, after = _own_lhs_tiles(outcome.original["linalg"]), _own_lhs_tiles(outcome.fixed["linalg"])
        assert len(before) == len(after), f"{outcome.variant}: the fix changed the number of matmuls"
        assert all(a or not b for a, b in zip(after, before)), f"{outcome.variant}: a matmul lost its own lhs"
        newly_own.append(sum(a and not b for a, b in zip(after, before)))
    assert max(newly_own) >= case.fixed_count("ASC301") + case.fixed_count("ASC306"), f"matmuls given their own lhs per signature: {newly_own}"
    hazards = [r["hazard"] for _, _, r in report.runs if r.get("hazard")]
    assert hazards, "never run under the lhs clobber"
    assert all(h["fixed"] == [] for h in hazards), hazards
    assert any(h["original"] for h in hazards), "the clobber never corrupted the original: the check proves nothing"


def _unfenced_notifies(ttir: str) -> int:
    """Notifies reached, in textual order, by a store with no fence or synchronous putmem after it."""
    pending, count = False, 0
    for line in ttir.split("tt.func private")[0].splitlines():
        if re.search(r"\btt\.store\b", line):
            pending = True
        elif re.search(r"tt\.call @(fence|putmem)_", line):
            pending = False
        elif re.search(r"tt\.call @notify_", line):
            count += pending
    return count


@pytest.mark.parametrize("case", _params(ASC403_CASES))
def test_asc403_device_fence_sits_between_the_stores_and_the_notify(reports, case):
    report = reports[case.id]
    lowered = [o for o in report.compiles if o.fixed.get("ttir")]
    assert lowered
    for outcome in lowered:
        assert "tt.call @fence_" in outcome.fixed["ttir"], outcome.variant
        assert _unfenced_notifies(outcome.fixed["ttir"]) == 0, outcome.variant
    originals = [o.original["ttir"] for o in lowered if o.original and o.original.get("ttir")]
    assert any(_unfenced_notifies(text) for text in originals), "the original was already fenced"


# -- the harness itself: it must reject the fixes that used to break kernels ---------------------------------------

_INT8_CAPABLE = """import triton
import triton.language as tl


@triton.jit
def kernel(q, k, o, BT: tl.constexpr):
    offs = tl.arange(0, BT)[:, None] * BT + tl.arange(0, BT)[None, :]
    b_q = tl.load(q + offs)
    b_k = tl.load(k + offs)
    b_s = tl.dot(b_q, b_k)
    tl.store(o + offs, b_s + b_q)
"""
_HOST_FENCE = """import shmem as ash
import triton
import triton.language as tl
import triton_dist.language as dl


@triton.jit
def publish(buf_ptr, signal_ptr, x_ptr, peer, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dl.symm_at(buf_ptr, peer) + offs, tl.load(x_ptr + offs))
    dl.notify(signal_ptr, peer)
"""


@pytest.mark.parametrize(
    ("original", "old_fix", "codes", "broken_variants"),
    [
        pytest.param(
            _INT8_CAPABLE,
            _INT8_CAPABLE.replace("    b_s = tl.dot(b_q, b_k)", "    b_q_c = b_q + 0.0\n    b_s = tl.dot(b_q_c, b_k)"),
            ("ASC301",), {"i8"}, id="ASC301-float-copy-of-an-int8-tile",
        ),
        pytest.param(
            _HOST_FENCE,
            _HOST_FENCE.replace("    dl.notify", "    ash.fence()\n    dl.notify"),
            ("ASC403",), {"fp32", "fp16", "bf16", "i8", "fp32,ints=1"}, id="ASC403-fence-of-the-host-package",
        ),
    ],
)
def test_the_harness_rejects_the_fixes_that_used_to_break_kernels(harness_cache, original, old_fix, codes,
                                                                  broken_variants):
    case = fix_cases.FixCase("old-fix", codes, original, old_fix, codes, tuple((c, 1) for c in codes))
    (report,) = harness.evaluate([case], harness_cache)[0].values()
    assert {o.variant for o in report.compiles if o.status == "broken"} == broken_variants


@pytest.mark.parametrize(
    ("case_id", "replacements", "wrong"),
    [
        pytest.param("ASC405-example-0", [("putmem(buf_ptr, x_ptr,", "putmem(buf_ptr + 1, x_ptr,")],
                     ["buf_ptr@0", "buf_ptr@1"], id="ASC405-put-one-element-off"),
        pytest.param("examples/allgather_traps.py",
                     [("    libshmem_device.fence()\n", ""),
                      ("    # The token is never", "    libshmem_device.fence()\n    # The token is never")],
                     ["x_ptr@1"], id="ASC403-fence-after-the-notify"),
    ],
)
def test_the_harness_judges_repairs_by_what_they_leave(harness_cache, case_id, replacements, wrong):
    """A repair is not compared with the original (which fails or races) but with the expectation: a wrong one
    must be caught there."""
    good = BY_ID[case_id]
    fixed = good.fixed
    for old, new in replacements:
        assert old in fixed
        fixed = fixed.replace(old, new)
    case = fix_cases.FixCase(good.id, good.codes, good.original, fixed, good.lint_codes, good.fixed_counts)
    (report,) = harness.evaluate([case], harness_cache)[0].values()
    assert [r.get("fixed_unexpected") for _, _, r in report.runs] == [wrong]


def test_fixed_kernels_go_through_the_npu_compiler(reports):
    """With the compiler installed, every fix that lowers to Linalg is also compiled by BiShengIR, and most fixed
    kernels reach its last step (the rest overflow or fail alike before and after the fix)."""
    from ascendlint.compiler import missing

    if missing():
        pytest.skip(f"the NPU compiler is not installed: {missing()}")
    outcomes = [o for report in reports.values() for o in report.compiles if o.fixed.get("linalg") is not None]
    judged = [o.bisheng_status for o in outcomes]
    assert outcomes and "n/a" not in judged
    assert judged.count("fits") >= len(judged) // 2, sorted(set(judged))
