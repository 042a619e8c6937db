"""The value of an integer literal as Python reads it, whatever its base, never an exception.

``int(node.value)`` fails on ``0x10``, ``0o7`` and ``0b1`` (base 10 only), and every ``int(text)`` of a decimal
literal over 4,300 digits fails on the conversion limit (such a file is refused before any rule runs, as CPython
refuses it, but an analysis must not crash on one either). Every rule and analysis reads literals through here.
"""

from __future__ import annotations

import sys

import libcst as cst

_DIGITS_PER_STEP = 4000  # under the interpreter's conversion limit (4,300 digits by default)


def integer_value(node: cst.Integer) -> int:
    """The literal's value (``0x10`` is 16, ``1_000`` is 1000, ``0777``, which only Python 2 took, is 777)."""
    return integer_of(node.value)


def integer_of(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        pass
    digits = text.replace("_", "")
    if digits.isdigit() and digits.isascii():  # a long decimal literal, or a Python 2 octal one written 0777
        return _long_decimal(digits)
    raise ValueError(f"not an integer literal: {text[:40]!r}")


def _long_decimal(digits: str) -> int:
    """Exact, piece by piece, without touching the interpreter's conversion limit (a global setting)."""
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    if not limit or len(digits) <= limit:
        return int(digits)
    value = 0
    for start in range(0, len(digits), _DIGITS_PER_STEP):
        piece = digits[start : start + _DIGITS_PER_STEP]
        value = value * 10 ** len(piece) + int(piece)
    return value
