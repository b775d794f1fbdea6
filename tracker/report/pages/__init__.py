"""The report's pages, one module per kind of page: its context dataclasses and builder.

:mod:`~tracker.report.pages.overview` (the index), :mod:`~.compare` (version against
version), :mod:`~.findings` (scaling and findings), :mod:`~.platforms` (a round's
platforms per accelerator), :mod:`~.series` (each benchmark and each system),
:mod:`~.serving` (throughput against interactivity) and :mod:`~.training` (MLPerf Training).
"""
