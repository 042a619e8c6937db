"""Ignore patterns (``.gitignore``, excludes) compiled so that matching a path takes time linear in its length.

pathspec turns each ``*`` into ``[^/]*`` and each inner ``**`` into ``(?:/.+)?``. Python's regular expressions
backtrack, so a pattern with many of them against a long name tries every way of splitting the name: 13 stars
against a 30-letter name took seconds, 60 letters minutes, and four ``**`` against a folder 100 levels deep as long.
The same regular expressions are rewritten so that every wildcard but the last of its kind commits to the earliest
place where the text after it matches (the lookahead-and-backreference form of an atomic group, as ``fnmatch``
does). That is exact for globs: the wildcard that follows can absorb whatever an earlier choice leaves over, so if
any split matches, the earliest one does. Each wildcard is then tried once per position, never in combination.
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Iterable

STAR = "[^/]*"  # ``*`` in a path segment
INNER_STARS = "(?:/.+)?"  # ``/**/`` between segments
LEADING_STARS = "^(?:.+/)?"  # ``**/`` (or no slash at all) before the first segment
_names = itertools.count()


def compile_spec(lines: Iterable[str]):
    """``pathspec.GitIgnoreSpec.from_lines(lines)`` with every pattern's expression made linear."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
    return pathspec.GitIgnoreSpec([_linear(pattern) for pattern in spec.patterns])


def _linear(pattern):
    regex = getattr(pattern, "regex", None)
    if regex is None or not isinstance(regex.pattern, str):
        return pattern
    rewritten = linear_regex(regex.pattern)
    if rewritten == regex.pattern:
        return pattern
    try:
        compiled = re.compile(rewritten, regex.flags)
    except re.error:  # a pattern shape this rewrite does not know: keep pathspec's own
        return pattern
    linear = copy.copy(pattern)
    linear.regex = compiled
    return linear


def linear_regex(regex: str) -> str:
    """pathspec's expression for one pattern, its wildcards committing to their earliest match (see above)."""
    pieces = regex.split(INNER_STARS)
    if len(pieces) > 1:
        # Every inner ``**`` but the last, with the segments after it, commits to the earliest place those segments
        # match (and are followed by a slash, as the next ``**`` needs); so does a leading ``**/`` when one follows.
        first, *middle, last = pieces
        if first.startswith(LEADING_STARS):
            first = "^" + _earliest("(?:.+?/)?" + _stars(first[len(LEADING_STARS):]) + "(?=/)")
        else:
            first = _stars(first)
        middle = [_earliest("(?:/.+?)?" + _stars(piece) + "(?=/)") for piece in middle]
        return first + "".join(middle) + INNER_STARS + _stars(last)
    return _stars(regex)


def _stars(regex: str) -> str:
    """Within each segment, every ``*`` but the last commits to the earliest match of the text up to the next."""
    pieces = regex.split(STAR)
    if len(pieces) <= 2:
        return regex
    head, *between, tail = pieces
    out = [head]
    for piece in between:
        if piece:  # ``**`` inside a segment is one star
            out.append(_earliest(STAR[:-1] + "*?" + piece))
    out.append(STAR + tail)
    return "".join(out)


def _earliest(regex: str) -> str:
    """``regex`` matched once, at its shortest, and never tried again: an atomic group in Python 3.10's syntax."""
    name = f"_asc{next(_names)}"
    return f"(?=(?P<{name}>{regex}))(?P={name})"
