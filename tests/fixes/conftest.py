"""Shows what the fix-verification harness cost in this run (compiles and interpreter runs, cached or not)."""

from tests.fixes import harness


def pytest_terminal_summary(terminalreporter):
    if harness.LAST_RUN:
        parts = ", ".join(f"{key}: {value}" for key, value in harness.LAST_RUN.items())
        terminalreporter.write_line(f"fix harness: {parts}")
