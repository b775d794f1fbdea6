"""The names the command line offers before anything heavy is imported.

``tracker --help`` and every command's options need the kinds of source and
what can be pulled, but not the readers, the store or the network client
behind them: the kinds come from the leaf :mod:`tracker.kinds` (the readers'
own list), and ``PULLABLE`` stands alone (``tests/test_startup.py`` checks that
it matches :data:`tracker.ingest.pull.ROUND_REPOSITORIES`).
"""

from __future__ import annotations

from tracker.kinds import KINDS

__all__ = ["KINDS", "PULLABLE"]

PULLABLE: tuple[str, ...] = ("mlperf-inference", "mlperf-training")
"""What ``tracker pull`` knows how to find."""
