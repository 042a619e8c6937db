"""Regular expressions compiled when first used, not when their module is imported.

The analyses keep dozens of case-insensitive name patterns at module level; compiling them all costs a one-file
run several milliseconds of start-up, and a run uses about half of them (the others belong to code the file does
not contain). A lazy pattern answers the ``re.Pattern`` methods the code calls and compiles itself on the first.
"""

from __future__ import annotations

import re


class LazyPattern:
    __slots__ = ("_source", "_flags", "_compiled")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern | None = None

    @property
    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._source

    def match(self, *args):
        return self.compiled.match(*args)

    def fullmatch(self, *args):
        return self.compiled.fullmatch(*args)

    def search(self, *args):
        return self.compiled.search(*args)

    def finditer(self, *args):
        return self.compiled.finditer(*args)

    def findall(self, *args):
        return self.compiled.findall(*args)

    def sub(self, *args):
        return self.compiled.sub(*args)

    def subn(self, *args):
        return self.compiled.subn(*args)

    def split(self, *args):
        return self.compiled.split(*args)

    def __repr__(self) -> str:
        return f"lazy({self._source!r}, {self._flags})"


def lazy(source: str, flags: int = 0) -> LazyPattern:
    """``re.compile(source, flags)``, compiled on first use."""
    return LazyPattern(source, flags)
