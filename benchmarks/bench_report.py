"""Benchmark of the static report (run by `make bench`): 10,000 series × 20 versions in ≤ 60 s.

Builds a synthetic SQLite database (data generation excluded from the timing):
50 systems (1, 8 or 72 accelerators of one model per submitter, so scaling
groups form) × 40 benchmark/scenario pairs × 5 metrics = 10,000 series, each
measured once at each of 20 versions of one software (seeded drifts, steps and
noise), i.e. 200,000 results. Then runs ``publish_report`` end to end, ``RUNS``
times, each in a fresh process (so its peak memory is its own): reading the
store, the analysis made for the report (change points, scaling, every
consecutive version pair and newest-vs-first compared), page contexts, HTML,
charts, report.json and CSV.

Prints the medians of the CPU time (``time.process_time``: one core, what the
60 s target is about; the wall time is printed too, it varies with the
machine's load), the peak RSS of the report process (``ru_maxrss``), the size
of the overview page (target < 1 MB) and of the whole site by part (assets
excluded), and writes them to ``benchmarks/results/report.json``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from tracker.records.results import (
    ArtifactRecord,
    MetricRecord,
    ResultRecord,
    SoftwareRecord,
    SourceRecord,
    SystemRecord,
)
from tracker.report.publish import publish_report
from tracker.store.facade import Store

SYSTEMS = int(sys.argv[1]) if len(sys.argv) > 1 else 50
BENCHMARKS = 40
METRICS = 5
VERSIONS = 20
RUNS = 2
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


def _run(url: str, out: Path) -> dict[str, float]:
    """One report, in this process: its CPU and wall seconds and peak RSS."""
    with Store.open(url) as store:
        cpu, wall = time.process_time(), time.perf_counter()
        publish_report(store, out, generated_at="bench")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"cpu_s": cpu, "wall_s": wall, "peak_rss_mb": rss_kib * 1024 / 1e6}


def _in_fresh_process(url: str, out: Path) -> dict[str, float]:
    """:func:`_run` in a new interpreter (spawned), so the RSS is the report's alone."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_run, (url, out))


_PARTS = {
    "report.json": lambda rel: rel == "report.json",
    "results.csv": lambda rel: rel == "results.csv",
    "comparisons.csv": lambda rel: rel == "comparisons.csv",
    "findings.csv": lambda rel: rel == "findings.csv",
    "comparison pages": lambda rel: rel.startswith("compare/"),
    "findings pages": lambda rel: rel.startswith("findings") and rel.endswith(".html"),
    "benchmark pages": lambda rel: rel.startswith("benchmark/"),
    "system pages": lambda rel: rel.startswith("system/"),
    "scaling page": lambda rel: rel == "scaling.html",
}


def _sizes(site: Path) -> dict[str, int]:
    """Bytes of each part of the site (assets in static/ left out)."""
    sizes = dict.fromkeys([*_PARTS, "other"], 0)
    for path in site.rglob("*"):
        rel = path.relative_to(site).as_posix()
        if not path.is_file() or rel.startswith("static/"):
            continue
        part = next((name for name, test in _PARTS.items() if test(rel)), "other")
        sizes[part] += path.stat().st_size
    return sizes


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
        runs = [_in_fresh_process(url, work / f"site{i}") for i in range(RUNS)]
        site = work / "site0"
        sizes = _sizes(site)
        overview = (site / "index.html").stat().st_size
        pages = sum(1 for _ in site.rglob("*.html"))

    def median(name: str) -> float:
        return statistics.median(r[name] for r in runs)

    cpu, wall, rss = median("cpu_s"), median("wall_s"), median("peak_rss_mb")
    site_bytes = sum(sizes.values())
    figures: dict[str, Any] = {
        "series": SYSTEMS * BENCHMARKS * METRICS,
        "versions": VERSIONS,
        "runs": RUNS,
        "report_cpu_s": cpu,
        "report_wall_s": wall,
        "report_s": cpu,
        "runs_all": runs,
        "target_s": TARGET_S,
        "ratio_to_target": cpu / TARGET_S,
        "peak_rss_mb": rss,
        "overview_bytes": overview,
        "overview_target_bytes": TARGET_OVERVIEW_BYTES,
        "pages": pages,
        "site_bytes_without_assets": site_bytes,
        "site_bytes_by_part": sizes,
    }
    parts = ", ".join(f"{name} {size / 1e6:.1f}" for name, size in sizes.items())
    print(
        f"report of {figures['series']:,} series × {VERSIONS} versions (median of {RUNS} runs): "
        f"{cpu:.1f} s CPU ({cpu / TARGET_S:.2f} × the {TARGET_S:.0f} s target), "
        f"{wall:.1f} s wall, peak RSS {rss:.0f} MB; {pages:,} pages, overview "
        f"{overview / 1e6:.2f} MB (target < 1 MB), site {site_bytes / 1e6:.0f} MB without "
        f"assets (MB: {parts})"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
