from __future__ import annotations

import bisect
import re
from typing import Iterable

from ascendlint.fixes import noqa
from ascendlint.diagnostics import Applicability, Diagnostic, Edit, Fix, FixSafety, Location, Severity
from ascendlint.rule import Invalid, Rule, Valid
from ascendlint.text.lazy_regex import lazy

_MAY_LIST_OUR_CODES = lazy(r"noqa[^\n]*?ASC", re.IGNORECASE)


class UnusedNoqa(Rule):
    """Flags ascendlint codes in a `# noqa` comment that suppress nothing on their line."""

    decides = """
    Only `ASC` codes and prefixes are checked: codes of other tools (`# noqa: E501`) and a bare `# noqa` are left
    alone, since other linters read the same comment. A code is unused when no finding of that rule is reported on
    the line, including when a default rule is not enabled for the file; a code that names no ascendlint rule is
    unused too. A code of an opt-in rule that is not enabled is left alone: such a suppression is written for the
    runs that enable the rule, and a default run (or its `--fix`) must not delete it. A comment that also lists
    `ASC003` (or a prefix of it) is never flagged.
    """

    code = "ASC003"
    name = "unused-noqa"
    message = "Unused `noqa` code: {codes}"
    severity = Severity.WARNING
    fix_safety = FixSafety.SAFE
    tool_rule = True
    why = """
        A suppression that suppresses nothing hides the next real finding on that line: once a kernel is edited,
        an old `# noqa: ASC301` silences a new `tl.dot` operand reuse that corrupts UB data without any error.
        Stale codes also tell readers that a hazard exists where there is none.
    """
    fix_notes = """
        The fix removes the unused codes and keeps the others; when no code is left, the whole `# noqa` goes,
        and any other comment text on the line stays.
    """
    INVALID = [
        Invalid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # noqa: ASC301
                tl.store(x_ptr + offs, 0.0, mask=offs < n)
            """,
            fixed="""
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, 0.0, mask=offs < n)
            """,
            doc=True,
        ),
        Invalid(
            """
            import triton

            def run(k, x):
                k[(1,)](x)  # noqa: E501, ASC101
            """,
            fixed="""
            import triton

            def run(k, x):
                k[(1,)](x)  # noqa: E501
            """,
        ),
        Invalid(
            """
            import triton

            def run(k, x):
                k[(1,)](x)  # noqa: ASC101, ASC2 - both stale
            """,
            fixed="""
            import triton

            def run(k, x):
                k[(1,)](x)  # - both stale
            """,
        ),
        Invalid(
            """
            import triton

            def run(k, x):
                k[(1,)](x)  # type: ignore[index]  # noqa: ASC999
            """,
            fixed="""
            import triton

            def run(k, x):
                k[(1,)](x)  # type: ignore[index]
            """,
        ),
        Invalid(
            """
            import triton

            def run(k, x):
                # noqa: ASC102
                k[(1,)](x)
                k[(2,)](x)  # NOQA:asc101,asc102
            """,
            count=2,
            fixed="""
            import triton

            def run(k, x):
                k[(1,)](x)
                k[(2,)](x)
            """,
        ),
    ]
    VALID = [
        Valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def kernel(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, 0.0, mask=offs < n)  # noqa: E501 - long line allowed here
            """,
            doc=True,
        ),
        Valid(
            """
            import triton

            def run(k, x):
                k[(1,)](x)  # noqa
                k[(2,)](x)  # noqa: E501, F401
                k[(3,)](x)  # noqa: ASC101, ASC003
                k[(4,)](x)  # noqa: ASC0
            """
        ),
        Valid(
            '''
            import triton

            NOTE = """
            k[(1,)](x)  # noqa: ASC101
            """
            TEXT = "# noqa: ASC102"
            '''
        ),
    ]

    @classmethod
    def unused_directives(
        cls,
        text: str,
        filename: str,
        used: set[tuple[int, str]],
        enabled: Iterable[str],
        crashed: Iterable[str],
    ) -> list[Diagnostic]:
        """Findings for the directives of ``text`` whose ASC codes suppressed nothing (``used``: row, code)."""
        if _MAY_LIST_OUR_CODES.search(text) is None or not noqa.may_have_unused(text, used):
            return []  # the usual case, decided without tokenizing the file
        from ascendlint.catalog.registry import all_rules

        rules = all_rules()
        known = [rule.code for rule in rules]
        enabled = set(enabled)
        crashed = tuple(crashed)
        opt_in = [rule.code for rule in rules if not rule.default]
        default = [rule.code for rule in rules if rule.default]

        def exempt(code: str) -> bool:
            if any(k.startswith(code) for k in crashed):
                return True
            # a code naming only opt-in rules, none of them enabled: kept for the runs that enable them
            return (any(k.startswith(code) for k in opt_in) and not any(k.startswith(code) for k in default)
                    and not any(e.startswith(code) for e in enabled))

        facts = noqa.scan(text)
        found = []
        for entry in noqa.unused_codes(facts, used, known, exempt=exempt):
            if any(cls.code.startswith(c) for c in entry.directive.codes):
                continue
            found.append(cls._diagnostic(text, filename, facts, entry, enabled))
        return found

    @classmethod
    def _diagnostic(cls, text, filename, facts, entry: noqa.UnusedCodes, enabled: set[str]) -> Diagnostic:
        directive = entry.directive
        start, end = _location(facts, directive.start), _location(facts, directive.end)
        listed = ", ".join(entry.unused)
        notes = []
        if entry.unknown:
            notes.append(f"unknown: {', '.join(entry.unknown)}")
        disabled = [c for c in entry.unused if c not in entry.unknown and not any(e.startswith(c) for e in enabled)]
        if disabled:
            notes.append(f"not enabled: {', '.join(disabled)}")
        message = cls.message.format(codes=listed) + (f" ({'; '.join(notes)})" if notes else "")
        replacement = noqa.with_codes(directive, entry.kept)
        edit = (
            Edit(directive.comment_start, directive.comment_end, replacement)
            if replacement
            else _remove_comment(text, facts, directive.row, directive.comment_start, directive.comment_end)
        )
        what = "the unused `noqa` code" + ("s" if len(entry.unused) > 1 else "") if entry.kept else "the `noqa`"
        return Diagnostic(
            code=cls.code,
            name=cls.name,
            severity=cls.severity,
            message=message,
            filename=filename,
            location=start,
            end_location=end,
            fix=Fix(f"Remove {what}", Applicability.SAFE, (edit,)),
            noqa_row=directive.row,
            url=cls.url(),
        )


def _location(facts: noqa.LineFacts, offset: int) -> Location:
    row = bisect.bisect_right(facts.line_starts, offset)
    return Location(row, offset - facts.line_starts[row - 1] + 1)


def _remove_comment(text: str, facts: noqa.LineFacts, row: int, start: int, end: int) -> Edit:
    """Delete a comment with the blanks before it, or its whole line when nothing else is on it.

    Lines are those of ``facts`` (Python's: a lone ``\\r`` ends one too), never found by searching for ``\\n``.
    """
    starts = facts.line_starts
    line_begin = starts[row - 1]
    if not text[line_begin:start].strip():
        return Edit(line_begin, starts[row] if row < len(starts) else len(text), "")
    while start > line_begin and text[start - 1] in " \t":
        start -= 1
    return Edit(start, end, "")
