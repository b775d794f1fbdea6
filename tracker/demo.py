"""``tracker demo``: seeded example data, ingested through the demo job, reported.

The demo writes into its own folder (default ``demo/``): ``data/`` holds the
example LoadGen runs, ``site/`` the rendered report. Everything it shows is
labelled as example data.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tracker.demo_data import write_demo_data
from tracker.ingest import SourceOutcome, ingest_source, read_job
from tracker.paths import ingest_jobs_dir
from tracker.publish import publish_report
from tracker.readers.base import ProgressCallback
from tracker.store import Store

__all__ = ["DEMO_JOB", "DemoOutcome", "run_demo"]

DEMO_JOB = "demo.toml"


@dataclass(frozen=True, slots=True)
class DemoOutcome:
    """Where the demo wrote its data and report, and what it stored."""

    data_dir: Path
    index_page: Path
    runs_written: int
    sources: tuple[SourceOutcome, ...]


def run_demo(
    store: Store,
    out_dir: Path,
    *,
    generated_at: str,
    seed: int = 1234,
    progress: ProgressCallback | None = None,
) -> DemoOutcome:
    """Write the example data, ingest it with ``ingest/demo.toml`` and render the report."""
    data_dir = out_dir / "data"
    runs = write_demo_data(data_dir, seed=seed)
    _job, specs = read_job(ingest_jobs_dir() / DEMO_JOB, root=data_dir)
    outcomes = []
    for done, spec in enumerate(specs, start=1):
        outcomes.append(ingest_source(store, spec, strict=True))
        if progress is not None:
            progress(done, len(specs), spec.location)
    index = publish_report(store, out_dir / "site", generated_at=generated_at)
    return DemoOutcome(
        data_dir=data_dir, index_page=index, runs_written=len(runs), sources=tuple(outcomes)
    )
