"""Benchmarks, run by hand (see docs/performance.md); not part of the installed package or the tests."""
