"""MLPerf LoadGen output: ``mlperf_log_detail.txt`` and ``mlperf_log_summary.txt``.

:mod:`~tracker.formats.loadgen.parse` reads the logs (bytes → records);
:mod:`~tracker.formats.loadgen.read` finds the run folders of a local LoadGen run.
"""
