"""The rule catalogue: the rules installed (entry points), their index, suites and documentation pages.
"""
