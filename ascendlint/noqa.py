"""Suppression comments: ``# noqa``, ``# noqa: ASC101, ASC2`` on the reported line, ``# ascendlint: skip-file``."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"^[ \t]*#[ \t]*ascendlint:[ \t]*skip-file[ \t]*$", re.MULTILINE)


def skips_file(text: str) -> bool:
    return _SKIP_FILE.search(text) is not None


def noqa_codes(line: str) -> tuple[str, ...] | None:
    """None: no suppression; (): bare ``# noqa``; else the listed codes or prefixes."""
    if "#" not in line:
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return ()
    return tuple(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)


def is_suppressed(code: str, line: str) -> bool:
    codes = noqa_codes(line)
    if codes is None:
        return False
    return not codes or any(code.startswith(c) for c in codes)
