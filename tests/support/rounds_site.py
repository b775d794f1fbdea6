"""A site of the shared MLPerf Inference rounds with the v6.0 and v6.1 results tables.

v5.1, v6.0 and v6.1 (result folders), the whole v6.0 results table
(``tables/v6.0``) and v6.1's (``v6.1/summary.json``): about a hundred systems per
round, ingested, analysed (findings stored) and rendered through the command line,
as a user would. The round page tests, the layout test and ``make screenshots``
look at this site.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.conftest import RunTracker

ROUNDS = ("tables/v6.0", "v5.1", "v6.0", "v6.1", "v6.1/summary.json")
"""The shared folders and tables ingested, under ``mlperf-inference/``."""


@dataclass(frozen=True, slots=True)
class RoundsSite:
    url: str
    """The database."""
    site: Path
    """The report's folder."""
    analyze_output: str
    """What ``tracker analyze`` printed."""


def tracker(url: str, *args: str) -> str:
    """``tracker --database-url URL ARGS`` in this process; its stdout (exit 0 asserted)."""
    result = RunTracker()(["--database-url", url, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def build_rounds_site(shared_data: Path, work: Path) -> RoundsSite:
    """Ingest, analyse and render the shared rounds into ``work``."""
    url = f"sqlite:///{work / 'tracker.db'}"
    rounds = shared_data / "mlperf-inference"
    tracker(url, "ingest", *(str(rounds / r) for r in ROUNDS))
    analysed = tracker(url, "analyze")
    tracker(url, "report", "--out", str(work / "site"))
    return RoundsSite(url, work / "site", analysed)
