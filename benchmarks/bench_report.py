"""Benchmark of the static report (run by `make bench`): 10,000 series × 20 versions in ≤ 60 s.

Builds a synthetic SQLite database (data generation excluded from the timing):
50 systems (1, 8 or 72 accelerators of one model per submitter, so scaling
groups form) × 40 benchmark/scenario pairs × 5 metrics = 10,000 series, each
measured once at each of 20 versions of one software (seeded drifts, steps and
noise), i.e. 200,000 results. Then times ``publish_report`` end to end on one
core: reading the store, the analysis made for the report (change points,
scaling, every consecutive version pair and newest-vs-first compared), page
contexts, HTML, charts, report.json and CSV. Median of ``RUNS`` runs.

Prints the seconds, the ratio to the 60 s target and the size of the overview
page (target < 1 MB, assets excluded), and writes them to
``benchmarks/results/report.json``.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tracker.publish import publish_report
from tracker.records import (
    ArtifactRecord,
    MetricRecord,
    ResultRecord,
    SoftwareRecord,
    SourceRecord,
    SystemRecord,
)
from tracker.store import Store

SYSTEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
BENCHMARKS = 40
METRICS = 5
VERSIONS = 20
RUNS = 1
TARGET_S = 60.0
TARGET_OVERVIEW_BYTES = 1_000_000
SEED = 1234
RESULTS = Path(__file__).parent / "results" / "report.json"


def _system(index: int) -> SystemRecord:
    count = (1, 8, 72)[index % 3]
    return SystemRecord(
        name=f"bench-system-{index:02d}-x{count}",
        submitter=f"submitter-{index // 3:02d}",
        accelerator="Example Accelerator",
        accelerators_per_node=min(count, 8),
        nodes=max(1, count // 8),
        accelerators_total=count,
        division="closed",
    )


def _records(version_index: int, rng: np.random.Generator) -> list[ResultRecord]:
    version = f"1.{version_index}.0"
    software = SoftwareRecord("bench-stack", version)
    out = []
    for s in range(SYSTEMS):
        system = _system(s)
        for b in range(BENCHMARKS):
            for m in range(METRICS):
                hib = m != METRICS - 1
                metric = MetricRecord(f"metric_{m}", "tokens/s" if hib else "ms", hib)
                base = 1000.0 * (1 + b) * (system.accelerators_total or 1)
                step = 1.1 if version_index >= 10 and (s + b + m) % 7 == 0 else 1.0
                value = base * step * (1 + 0.01 * version_index) * rng.lognormal(0.0, 0.02)
                out.append(
                    ResultRecord(
                        system=system,
                        software=software,
                        benchmark=f"bench-{b // 2:02d}",
                        scenario=("Offline", "Server")[b % 2],
                        metric=metric,
                        value=float(value if hib else 1e6 / value),
                        is_valid=True,
                        artifact_path="results.txt",
                        artifact_sha256=_digest(version),
                        line=len(out) + 1,
                    )
                )
    return out


def _digest(version: str) -> str:
    return hashlib.sha256(f"bench-{version}".encode()).hexdigest()


def _database(path: Path) -> str:
    url = f"sqlite:///{path}"
    rng = np.random.default_rng(SEED)
    with Store.open(url) as store:
        for v in range(VERSIONS):
            digest = _digest(f"1.{v}.0")
            artifact = ArtifactRecord("results.txt", digest, 1)
            source = SourceRecord("bench", f"bench/{v}", digest, digest, artifacts=(artifact,))
            store.save_source(source, _records(v, rng))
    return url


def _run(url: str, out: Path) -> tuple[float, int, int]:
    with Store.open(url) as store:
        start = time.perf_counter()
        index = publish_report(store, out, generated_at="bench")
        seconds = time.perf_counter() - start
    pages = sum(1 for p in out.rglob("*.html"))
    return seconds, index.stat().st_size, pages


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start = time.perf_counter()
        url = _database(work / "bench.db")
        build_s = time.perf_counter() - start
        print(
            f"database: {SYSTEMS * BENCHMARKS * METRICS:,} series × {VERSIONS} versions "
            f"built in {build_s:.1f} s",
            file=sys.stderr,
        )
        runs = [_run(url, work / f"site{i}") for i in range(RUNS)]
        site_bytes = sum(
            p.stat().st_size
            for p in (work / "site0").rglob("*")
            if p.is_file() and "static" not in p.parts
        )
    seconds = statistics.median(r[0] for r in runs)
    figures = {
        "series": SYSTEMS * BENCHMARKS * METRICS,
        "versions": VERSIONS,
        "runs": RUNS,
        "report_s": seconds,
        "report_s_all": [r[0] for r in runs],
        "target_s": TARGET_S,
        "ratio_to_target": seconds / TARGET_S,
        "overview_bytes": runs[0][1],
        "overview_target_bytes": TARGET_OVERVIEW_BYTES,
        "pages": runs[0][2],
        "site_bytes_without_assets": site_bytes,
    }
    print(
        f"report of {figures['series']:,} series × {VERSIONS} versions: {seconds:.1f} s "
        f"(median of {RUNS}; {figures['ratio_to_target']:.2f} × the {TARGET_S:.0f} s target), "
        f"{figures['pages']:,} pages, overview {runs[0][1] / 1e6:.2f} MB "
        f"(target < 1 MB), site {site_bytes / 1e6:.0f} MB without assets"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
