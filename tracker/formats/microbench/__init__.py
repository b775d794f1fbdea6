"""Microbenchmarks: the generic format (and Bencher's BMF), Google Benchmark, pytest-benchmark.

Parsers: :mod:`~tracker.formats.microbench.parse` (the generic format, units and
directions), :mod:`~.parse_google` and :mod:`~.parse_pytest`; :mod:`~.read` is the
reader of all three kinds.
"""
