"""Benchmark: ingest of a real-round-shaped ``.tar.gz`` archive against the decompression floor.

Builds, in a temporary folder, an archive shaped like a published round as
GitHub serves it (the v6.0 round: 178 MB, 24,432 members, ~1,500 performance
logs): the v5.1 fixtures (``../shared/data/mlperf-inference/v5.1``, or
``$TRACKER_SHARED_DATA``) replicated under new system names until there are
about ``1,500 × --scale`` performance logs, plus, in the same proportions as
the real round, the members a round carries that no reader needs: source
trees (``code/``), ``mlperf_log_accuracy.json`` files, trace files and
images (about 16 members and 120 KB of compressed archive per performance
log). Then, in one process, ``--runs`` times (medians reported), CPU seconds
(user + sys, this process and its children) and wall seconds of:

* the floor: a minimal :mod:`tarfile` stream over the archive that reads
  every ``performance/run_1/mlperf_log_*`` member and skips the rest;
* the first ``ingest_source`` of the archive into a fresh SQLite database;
* an unchanged re-ingest with the snapshot cache.

Prints the ratio of ingest to floor (target ≤ 1.5× CPU) and of the unchanged
re-ingest to the first (target ≤ 2 %), and writes every figure to
``benchmarks/results/archive_ingest.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.store.facade import Store

RESULTS = Path(__file__).parent / "results" / "archive_ingest.json"
TARGET_RATIO = 1.5
TARGET_REINGEST = 0.02
PERFORMANCE_LOGS = 1_500
"""Performance logs in the real v6.0 round (at ``--scale 1``)."""
TOP = "inference_results_v6.0-0123456789abcdef0123456789abcdef01234567"
_PLATFORM_LEVEL = {"results", "measurements", "compliance"}
_FLOOR_MARK = "/performance/run_1/mlperf_log_"


def _fixtures() -> Path:
    shared = Path(os.environ.get("TRACKER_SHARED_DATA", Path(__file__).parents[2] / "shared/data"))
    source = shared / "mlperf-inference" / "v5.1"
    if not source.is_dir():
        sys.exit(f"{source} is missing (set TRACKER_SHARED_DATA)")
    return source


def _round_members(base: Path, copies: int) -> Iterator[tuple[str, Path]]:
    """(name in the archive, fixture file) for ``copies`` renamed copies of every system."""
    for root, _dirs, files in os.walk(base):
        parts = Path(root).relative_to(base).parts
        for name in files:
            if len(parts) < 3:
                yield "/".join((*parts, name)), Path(root) / name
                continue
            for copy in range(copies):
                renamed = list(parts)
                if parts[2] in _PLATFORM_LEVEL and len(parts) > 3:
                    renamed[3] = f"{parts[3]}_r{copy}"
                target = name
                if parts[2] == "systems" and len(parts) == 3:
                    target = f"{Path(name).stem}_r{copy}.json"
                yield "/".join((*renamed, target)), Path(root) / name


def _filler(names: list[str], rng: random.Random) -> Iterator[tuple[str, bytes]]:
    """Members no reader needs, per performance log: 7 source files, an accuracy log,
    a trace, and an image every fourth (about 9 members, ~100 KB compressed)."""
    words = [f"{rng.getrandbits(40):x}" for _ in range(4000)]
    logs = [
        n
        for n in names
        if n.endswith("performance/run_1/mlperf_log_summary.txt") and "/TEST" not in n
    ]
    for number, log in enumerate(logs):
        result = log.removesuffix("/performance/run_1/mlperf_log_summary.txt")
        submitter = "/".join(result.split("/")[:2])
        for file in range(7):
            text = " ".join(rng.choices(words, k=500))
            yield f"{submitter}/code/pkg{number}/module_{file}.py", text.encode()
        lines = [
            json.dumps({"seq_id": i, "qsl_idx": i, "data": f"{rng.getrandbits(512):0128X}"})
            for i in range(400)
        ]
        yield f"{result}/accuracy/mlperf_log_accuracy.json", ("[\n" + ",\n".join(lines)).encode()
        trace = [{"name": "QuerySamplesComplete", "ts": i * 17, "dur": 3} for i in range(600)]
        yield f"{result}/performance/run_1/mlperf_log_trace.json", json.dumps(trace).encode()
        if number % 4 == 0:
            yield f"{submitter}/images/figure_{number}.png", rng.randbytes(120_000)


def build(path: Path, scale: float) -> dict[str, int]:
    """Write the round-shaped archive at ``path``; its member count and size."""
    base = _fixtures()
    logs_per_copy = sum(1 for _ in base.glob("*/*/results/*/*/*/performance/run_1"))
    copies = max(1, round(PERFORMANCE_LOGS * scale / logs_per_copy))
    files = dict(_round_members(base, copies))
    rng = random.Random(6)
    members: dict[str, bytes | Path] = dict(files)
    members.update(_filler(sorted(files), rng))
    with tarfile.open(path, "w:gz", compresslevel=6) as tar:
        for name in sorted(members):  # git's order: each folder's entries sorted
            content = members[name]
            data = content.read_bytes() if isinstance(content, Path) else content
            info = tarfile.TarInfo(f"{TOP}/{name}")
            info.size, info.mtime, info.mode = len(data), 1_700_000_000, 0o644
            tar.addfile(info, io.BytesIO(data))
    performance = sum(1 for n in members if _FLOOR_MARK in f"/{n}")
    return {"members": len(members), "bytes": path.stat().st_size, "floor_members": performance}


def floor(path: Path) -> int:
    """The minimal stream-and-read: one pass, ``performance/run_1/mlperf_log_*`` read."""
    read = 0
    with tarfile.open(path, "r|gz") as tar:
        for info in tar:
            if info.isfile() and _FLOOR_MARK in info.name:
                stream = tar.extractfile(info)
                assert stream is not None
                read += len(stream.read())
    return read


def _cpu() -> float:
    """User + sys CPU seconds of this process (all threads) and its finished children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed(action: Callable[[], object]) -> tuple[float, float, object]:
    cpu, wall = _cpu(), time.perf_counter()
    value = action()
    return _cpu() - cpu, time.perf_counter() - wall, value


