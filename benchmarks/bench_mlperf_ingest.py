"""Benchmark: ingest of a published MLPerf Inference round (run by `make bench`).

Builds, in a temporary folder, a round tree of at least 20,000 result folders
by replicating the real v5.1 fixtures (``../shared/data/mlperf-inference/v5.1``,
or ``$TRACKER_SHARED_DATA``) under new system names (hard links, so the tree
costs no disk space), then measures, in one process on one core:

* the first ingest into a fresh SQLite database (result folders per second;
  anchor: ≥ 2,000/s);
* an unchanged re-ingest with the snapshot cache (anchor: ≤ 5 % of the first);
* an unchanged re-ingest without it (every file read and hashed again, nothing
  parsed or stored), for comparison.

Prints the figures and writes them to ``benchmarks/results/mlperf_ingest.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tracker.ingest import ingest_source
from tracker.records import SourceSpec
from tracker.store import Store

MIN_FOLDERS = 20_000
ANCHOR_FOLDERS_PER_S = 2_000
ANCHOR_REINGEST_RATIO = 0.05
RESULTS = Path(__file__).parent / "results" / "mlperf_ingest.json"
_PLATFORM_LEVEL = {"results": 3, "measurements": 3, "compliance": 3}


def _fixtures() -> Path:
    shared = Path(os.environ.get("TRACKER_SHARED_DATA", Path(__file__).parents[2] / "shared/data"))
    source = shared / "mlperf-inference" / "v5.1"
    if not source.is_dir():
        sys.exit(f"{source} is missing (set TRACKER_SHARED_DATA)")
    return source


def _result_folders(base: Path) -> int:
    return sum(1 for _ in base.glob("*/*/results/*/*/*/performance/run_1"))


def _replicate(base: Path, out: Path, copies: int) -> None:
    """``copies`` renamed copies of every system of ``base`` (hard links) under ``out``."""
    for copy in range(copies):
        for root, _dirs, files in os.walk(base):
            parts = Path(root).relative_to(base).parts
            if len(parts) < 3:
                continue  # the table and the submitters' own files are not replicated
            renamed = list(parts)
            if parts[2] in _PLATFORM_LEVEL and len(parts) > 3:
                renamed[3] = f"{parts[3]}_r{copy}"
            folder = out.joinpath(*renamed)
            folder.mkdir(parents=True, exist_ok=True)
            for name in files:
                target = name
                if parts[2] == "systems" and len(parts) == 3:
                    target = f"{Path(name).stem}_r{copy}.json"
                os.link(Path(root) / name, folder / target)


def _timed_ingest(store: Store, spec: SourceSpec, cache: Path | None) -> tuple[float, int, int]:
    start = time.perf_counter()
    outcome = ingest_source(store, spec, strict=True, cache_dir=cache)
    elapsed = time.perf_counter() - start
    saved = outcome.saved
    stored = saved.results_stored if saved else 0
    return elapsed, outcome.runs_found, stored


def _build(work: Path) -> tuple[Path, float]:
    """The replicated round tree under ``work`` (kept and reused if it is there)."""
    tree = work / "v5.1"
    if tree.is_dir():
        return tree, 0.0
    base = work / "base"
    shutil.copytree(_fixtures(), base)
    copies = -(-MIN_FOLDERS // _result_folders(base))
    build_start = time.perf_counter()
    _replicate(base, tree, copies)
    return tree, time.perf_counter() - build_start


def main() -> None:
    """Run the benchmark; ``--tree DIR`` keeps the generated tree in DIR for later runs."""
    keep = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--tree" else None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree, build_s = _build(keep or work)
        spec = SourceSpec(location=str(tree), kind="auto")
        cache = work / "cache"
        with Store.open(f"sqlite:///{work / 'bench.db'}") as store:
            first_s, folders, stored = _timed_ingest(store, spec, cache)
            again_s, _, again_stored = _timed_ingest(store, spec, cache)
            rehash_s, _, _ = _timed_ingest(store, spec, None)
    figures = {
        "result_folders": folders,
        "results_stored": stored,
        "tree_build_s": build_s,
        "first_ingest_s": first_s,
        "folders_per_s": folders / first_s,
        "anchor_folders_per_s": ANCHOR_FOLDERS_PER_S,
        "reingest_s": again_s,
        "reingest_results_stored": again_stored,
        "reingest_ratio": again_s / first_s,
        "anchor_reingest_ratio": ANCHOR_REINGEST_RATIO,
        "reingest_without_snapshot_s": rehash_s,
        "reingest_without_snapshot_ratio": rehash_s / first_s,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for key, value in figures.items():
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        print(f"{key:>34}: {shown}")
    print(f"folders/s vs anchor: {figures['folders_per_s'] / ANCHOR_FOLDERS_PER_S:.2f}x")
    print(f"re-ingest ratio vs anchor: {figures['reingest_ratio'] / ANCHOR_REINGEST_RATIO:.2f}x")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
