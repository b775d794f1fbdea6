"""Benchmarks of the walking skeleton (run by `make bench`).

Measures, on synthetic example data in the LoadGen format, as medians of
several repetitions: ingest throughput (LoadGen run folders per second, one
process), the cost of re-ingesting unchanged sources relative to the first
ingest, and report rendering time. Prints the figures and writes them to
benchmarks/results/skeleton.json.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from tracker.demo import write_demo_data
from tracker.ingest.run import ingest_source
from tracker.records.results import Labels, SourceSpec
from tracker.report.publish import publish_report
from tracker.store.facade import Store

SOURCES = 20
REPETITIONS = 3
RESULTS = Path(__file__).parent / "results" / "skeleton.json"


def _specs(root: Path) -> tuple[list[SourceSpec], int]:
    runs = 0
    specs = []
    for n in range(SOURCES):
        runs += len(write_demo_data(root / f"s{n}", seed=n))
        labels = Labels(software_version=f"1.{n}", system="bench-node", benchmark="resnet50")
        specs.append(SourceSpec(location=str(root / f"s{n}"), kind="loadgen", labels=labels))
    return specs, runs


def _ingest_all(store: Store, specs: list[SourceSpec]) -> float:
    start = time.perf_counter()
    for spec in specs:
        ingest_source(store, spec, strict=True)
    return time.perf_counter() - start


def _one_repetition(work: Path, specs: list[SourceSpec]) -> dict[str, float]:
    db = work / "bench.db"
    db.unlink(missing_ok=True)
    with Store.open(f"sqlite:///{db}") as store:
        first = _ingest_all(store, specs)
        again = _ingest_all(store, specs)
        start = time.perf_counter()
        publish_report(store, work / "site", generated_at="bench")
        report = time.perf_counter() - start
    return {"first_ingest_s": first, "reingest_s": again, "report_s": report}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        specs, runs = _specs(work / "data")
        samples = [_one_repetition(work, specs) for _ in range(REPETITIONS)]
    median = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    figures = {
        "runs": runs,
        "sources": SOURCES,
        "repetitions": REPETITIONS,
        "ingest_runs_per_s": runs / median["first_ingest_s"],
        "reingest_ratio": median["reingest_s"] / median["first_ingest_s"],
        "report_s": median["report_s"],
        **{f"median_{key}": value for key, value in median.items()},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for key, value in figures.items():
        print(f"{key:>24}: {value:.4g}" if isinstance(value, float) else f"{key:>24}: {value}")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
