"""The linter: each discovered file with its settings in, diagnostics out; serially or on a process pool,
through the result cache, in an order that summarises imported modules first.
"""
