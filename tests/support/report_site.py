"""Builds a report site from the real fixtures plus a seeded local history (for report tests).

MLPerf Inference v4.1, v5.1 and v6.0, the AIPerf sweep under two versions, the
demo's seeded data (LoadGen runs over three versions with repeats, AIPerf
sweeps, MLPerf-layout rounds; through ``jobs/demo.toml``) and one real LoadGen
run under a hostile system name; then ``tracker analyze`` (findings stored) and
``tracker report``.
"""

from __future__ import annotations

from pathlib import Path

from tracker.analyze.run import run_analysis
from tracker.demo import DEMO_JOB, write_demo_data, write_mlperf_rounds, write_serving_data
from tracker.ingest.run import ingest_source, read_job
from tracker.paths import jobs_dir
from tracker.records.results import Labels, SourceSpec
from tracker.report.publish import publish_report
from tracker.store.facade import Store

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"
GENERATED_AT = "2026-01-02T03:04:05Z"


def _sources(shared_data: Path) -> list[SourceSpec]:
    rounds = shared_data / "mlperf-inference"
    specs = [SourceSpec(str(rounds / r)) for r in ("v4.1", "v5.1", "v6.0")]
    for version in ("0.9.0", "0.10.0"):
        labels = Labels(
            software="vllm",
            software_version=version,
            system="fake-node",
            accelerators=1,
            benchmark="chat",
        )
        specs.append(SourceSpec(str(shared_data / "aiperf"), kind="aiperf", labels=labels))
    hostile = Labels(
        software="local-stack", software_version="1.0", system=HOSTILE, benchmark=HOSTILE
    )
    specs.append(SourceSpec(str(shared_data / "loadgen-local" / "Offline"), "loadgen", hostile))
    return specs


def build_report_site(shared_data: Path, work: Path) -> Path:
    """Ingest, analyse and render into ``work / "site"``; return the site folder."""
    with Store.open(f"sqlite:///{work / 'report.db'}") as store:
        for spec in _sources(shared_data):
            ingest_source(store, spec)
        write_demo_data(work / "demo-data")
        write_serving_data(work / "demo-data", seed=1234)
        write_mlperf_rounds(work / "demo-data")
        _job, specs = read_job(jobs_dir() / DEMO_JOB, root=work / "demo-data")
        for spec in specs:
            ingest_source(store, spec, strict=True)
        run_analysis(store)
        publish_report(store, work / "site", generated_at=GENERATED_AT)
    return work / "site"
