from ascendlint.diagnostics import Severity
from ascendlint.rule import Rule


class InternalErrorRule(Rule):
    """Reports a rule that crashed on a file, naming the rule; the other rules' findings for the file still count."""

    code = "ASC002"
    name = "internal-error"
    message = "Rule crashed on this file"
    severity = Severity.ERROR
    tool_rule = True
    why = """
        A crash inside one rule must never hide the findings of the others, nor pass silently as "clean". The
        finding names the rule and the exception so it can be reported and, meanwhile, ignored for that file.
    """