def _one_run(archive: Path, work: Path) -> dict[str, float]:
    floor_cpu, floor_wall, _ = _timed(lambda: floor(archive))
    spec = SourceSpec(location=str(archive), kind="auto")
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    (work / "bench.db").unlink(missing_ok=True)
    with Store.open(f"sqlite:///{work / 'bench.db'}") as store:
        first_cpu, first_wall, first = _timed(
            lambda: ingest_source(store, spec, strict=True, cache_dir=cache)
        )
        again_cpu, again_wall, _ = _timed(lambda: ingest_source(store, spec, cache_dir=cache))
    saved = getattr(first, "saved", None)
    return {
        "floor_cpu_s": floor_cpu,
        "floor_wall_s": floor_wall,
        "ingest_cpu_s": first_cpu,
        "ingest_wall_s": first_wall,
        "reingest_cpu_s": again_cpu,
        "reingest_wall_s": again_wall,
        "ratio_cpu": first_cpu / floor_cpu,
        "ratio_wall": first_wall / floor_wall,
        "reingest_ratio_cpu": again_cpu / first_cpu,
        "results_stored": float(saved.results_stored if saved else 0),
    }


def main() -> None:
    """Build the archive, run the measures ``--runs`` times, print and write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0: the size of v6.0")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (medians reported)")
    parser.add_argument("--archive", type=Path, help="keep the built archive here for later runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        archive = args.archive or work / "round.tar.gz"
        build_s = 0.0
        if not archive.is_file():
            build_start = time.perf_counter()
            shape = build(archive, args.scale)
            build_s = time.perf_counter() - build_start
        else:
            with tarfile.open(archive) as tar:
                names = tar.getnames()
            shape = {
                "members": len(names),
                "bytes": archive.stat().st_size,
                "floor_members": sum(1 for n in names if _FLOOR_MARK in n),
            }
        runs = [_one_run(archive, work) for _ in range(max(1, args.runs))]
    figures: dict[str, object] = {
        **shape,
        "scale": args.scale,
        "runs": len(runs),
        "build_s": build_s,
        "target_ratio_cpu": TARGET_RATIO,
        "target_reingest_ratio": TARGET_REINGEST,
    }
    for key in runs[0]:
        figures[key] = statistics.median(run[key] for run in runs)
    figures["per_run"] = [{k: round(v, 4) for k, v in run.items()} for run in runs]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for key, value in figures.items():
        if key != "per_run":
            print(f"{key:>24}: {value:.4g}" if isinstance(value, float) else f"{key:>24}: {value}")
    print(
        f"ingest / floor: {figures['ratio_cpu']:.2f}x CPU (target ≤ {TARGET_RATIO}x), "
        f"{figures['ratio_wall']:.2f}x wall; unchanged re-ingest / first: "
        f"{figures['reingest_ratio_cpu']:.2%} CPU (target ≤ {TARGET_REINGEST:.0%})"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
