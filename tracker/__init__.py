"""The tracker: MLPerf-style results aggregation and regression tracking."""

from tracker.errors import ConfigError, FetchError, ParseError, StoreError, TrackerError

__all__ = [
    "ConfigError",
    "FetchError",
    "ParseError",
    "StoreError",
    "TrackerError",
    "__version__",
]

__version__ = "0.1.0"
