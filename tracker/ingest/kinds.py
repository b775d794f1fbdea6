"""The names the command line offers before anything heavy is imported.

``tracker --help`` and every command's options need the kinds of source and
what can be pulled, but not the readers, the store or the network client
behind them: these constants stand alone (``tests/test_startup.py``
checks that they match :data:`tracker.readers.KINDS` and
:data:`tracker.ingest.pull.ROUND_REPOSITORIES`).
"""

from __future__ import annotations

__all__ = ["KINDS", "PULLABLE"]

KINDS: tuple[str, ...] = (
    "mlperf-inference",
    "mlperf-table",
    "mlperf-training",
    "aiperf",
    "genai-perf",
    "mlperf-endpoints",
    "inferencex",
    "vllm-bench",
    "loadgen",
    "google-benchmark",
    "pytest-benchmark",
    "bench-json",
)
"""Every kind of source, in the order auto-detection tries them."""

PULLABLE: tuple[str, ...] = ("mlperf-inference", "mlperf-training")
"""What ``tracker pull`` knows how to find."""
