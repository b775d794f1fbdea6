"""Published MLPerf Inference rounds, read as the MLCommons submission checker reads them.

Parsers: :mod:`~tracker.formats.mlperf_inference.parse` (the primary metric per run,
canonical names, the scenarios each round accepts), :mod:`~.parse_logs` (a run's
LoadGen logs and its secondary files: accuracy, audits, power) and :mod:`~.parse_table`
(the round's results table and the systems' description JSON).

Readers: :mod:`~tracker.formats.mlperf_inference.read_tree` (where the files of a round
are, and one pass over them), :mod:`~.read` (``--kind mlperf-inference`` and
``--kind mlperf-table``) and :mod:`~.read_parallel` (a large round on all cores).
"""
