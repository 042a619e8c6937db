"""How BiShengIR's stderr and memory display become a verdict (no compiler needed: its words as observed)."""

from ascendlint.compiler import verdict as v

LAST_STEP = ('loc("k.mlir":1:1): error: External hivmc run fails, returning module before running external compiler\n'
             "[ERROR] Failed to run BiShengIR pipeline\n")
OVERFLOW = ('loc("k.mlir":2:3): error: ub overflow, requires 4194304 bits while 1572864 bits available! '
            "(possible reason: tiling basic block is too large)\n[ERROR] Failed to run BiShengIR pipeline\n")
RETRIES = ("[NOTE] Ub overflow detected; automatically set enable-code-motion to false and retrying compilation.\n"
           "[NOTE] Ub overflow detected; automatically set enable-auto-multi-buffer to false and retrying compilation.\n")


def display(scope: str, buffers: list[tuple[int, int]], error: str = "") -> dict:
    record = {"scope": scope, "status": "fail" if error else "success",
              "memory_info_array": [{"offset": [offset], "extent": extent} for offset, extent in buffers]}
    if error:
        record["error_info"] = error
    return {"Record": [record]}


def test_peak_is_the_end_of_the_highest_buffer_with_offsets_in_bytes():
    (scope,) = v.scopes_from_display(display("ub", [(0, 2097152), (262144, 2097152)]))
    assert (scope.name, scope.peak_bits, scope.label) == ("ub", 4194304, "UB")


def test_reaching_the_external_step_is_a_fit():
    found = v.from_compiler(LAST_STEP, [], v.scopes_from_display(display("ub", [(0, 65536)])))
    assert found.status == v.FITS and found.scope("ub").peak_bits == 65536


def test_overflow_carries_required_and_available_bits():
    scopes = v.scopes_from_display(display("ub", [(0, 2097152)], error=OVERFLOW.split("error: ")[1]))
    found = v.from_compiler(OVERFLOW, [], scopes)
    assert found.status == v.OVERFLOW
    assert (found.overflow.required_bits, found.overflow.available_bits) == (4194304, 1572864)
    assert found.fits_after_retry is False


def test_overflow_read_from_stderr_when_the_display_lags():
    found = v.from_compiler(OVERFLOW, [], [])
    assert found.status == v.OVERFLOW and found.overflow.required_bits == 4194304


def test_first_attempt_decides_even_when_a_retry_fits():
    first = v.scopes_from_display(display("ub", [(0, 2359296)], error="ub overflow, requires 2359296 bits while "
                                          "1572864 bits available!"))
    final = v.scopes_from_display(display("ub", [(0, 1572864)]))
    found = v.from_compiler(RETRIES + LAST_STEP, first, final)
    assert found.status == v.OVERFLOW and found.fits_after_retry is True
    assert found.overflow.required_bits == 2359296


def test_l0c_overflow_is_named_by_its_scope():
    stderr = 'loc("k":1:1): error: cc overflow, requires 2097152 bits while 1048576 bits available!\n'
    found = v.from_compiler(stderr, [], [])
    assert found.overflow.label == "L0C"


def test_a_compile_error_reports_its_first_meaningful_line():
    stderr = ('loc("k":1:1): error: Failed to run BiShengHIR pipeline\n'
              "loc(\"k\":9:9): error: 'hivm.hir.copy' op Unsupported copy from cc to cc!\n")
    found = v.from_compiler(stderr, [], [])
    assert found.status == v.ERROR and found.message == "'hivm.hir.copy' op Unsupported copy from cc to cc!"


def test_verdicts_round_trip_through_json():
    found = v.from_compiler(OVERFLOW, [], [])
    assert v.Verdict.from_json(found.as_json()) == found


def test_the_a5_compiler_reaching_its_external_step_without_an_error_is_a_fit():
    stderr = "[ERROR] Cannot find hivmc-a5 under $PATH \n" * 3 + "[ERROR] Failed to run BiShengIR pipeline\n"
    assert v.from_compiler(stderr, [], []).status == v.FITS
    failed = stderr + 'loc("k":1:1): error: Failed to run buildFinalHIVMPipelines pipeline\n'
    assert v.from_compiler(failed, [], []).status == v.ERROR
