"""Every kind of source, and what ``tracker pull`` can pull: names importable before anything heavy.

The readers (:mod:`tracker.formats`) detect the kinds in the order of :data:`KINDS`, and the
command line offers them in ``--kind`` without importing a reader: ``tracker --help`` and
every command's options need these names, not the readers, the store or the network client
behind them. A leaf: it imports no other part of the tracker. :data:`PULLABLE` stands
alone (``tests/cli/test_startup.py`` checks that it matches
:data:`tracker.ingest.run.ROUND_REPOSITORIES`).
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
