"""``tracker demo``: seeded example data, ingested through the demo job, reported.

The demo writes into its own folder (default ``demo/``): ``data/`` holds the
example data in the real formats (LoadGen runs, AIPerf concurrency sweeps and
MLPerf-layout rounds, see :mod:`tracker.demo.data` and :mod:`tracker.demo.serving`),
``site/`` the rendered report. It ingests through ``ingest/demo.toml``, analyses
(storing the findings), renders the report and runs the gate on the newest
version of the example serving stack against the one before, which has a
planted 8% regression (gate verdict 1). Everything it shows is labelled as
example data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from tracker.analyze.run import AnalysisOutcome, run_analysis
from tracker.demo.data import write_demo_data
from tracker.demo.serving import SERVING_VERSIONS, write_mlperf_rounds, write_serving_data
from tracker.gate.decision import GateResult, run_gate
from tracker.ingest.run import SourceOutcome, ingest_source, read_job
from tracker.paths import ingest_jobs_dir
from tracker.gate.policy import GatePolicy
from tracker.report.publish import publish_report
from tracker.readers.base import ProgressCallback
from tracker.store.facade import Store

__all__ = ["DEMO_JOB", "DemoOutcome", "run_demo"]

DEMO_JOB = "demo.toml"
DEMO_CANDIDATE = SERVING_VERSIONS[-1]
"""The version the demo gates (against the one before it)."""


@dataclass(frozen=True, slots=True)
class DemoOutcome:
    """Where the demo wrote its data and report, and what it stored."""

    data_dir: Path
    index_page: Path
    runs_written: int
    sources: tuple[SourceOutcome, ...]
    analysis: AnalysisOutcome
    gate: GateResult


def run_demo(
    store: Store,
    out_dir: Path,
    *,
    generated_at: str,
    today: date,
    seed: int = 1234,
    progress: ProgressCallback | None = None,
) -> DemoOutcome:
    """Write the example data, ingest it with ``ingest/demo.toml``, analyse, report, gate."""
    data_dir = out_dir / "data"
    runs = write_demo_data(data_dir, seed=seed)
    runs += write_serving_data(data_dir, seed=seed)
    runs += write_mlperf_rounds(data_dir)
    _job, specs = read_job(ingest_jobs_dir() / DEMO_JOB, root=data_dir)
    outcomes = []
    for done, spec in enumerate(specs, start=1):
        outcomes.append(ingest_source(store, spec, strict=True))
        if progress is not None:
            progress(done, len(specs), spec.location)
    analysis = run_analysis(store)
    index = publish_report(store, out_dir / "site", generated_at=generated_at)
    gate = run_gate(store, GatePolicy(), candidate=DEMO_CANDIDATE, today=today)
    return DemoOutcome(
        data_dir=data_dir,
        index_page=index,
        runs_written=len(runs),
        sources=tuple(outcomes),
        analysis=analysis,
        gate=gate,
    )
