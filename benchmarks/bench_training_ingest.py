"""Benchmark: ingest of published MLPerf Training rounds (run by `make bench`).

Builds, in a temporary folder, the two rounds of ``../shared/data/mlperf-training``
(or ``$TRACKER_SHARED_DATA``) replicated ``--copies`` times under new system
names (hard links, so the trees cost no disk space), then measures, in one
process, as medians of ``--runs`` repetitions (wall and CPU time):

* the ingest of both rounds into a fresh SQLite database: result files per
  second and MB/s of log parsed (result logs and power logs), everything
  included (walk, hashing, compliance checks, scoring, store);
* a minimal read of the same files in the same run: each file read line by
  line and every ``:::MLLOG`` payload decoded with ``json.loads``, the least
  any reader of these logs must do. Target: the ingest within 2x of it.

Prints the figures and writes them to ``benchmarks/results/training_ingest.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.store.facade import Store

ROUNDS = ("v5.0", "v5.1")
TARGET_RATIO = 2.0
RESULTS = Path(__file__).parent / "results" / "training_ingest.json"
_TOKEN = b":::MLLOG"


def _fixtures() -> Path:
    shared = Path(os.environ.get("TRACKER_SHARED_DATA", Path(__file__).parents[2] / "shared/data"))
    source = shared / "mlperf-training"
    if not source.is_dir():
        sys.exit(f"{source} is missing (set TRACKER_SHARED_DATA)")
    return source


def _replicate(base: Path, out: Path, copies: int) -> None:
    """``copies`` renamed copies of every system of round ``base`` (hard links) under ``out``."""
    for root, _dirs, files in os.walk(base):
        parts = Path(root).relative_to(base).parts
        for copy in range(copies):
            renamed = list(parts)
            if len(parts) >= 3 and parts[1] == "results":
                renamed[2] = f"{parts[2]}_r{copy}"
            folder = out.joinpath(*renamed)
            folder.mkdir(parents=True, exist_ok=True)
            for name in files:
                target = name
                if len(parts) == 2 and parts[1] == "systems":
                    target = f"{Path(name).stem}_r{copy}.json"
                if not (folder / target).exists():
                    os.link(Path(root) / name, folder / target)


def _logs(trees: list[Path]) -> list[Path]:
    return sorted(p for tree in trees for p in tree.rglob("*.txt"))


def _minimal_read(paths: list[Path]) -> int:
    """Read every file line by line and decode every ``:::MLLOG`` payload; lines decoded."""
    decoded = 0
    for path in paths:
        with path.open("rb") as stream:
            for line in stream:
                at = line.find(_TOKEN)
                if at >= 0:
                    json.loads(line[at + len(_TOKEN) :])
                    decoded += 1
    return decoded


def _timed(action: object) -> tuple[float, float]:
    assert callable(action)
    cpu, wall = time.process_time(), time.perf_counter()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def _one_run(trees: list[Path], work: Path, paths: list[Path]) -> dict[str, float]:
    db = work / "bench.db"
    db.unlink(missing_ok=True)
    with Store.open(f"sqlite:///{db}") as store:

        def ingest() -> None:
            for tree in trees:
                outcome = ingest_source(store, SourceSpec(location=str(tree)), strict=True)
                assert outcome.kind == "mlperf-training" and not outcome.errors

        ingest_wall, ingest_cpu = _timed(ingest)
    read_wall, read_cpu = _timed(lambda: _minimal_read(paths))
    return {
        "ingest_wall_s": ingest_wall,
        "ingest_cpu_s": ingest_cpu,
        "read_wall_s": read_wall,
        "read_cpu_s": read_cpu,
    }


def main() -> None:
    """Run the benchmark (``--runs N`` times, medians reported)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8, help="replicas of every system")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (medians reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(_fixtures(), work / "base")  # hard links need one file system
        trees = [work / "trees" / name for name in ROUNDS]
        for name, tree in zip(ROUNDS, trees, strict=True):
            _replicate(work / "base" / name, tree, max(1, args.copies))
        paths = _logs(trees)
        results = sum(1 for p in paths if p.name.startswith("result_"))
        megabytes = sum(p.stat().st_size for p in paths) / 1e6
        runs = [_one_run(trees, work, paths) for _ in range(max(1, args.runs))]
    figures: dict[str, object] = {"runs": len(runs), "copies": args.copies}
    figures.update(result_files=results, log_files=len(paths), log_mb=round(megabytes, 3))
    for clock in ("wall", "cpu"):
        ingest = statistics.median(r[f"ingest_{clock}_s"] for r in runs)
        read = statistics.median(r[f"read_{clock}_s"] for r in runs)
        figures[f"ingest_{clock}_s"] = ingest
        figures[f"result_files_per_{clock}_s"] = results / ingest
        figures[f"log_mb_per_{clock}_s"] = megabytes / ingest
        figures[f"minimal_read_{clock}_s"] = read
        figures[f"minimal_read_mb_per_{clock}_s"] = megabytes / read
        figures[f"ingest_over_minimal_read_{clock}"] = ingest / read
    figures["target_ratio"] = TARGET_RATIO
    figures["per_run"] = [{k: round(v, 4) for k, v in run.items()} for run in runs]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for key, value in figures.items():
        if key != "per_run":
            print(f"{key:>34}: {value:.4g}" if isinstance(value, float) else f"{key:>34}: {value}")
    ratio = figures["ingest_over_minimal_read_cpu"]
    assert isinstance(ratio, float)
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"CPU: ingest is {ratio:.2f}x the minimal read ({verdict} the {TARGET_RATIO:g}x target)")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
