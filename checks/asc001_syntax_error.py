from ascendlint.diagnostics import Severity
from ascendlint.rule import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    """Reports a file that does not parse as Python; linting carries on with the other files."""

    code = "ASC001"
    name = "syntax-error"
    message = "SyntaxError"
    severity = Severity.ERROR
    tool_rule = True
    why = """
        A kernel module that does not parse cannot be imported, so no kernel in it can be compiled. None of the
        other rules can look at the file until it parses.
    """
    INVALID = [
        Invalid(
            """
            import triton

            @triton.jit
            def kernel(x_ptr
                pass
            """,
            doc=True,
        )
    ]
    VALID = [
        Valid(
            """
            import triton

            @triton.jit
            def kernel(x_ptr):
                pass
            """,
            doc=True,
        )
    ]
