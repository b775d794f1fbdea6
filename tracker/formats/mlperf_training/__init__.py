"""Published MLPerf Training rounds, scored as MLCommons' ``mlperf-logging`` scores them.

Parsers: :mod:`~tracker.formats.mlperf_training.parse` (the result summarizer's score)
and :mod:`~.parse_checks` (the ``:::MLLOG`` lines, the compliance and seed checks).
Readers: :mod:`~.read_tree` (where the files are, and the optional cross-check against
``mlperf-logging``) and :mod:`~.read` (``--kind mlperf-training``).
"""
