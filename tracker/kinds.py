"""Every kind of source, importable before anything heavy (a leaf: no other part of tracker).

The readers (:mod:`tracker.readers`) detect them in this order, and the command line
(:mod:`tracker.ingest.kinds`) offers them in ``--kind`` without importing a reader.
"""

from __future__ import annotations

__all__ = ["KINDS"]

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
"""Every kind of source, in the order :func:`tracker.readers.detect_kind` tries them."""
