"""The names the command line offers before anything heavy is imported.

``tracker --help`` and every command's options need the kinds of source and
what can be pulled, but not the readers, the store or the network client
behind them: the kinds come from the leaf :mod:`tracker.kinds` (the readers'
own list), and ``PULLABLE`` stands alone (``tests/test_startup.py`` checks that
it matches :data:`tracker.ingest.run.ROUND_REPOSITORIES`).

Every kind of source, importable before anything heavy (a leaf: no other part of tracker).

The readers (:mod:`tracker.formats`) detect them in this order, and the command line
(:mod:`tracker.kinds`) offers them in ``--kind`` without importing a reader.
"""

from __future__ import annotations

__all__ = ["KINDS", "PULLABLE"]


KINDS: tuple[str, ...] = (
    # a published MLPerf round first: its tree also holds LoadGen logs and JSON files
    "mlperf-inference",
    "mlperf-table",
    "mlperf-training",
    # recognised by file names first, then by content (InferenceX before vLLM:
    # an InferenceX folder may hold the raw vLLM files its rows were made from)
    "aiperf",
    "genai-perf",
    "mlperf-endpoints",
    "inferencex",
    "vllm-bench",
    "loadgen",
    # microbenchmark files, by content; BMF's shape is the loosest: last
    "google-benchmark",
    "pytest-benchmark",
    "bench-json",
)
"""Every kind of source, in the order :func:`tracker.formats.detect_kind` tries them."""


PULLABLE: tuple[str, ...] = ("mlperf-inference", "mlperf-training")
"""What ``tracker pull`` knows how to find."""
