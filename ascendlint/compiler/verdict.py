"""What BiShengIR said about one kernel at one configuration, parsed from its stderr and its memory display.

The A2/A3 binary retries an on-chip overflow by itself (code motion off, then multi-buffering off), rewriting its
memory display each time; the launch asked for the first attempt's options, so the verdict is the first attempt's,
and ``fits_after_retry`` says whether a retry would have rescued it. Reaching the external ``hivmc`` step (CANN's,
absent here) means the kernel compiled up to the binary.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

FITS = "fits"  # reached the last step, the one that needs CANN
OVERFLOW = "overflow"  # an on-chip buffer (UB, L0C, L1) is too small at the launch's options
ERROR = "error"  # the frontend or the compiler rejected the kernel
NOT_COMPILED = "not-compiled"  # no verdict: the text could not be rebuilt or lowered here (reason says why)

REACHED_LAST_STEP = "External hivmc run fails"
# the A5 binary says nothing of the last step; it only looks for its external compiler and stops without an error
A5_EXTERNAL_MISSING = "Cannot find hivmc-a5"
RETRY_NOTE = "Ub overflow detected"
SCOPE_NAMES = {"ub": "UB", "cc": "L0C", "cbuf": "L1"}
_OVERFLOW = re.compile(r"(\w+) overflow, requires (\d+) bits while (\d+) bits available")
_ERROR_LINE = re.compile(r"error: (.*)")
_NOISE = ("Failed to run BiShengHIR pipeline", "Failed to run BiShengIR pipeline", REACHED_LAST_STEP)


@dataclass
class Scope:
    """One on-chip memory as the compiler planned it (bits)."""

    name: str  # "ub", "cc" (L0C), "cbuf" (L1)
    peak_bits: int
    status: str  # "success" / "fail"
    required_bits: int | None = None
    available_bits: int | None = None

    @property
    def label(self) -> str:
        return SCOPE_NAMES.get(self.name, self.name)


@dataclass
class Verdict:
    status: str
    scopes: list[Scope] = field(default_factory=list)
    message: str = ""  # the first error line, or why there is no verdict
    fits_after_retry: bool | None = None  # overflow only: a compiler retry (multi-buffering off) fit
    seconds: float = 0.0

    @property
    def overflow(self) -> Scope | None:
        return next((s for s in self.scopes if s.status == "fail" and s.required_bits), None)

    def scope(self, name: str) -> Scope | None:
        return next((s for s in self.scopes if s.name == name), None)

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "Verdict":
        scopes = [Scope(**s) for s in data.get("scopes", [])]
        return cls(data["status"], scopes, data.get("message", ""), data.get("fits_after_retry"),
                   data.get("seconds", 0.0))


def scopes_from_display(display: dict | None) -> list[Scope]:
    """Scopes of one ``memory_info_*.json``: the peak is the end of the highest buffer (offsets are bytes)."""
    found = []
    for record in (display or {}).get("Record", []):
        peak = 0
        for buffer in record.get("memory_info_array", []):
            for offset in buffer.get("offset", []):
                peak = max(peak, int(offset) * 8 + int(buffer.get("extent", 0)))
        scope = Scope(record.get("scope", "?"), peak, record.get("status", "success"))
        match = _OVERFLOW.search(record.get("error_info", ""))
        if match:
            scope.required_bits, scope.available_bits = int(match.group(2)), int(match.group(3))
        found.append(scope)
    return found


def first_error(stderr: str) -> str:
    """The compiler's first error line that says something (not the pipeline's closing words)."""
    for line in stderr.splitlines():
        match = _ERROR_LINE.search(line)
        if match and not any(noise in match.group(1) for noise in _NOISE):
            return match.group(1).strip()
    return ""


def from_compiler(stderr: str, first_attempt: list[Scope], final: list[Scope]) -> Verdict:
    """The verdict of one ``bishengir-compile`` run. ``first_attempt`` holds the memory display as it stood when the
    first retry note appeared (empty when the first attempt was the only one)."""
    retried = RETRY_NOTE in stderr
    scopes = first_attempt if retried and first_attempt else final
    failed = [s for s in scopes if s.status == "fail"]
    if not failed:  # the display can lag behind stderr's verdict
        match = _OVERFLOW.search(stderr)
        if match:
            failed = [Scope(match.group(1).lower(), int(match.group(2)), "fail", int(match.group(2)),
                            int(match.group(3)))]
            scopes = [s for s in scopes if s.name != failed[0].name] + failed
    if failed:
        rescued = retried and REACHED_LAST_STEP in stderr
        return Verdict(OVERFLOW, scopes, first_error(stderr) or "on-chip buffer overflow", fits_after_retry=rescued)
    if REACHED_LAST_STEP in stderr or (A5_EXTERNAL_MISSING in stderr and not _ERROR_LINE.search(stderr)):
        return Verdict(FITS, scopes)
    lines = stderr.strip().splitlines()
    return Verdict(ERROR, scopes, first_error(stderr) or (lines[-1] if lines else "the compiler stopped silently"))
