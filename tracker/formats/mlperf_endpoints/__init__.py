"""MLPerf Endpoints: serving points of the Endpoints benchmark, on their own or in a round.

Parsers: :mod:`~tracker.formats.mlperf_endpoints.parse` (points → serving points) and
:mod:`~.parse_result` (a published result folder, read as the checker reads it).
Readers: :mod:`~.read` (``--kind mlperf-endpoints``: trees, run folders, bundles, and a
result folder named on its own) and :mod:`~.read_round` (a result folder inside a round).
"""
